#!/bin/sh
# Makes an arm64 root with Debian's Python in it, for running Python under
# qemu-aarch64-static -L ROOT without installing anything arm64 on the host:
#
#   scripts/arm64-python-sysroot.sh ROOT CROSS_LIBC PYTHON_VERSION [PACKAGE...]
#
# The arm64 .debs of python3.X-minimal, libpython3.X-minimal,
# libpython3.X-stdlib and the PACKAGEs (their libraries) are fetched with
# `apt-get download` (no install: python3.X-minimal:arm64 would replace the
# host's Python) and unpacked with dpkg-deb -x into ROOT; the C library is
# the cross toolchain's (CROSS_LIBC, Debian's libc6-arm64-cross:
# /usr/aarch64-linux-gnu), laid where arm64's dynamic loader looks.
# apt needs arm64 known to dpkg with its package lists fetched: `make deps`
# does that (an arm64 entry of DEB_PACKAGES, scripts/install-deps.sh).
set -eu
[ $# -ge 3 ] || { echo "usage: $0 ROOT CROSS_LIBC PYTHON_VERSION [PACKAGE...]" >&2; exit 2; }
root=$1 libc=$2 version=$3
shift 3

dpkg --print-foreign-architectures | grep -qx arm64 ||
	{ echo "arm64-python-sysroot: arm64 is not a dpkg architecture here: run make deps (as root)" >&2; exit 1; }
[ -e "$libc/lib/ld-linux-aarch64.so.1" ] ||
	{ echo "arm64-python-sysroot: no $libc/lib/ld-linux-aarch64.so.1: install libc6-arm64-cross (make deps)" >&2; exit 1; }
host_python=$(command -v "python$version") ||
	{ echo "arm64-python-sysroot: no python$version on this host to compile the arm64 Python's library with" >&2; exit 1; }

rm -rf "$root" "$root.debs"
mkdir -p "$root/usr/lib/aarch64-linux-gnu" "$root/etc" "$root.debs"
packages=""
for p in "python$version-minimal" "libpython$version-minimal" "libpython$version-stdlib" "$@"; do
	packages="$packages $p:arm64"
done
# apt-get download writes into the current directory; the _apt user that
# fetches must be able to write there (else apt warns and fetches as root).
chmod 0777 "$root.debs"
# shellcheck disable=SC2086 # one word per package
(cd "$root.debs" && apt-get download -q=2 $packages) ||
	{ echo "arm64-python-sysroot: apt-get download of$packages failed (are arm64's package lists fetched? make deps)" >&2; exit 1; }
for deb in "$root.debs"/*.deb; do
	dpkg-deb -x "$deb" "$root"
done
# /lib is usr/lib, as on Debian 12 (merged /usr): every library is where
# the dynamic loader looks first. qemu -L falls back to the host's file
# when a path is missing from the root, so a library found late could come
# from the host's own arm64 packages instead of this root.
if [ -d "$root/lib" ]; then
	cp -a "$root/lib/." "$root/usr/lib/"
	rm -rf "${root:?}/lib"
fi
ln -s usr/lib "$root/lib"
# The C library's run-time files (not the static ones or the linker scripts).
find "$libc/lib" -maxdepth 1 \( -name '*.so.*' -o -name 'ld-linux-*' \) -exec cp -a {} "$root/usr/lib/aarch64-linux-gnu/" \;
ln -sf aarch64-linux-gnu/ld-linux-aarch64.so.1 "$root/usr/lib/ld-linux-aarch64.so.1"
# An empty cache: the loader searches its own directories rather than
# reading the host's /etc/ld.so.cache (whose entries name host paths).
: >"$root/etc/ld.so.cache"
[ -x "$root/usr/bin/python$version" ] || { echo "arm64-python-sysroot: no usr/bin/python$version in $root" >&2; exit 1; }
# Debian compiles the standard library when the package is installed; an
# unpacked one has only sources, and compiling each module at every start
# under emulation costs seconds. Bytecode is the same on every
# architecture, so the host's Python of the same version compiles it.
"$host_python" -m compileall -q -j0 -x '/(test|idlelib|tkinter|lib2to3|turtledemo)/' "$root/usr/lib/python$version" >/dev/null
echo "arm64-python-sysroot: $root: Python $version and $(find "$root.debs" -name '*.deb' | wc -l) packages, $(du -sh "$root" | cut -f1)"
