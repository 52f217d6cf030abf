"""The rule of each kind of option, once: Python's type checks (a wrong type
raises the TypeError a Python user expects, naming the argument; what
Python itself converts raises what Python raises for it) and the conversion
to the C ABI's units. Whether a value makes sense is the library's rule
(see _options). The generated _options_gen ties each plain option of
include/hev2.h to its kind here; the hand-written options use them too.

Imported by ``import hev2``: the standard library's math only.
"""

from __future__ import annotations

import math

TYPE_CHECKING = False  # typing.TYPE_CHECKING without importing typing (mypy knows the name)
if TYPE_CHECKING:
    from typing import Any

# The range of the ABI's int fields.
INT_MIN, INT_MAX = -(2**31), 2**31 - 1


def seconds(name: str, value: Any) -> float | None:
    """A duration argument in seconds (its range is the library's rule)."""
    if value is None:
        return None
    if isinstance(value, bool) or not isinstance(value, (int, float)):
        raise TypeError(f"{name} must be a number of seconds or None, not {type(value).__name__}")
    value = float(value)
    if math.isnan(value):
        # What Python raises for a NaN time (socket.settimeout, time.sleep).
        raise ValueError(f"{name}: Invalid value NaN (not a number)")
    return value


def flag(name: str, value: Any) -> bool:
    if not isinstance(value, bool):
        raise TypeError(f"{name} must be True or False, not {type(value).__name__}")
    return value


def c_int(name: str, value: Any) -> int:
    """An int for a C int field, saturated: a value out of any range stays
    out of range (the library refuses it) rather than wrapping around into
    one."""
    if isinstance(value, bool) or not isinstance(value, int):
        raise TypeError(f"{name} must be an int, not {type(value).__name__}")
    return max(INT_MIN, min(value, INT_MAX))


def integer(name: str, value: Any) -> int | None:
    """An int option: c_int, or None when not given (the library's default)."""
    return None if value is None else c_int(name, value)


def milliseconds(value: float | None, *, zero_to_1ms: bool = False) -> int:
    """Seconds to the ABI's milliseconds (None: 0), for a C int. A positive
    value never becomes 0, which the ABI reads as "none" (timeouts) or "the
    default" (delays), nor does a negative one (the library refuses it);
    zero_to_1ms makes an explicit 0 the smallest delay instead. Saturated:
    what is too large for an int stays too large (INT_MAX), for the library
    to refuse as such, instead of wrapping around."""
    if value is None:
        return 0
    if math.isinf(value):
        return INT_MAX if value > 0 else INT_MIN
    ms = math.ceil(value * 1000)
    if value > 0 or (value == 0 and zero_to_1ms):
        ms = max(ms, 1)
    elif value < 0:
        ms = min(ms, -1)
    return max(INT_MIN, min(ms, INT_MAX))
