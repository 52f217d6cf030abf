"""Run by `make package-python` against the wheel installed into a fresh
directory, from /, with HEV2_LIBRARY unset: the installed package must load
the libhev2.so it carries and connect."""

import os
import socket
import sys

import hev2

assert "HEV2_LIBRARY" not in os.environ
site = os.environ["PYTHONPATH"]
path = hev2.library_path()
assert path.startswith(site + os.sep), f"loaded {path}, not the copy installed under {site}"
with socket.socket() as listener:
    listener.bind(("127.0.0.1", 0))
    listener.listen(1)
    port = listener.getsockname()[1]
    with hev2.create_connection(("127.0.0.1", port)) as sock:
        assert sock.getpeername() == ("127.0.0.1", port)
for name in ("py.typed", "libhev2.so"):
    assert os.path.exists(os.path.join(os.path.dirname(hev2.__file__), name)), name
print(f"package-python: installed wheel works (libhev2 {hev2.library_version()} from {path}, python {sys.version.split()[0]})")
