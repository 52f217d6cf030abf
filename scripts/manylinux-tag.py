#!/usr/bin/python3
"""Prints the manylinux platform tag a shared library qualifies for.

    scripts/manylinux-tag.py [-v] LIBRARY      ->  manylinux_2_34_x86_64

The rule is PEP 600's, as auditwheel applies it: a library may need only
the libraries every glibc system has (libc, libpthread, libdl, libm and the
dynamic loader), and the newest GLIBC_2.N symbol version it needs gives
manylinux_2_N. Anything else (another DT_NEEDED library, GLIBC_PRIVATE, a
version of another name) fails with one line saying what and why.

The ELF file is read here with the standard library, through its program
headers and dynamic segment as the dynamic loader reads it (so a library
stripped of section headers reads the same): DT_NEEDED for the libraries,
DT_VERNEED for the versions needed of each. Reading the structures rather
than readelf's text needs no binutils and no parsing of a display format.
"""

from __future__ import annotations

import re
import struct
import sys

# The libraries PEP 600 lets a manylinux wheel need from the system.
ALLOWED = re.compile(r"^(libc\.so\.6|libpthread\.so\.0|libdl\.so\.2|libm\.so\.6|ld-linux[-a-z0-9_]*\.so\.[0-9]+)$")
GLIBC_VERSION = re.compile(r"^GLIBC_([0-9]+)\.([0-9]+)(?:\.[0-9]+)?$")

# e_machine -> the architecture name of the platform tag (uname -m).
MACHINES = {62: "x86_64", 183: "aarch64", 3: "i686", 40: "armv7l", 21: "ppc64le", 22: "s390x"}

PT_LOAD, PT_DYNAMIC = 1, 2
DT_NULL, DT_NEEDED, DT_STRTAB, DT_STRSZ = 0, 1, 5, 10
DT_VERNEED, DT_VERNEEDNUM = 0x6FFFFFFE, 0x6FFFFFFF


class NotManylinux(Exception):
    """The library cannot carry a manylinux tag; the message says why."""


class Elf:
    """The parts of an ELF shared library the tag depends on."""

    def __init__(self, data: bytes, path: str) -> None:
        if data[:4] != b"\x7fELF":
            raise NotManylinux(f"{path}: not an ELF file")
        cls, order = data[4], data[5]
        if cls not in (1, 2) or order not in (1, 2):
            raise NotManylinux(f"{path}: unknown ELF class {cls} or byte order {order}")
        self.data, self.path = data, path
        self.wide = cls == 2
        self.end = "<" if order == 1 else ">"
        (self.machine,) = self.unpack("H", 18)
        if self.wide:
            phoff, phentsize, phnum = self.unpack("Q", 32)[0], *self.unpack("HH", 54)
        else:
            phoff, phentsize, phnum = self.unpack("I", 28)[0], *self.unpack("HH", 42)
        self.segments = [self.segment(phoff + i * phentsize) for i in range(phnum)]

    def unpack(self, fmt: str, offset: int) -> tuple[int, ...]:
        return struct.unpack_from(self.end + fmt, self.data, offset)

    def segment(self, at: int) -> tuple[int, int, int, int]:
        """(p_type, p_offset, p_vaddr, p_filesz) of the program header at `at`."""
        if self.wide:
            p_type, _flags, offset, vaddr, _paddr, filesz = self.unpack("IIQQQQ", at)
        else:
            p_type, offset, vaddr, _paddr, filesz = self.unpack("IIIII", at)
        return p_type, offset, vaddr, filesz

    def file_offset(self, vaddr: int) -> int:
        """Where the loaded address vaddr comes from in the file."""
        for p_type, offset, start, filesz in self.segments:
            if p_type == PT_LOAD and start <= vaddr < start + filesz:
                return offset + vaddr - start
        raise NotManylinux(f"{self.path}: address {vaddr:#x} is in no loaded segment")

    def dynamic(self) -> list[tuple[int, int]]:
        """The dynamic segment's (tag, value) entries."""
        found = [(offset, size) for p_type, offset, _v, size in self.segments if p_type == PT_DYNAMIC]
        if not found:
            raise NotManylinux(f"{self.path}: no dynamic segment (a static executable, not a shared library)")
        offset, size = found[0]
        fmt, step = ("qQ", 16) if self.wide else ("iI", 8)
        entries = []
        for at in range(offset, offset + size, step):
            tag, value = self.unpack(fmt, at)
            if tag == DT_NULL:
                break
            entries.append((tag, value))
        return entries

    def needs(self) -> tuple[list[str], dict[str, list[str]]]:
        """DT_NEEDED's libraries, and the symbol versions needed of each."""
        dyn = self.dynamic()
        tags = dict(dyn)
        if DT_STRTAB not in tags:
            raise NotManylinux(f"{self.path}: no dynamic string table")
        strtab = self.file_offset(tags[DT_STRTAB])

        def string(at: int) -> str:
            start = strtab + at
            return self.data[start : self.data.index(b"\0", start)].decode()

        needed = [string(value) for tag, value in dyn if tag == DT_NEEDED]
        versions: dict[str, list[str]] = {}
        if DT_VERNEED in tags:
            at = self.file_offset(tags[DT_VERNEED])
            for _ in range(tags.get(DT_VERNEEDNUM, 0)):
                _ver, count, file, aux, following = self.unpack("HHIII", at)
                names = versions.setdefault(string(file), [])
                where = at + aux
                for _ in range(count):
                    _hash, _flags, _other, name, next_aux = self.unpack("IHHII", where)
                    names.append(string(name))
                    where += next_aux
                at += following
        return needed, versions


def manylinux_tag(path: str) -> tuple[str, str]:
    """(tag, a one-line account) for the library at path; NotManylinux if none."""
    with open(path, "rb") as f:
        elf = Elf(f.read(), path)
    arch = MACHINES.get(elf.machine)
    if arch is None:
        raise NotManylinux(f"{path}: ELF machine {elf.machine} has no manylinux architecture here")
    needed, versions = elf.needs()
    outside = [lib for lib in needed if not ALLOWED.match(lib)]
    if outside:
        raise NotManylinux(
            f"{path}: needs {', '.join(outside)}, outside the manylinux allow-list "
            "(libc, libpthread, libdl, libm, ld-linux-*): a wheel cannot count on it being installed"
        )
    newest = (0, 0)
    for lib, names in versions.items():
        for name in names:
            m = GLIBC_VERSION.match(name)
            if m is None:
                raise NotManylinux(f"{path}: needs symbol version {name} of {lib}; manylinux allows only GLIBC_2.N versions")
            newest = max(newest, (int(m.group(1)), int(m.group(2))))
    if newest == (0, 0):
        raise NotManylinux(f"{path}: needs no GLIBC_ symbol version, so no glibc baseline can be read from it")
    if newest[0] != 2:
        raise NotManylinux(f"{path}: needs GLIBC_{newest[0]}.{newest[1]}; manylinux tags name glibc 2.N")
    tag = f"manylinux_2_{newest[1]}_{arch}"
    account = f"{path}: {arch}, needs {', '.join(needed)}; newest symbol version GLIBC_2.{newest[1]} -> {tag}"
    return tag, account


def main(argv: list[str]) -> int:
    verbose = "-v" in argv
    args = [a for a in argv if a != "-v"]
    if len(args) != 1 or args[0].startswith("-"):
        print("usage: manylinux-tag.py [-v] LIBRARY", file=sys.stderr)
        return 2
    try:
        tag, account = manylinux_tag(args[0])
    except (NotManylinux, OSError) as e:
        print(f"manylinux-tag: {e}", file=sys.stderr)
        return 1
    except (struct.error, ValueError) as e:  # a table pointing past the file's end, a string without its NUL
        print(f"manylinux-tag: {args[0]}: malformed ELF file ({e})", file=sys.stderr)
        return 1
    if verbose:
        print(account, file=sys.stderr)
    print(tag)
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
