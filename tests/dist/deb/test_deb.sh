#!/bin/sh
# The Debian packages of `make dist-deb`, installed and used as a user
# would, HEV2_LIBRARY unset and no checkout on any path the programs use.
#
#   tests/dist/deb/test_deb.sh VERSION DIST_DIR
#
# Installed with dpkg into a scratch root (dpkg --root: its own admin
# directory, files under the root only), never into this machine's /: the
# packages have no maintainer scripts (checked below) that a chroot would
# have to run, and a private mount namespace over the live / would share
# /var/lib/dpkg with anyone running apt-get meanwhile. The scratch dpkg
# database starts with the status entries of the packages ours depend on
# (libc6), copied from this machine's, so dpkg checks the dependencies for
# real; the programs run against this machine's libc.
#
# amd64: a program built with `pkg-config --cflags --libs hev2` against the
# scratch root connects to a loopback listener (a kernel-chosen port) and
# runs the installed hev2-connect against it; hev2-connect --version; the
# manual page renders and names every option of --help; the symbols file
# matches the library exactly and a missing entry fails dpkg-gensymbols.
# arm64: the same installation (dpkg --add-architecture in the scratch
# database), the files' machine and SONAME, the symbols file against the
# library's exports and capi/hev2.map, then under qemu: the probe built
# with the cross compiler connects, hev2-connect --version, and
# hev2-connect connects to the amd64 probe's listener.
set -eu

[ $# = 2 ] || { echo "usage: $0 VERSION DIST_DIR" >&2; exit 2; }
version=$1 dist=$2
here=$(cd "$(dirname "$0")" && pwd)
top=$(cd "$here/../../.." && pwd)
sysroot=${ARM64_SYSROOT:-/usr/aarch64-linux-gnu}
qemu=${ARM64_QEMU:-qemu-aarch64-static}
unset HEV2_LIBRARY
# Every program run here is bounded (a hang fails the test, not the run);
# the bound leaves room for a loaded machine and qemu's start-up.
bound="timeout 180"

scratch=$(mktemp -d)
trap 'rm -rf "$scratch"' EXIT
fail() { echo "test_deb: FAIL: $*" >&2; exit 1; }
ok() { echo "test_deb: ok: $*"; }

deb() { # deb PACKAGE ARCH: its file in DIST_DIR
	f=$dist/$1_$version-1_$2.deb
	[ -f "$f" ] || fail "$f is missing (make dist-deb)"
	echo "$f"
}

# scratch_root DIR ARCH: DIR with an empty dpkg database knowing ARCH and
# holding this machine's entries for what our packages depend on.
scratch_root() {
	admin=$1/var/lib/dpkg
	mkdir -p "$admin/info" "$admin/updates" "$admin/triggers"
	: > "$admin/status"
	[ "$2" = "$(dpkg --print-architecture)" ] || dpkg --root="$1" --add-architecture "$2"
	for p in libhev2-1 libhev2-dev hev2-tools; do
		dpkg-deb -f "$(deb "$p" "$2")" Pre-Depends Depends | sed 's/^[A-Za-z-]*: //'
	done | sed 's/[,|]/\n/g' | sed 's/(.*//; s/ //g' | grep . | sort -u |
		grep -vx 'libhev2-1\|libhev2-dev\|hev2-tools' | while read -r dep; do
		q=$dep
		[ "$(dpkg-query -W -f='${Multi-Arch}' "$dep:$2" 2>/dev/null)" = same ] && q=$dep:$2
		dpkg-query -s "$q" >> "$admin/status" || fail "$q, a dependency, is not installed here"
		echo >> "$admin/status"
		: > "$admin/info/$q.list"
	done
}

# no_maintainer_scripts DEB: dpkg --root would run them chrooted into a
# root that has no shell.
no_maintainer_scripts() {
	members=$(dpkg-deb --ctrl-tarfile "$1" | tar -t | sed 's|^\./||' | grep . | sort | paste -sd' ' -)
	case " $members " in
	*" preinst "* | *" postinst "* | *" prerm "* | *" postrm "* | *" config "*) fail "$1 has maintainer scripts: $members" ;;
	esac
}

install_into() { # install_into ROOT ARCH
	scratch_root "$1" "$2"
	for p in libhev2-1 libhev2-dev hev2-tools; do no_maintainer_scripts "$(deb "$p" "$2")"; done
	dpkg --root="$1" -i "$(deb libhev2-1 "$2")" "$(deb libhev2-dev "$2")" "$(deb hev2-tools "$2")" \
		> "$scratch/dpkg-$2.log" 2>&1 || { cat "$scratch/dpkg-$2.log"; fail "dpkg -i of the $2 packages"; }
	for p in libhev2-1 libhev2-dev hev2-tools; do
		got=$(dpkg-query --root="$1" -W -f='${Status} ${Version}' "$p:$2")
		[ "$got" = "install ok installed $version-1" ] || fail "$p:$2 in the scratch root: '$got'"
	done
	ok "$2: libhev2-1, libhev2-dev, hev2-tools $version-1 installed by dpkg into a scratch root, dependencies met"
}

# the pkg-config line against ROOT's files (triplet $2), and the probe
# built with it by CC ($3) into $4
build_probe() {
	v=$(PKG_CONFIG_SYSROOT_DIR=$1 PKG_CONFIG_LIBDIR=$1/usr/lib/$2/pkgconfig pkg-config --modversion hev2) ||
		fail "pkg-config finds no hev2 in $1"
	[ "$v" = "$version" ] || fail "pkg-config --modversion hev2: $v, want $version"
	flags=$(PKG_CONFIG_SYSROOT_DIR=$1 PKG_CONFIG_LIBDIR=$1/usr/lib/$2/pkgconfig pkg-config --cflags --libs hev2 | sed 's/ *$//')
	[ "$flags" = "-I$1/usr/include -L$1/usr/lib/$2 -lhev2" ] || fail "pkg-config --cflags --libs hev2: '$flags'"
	# shellcheck disable=SC2086 # the flags are words
	"$3" -std=gnu11 -Wall -Wextra -Werror -o "$4" "$here/probe.c" $flags ||
		fail "$3 probe.c \$(pkg-config --cflags --libs hev2)"
	# the header came from the scratch root
	# shellcheck disable=SC2086
	"$3" -std=gnu11 -M "$here/probe.c" $flags | grep -q "$1/usr/include/hev2.h" || fail "probe.c did not include $1/usr/include/hev2.h"
	ok "$2: pkg-config --cflags --libs hev2 = $flags; probe built with $3"
}

# ---- amd64 -------------------------------------------------------------------
triplet=$(dpkg-architecture -aamd64 -qDEB_HOST_MULTIARCH)
root=$scratch/amd64
install_into "$root" amd64
lib=$root/usr/lib/$triplet
build_probe "$root" "$triplet" cc "$scratch/probe"
out=$(LD_LIBRARY_PATH=$lib $bound "$scratch/probe" "$root/usr/bin/hev2-connect") || { echo "$out"; fail "probe"; }
echo "$out" | sed 's/^/  /'
echo "$out" | grep -q "loaded from $lib/libhev2.so.1\$" || fail "the probe loaded another libhev2"
echo "$out" | grep -q "^connected to 127.0.0.1 port [0-9]* (ipv4)" || fail "hev2-connect's connect line is missing"
ok "amd64: the probe connected to its loopback listener, and so did the installed hev2-connect"
got=$(LD_LIBRARY_PATH=$lib $bound "$root/usr/bin/hev2-connect" --version)
[ "$got" = "hev2-connect $version (libhev2 $version)" ] || fail "hev2-connect --version: '$got'"
ok "amd64: $got"

# The manual page: rendered without a warning, and every long option of
# --help is in it.
man1=$root/usr/share/man/man1/hev2-connect.1.gz
[ -f "$man1" ] || fail "$man1 is missing"
page=$(MANWIDTH=100 LC_ALL=C.UTF-8 man --warnings --nh --nj -l "$man1" 2> "$scratch/man.err") || fail "man -l $man1"
[ ! -s "$scratch/man.err" ] || { cat "$scratch/man.err"; fail "man --warnings complains about hev2-connect.1"; }
echo "$page" | grep -q '^NAME' || fail "the manual page has no NAME section"
options=$(LD_LIBRARY_PATH=$lib $bound "$root/usr/bin/hev2-connect" --help | grep -o -- '--[a-z][a-z-]*' | sort -u)
missing=""
for o in $options; do
	echo "$page" | grep -q -- "$o" || missing="$missing $o"
done
[ -z "$missing" ] || fail "the manual page lacks options of --help:$missing"
ok "amd64: man -l hev2-connect.1 renders without a warning and names all $(echo "$options" | wc -l) options of --help"

# The symbols file is the library's exports exactly; one entry fewer fails
# dpkg-gensymbols at the level debian/rules builds with.
mkdir -p "$scratch/gensym"
dpkg-deb -e "$(deb libhev2-1 amd64)" "$scratch/gensym/control"
dpkg-deb -x "$(deb libhev2-1 amd64)" "$scratch/gensym/pkg"
gensym() { dpkg-gensymbols -c4 -v"$version-1" -plibhev2-1 -P"$scratch/gensym/pkg" -aamd64 -O/dev/null -I"$1" > "$scratch/gensym/out" 2>&1; }
gensym "$scratch/gensym/control/symbols" || { cat "$scratch/gensym/out"; fail "dpkg-gensymbols -c4: the shipped symbols file differs from the library"; }
grep -v ' hev2_connect_wait@' "$scratch/gensym/control/symbols" > "$scratch/gensym/fewer"
if gensym "$scratch/gensym/fewer"; then fail "dpkg-gensymbols -c4 accepted a symbols file without hev2_connect_wait"; fi
grep -q 'some new symbols appeared' "$scratch/gensym/out" || { cat "$scratch/gensym/out"; fail "dpkg-gensymbols failed for another reason"; }
ok "amd64: dpkg-gensymbols -c4 passes with the shipped symbols file and fails without one entry"

# ---- arm64 -------------------------------------------------------------------
triplet64=$(dpkg-architecture -aarm64 -qDEB_HOST_MULTIARCH)
root64=$scratch/arm64
for p in libhev2-1 libhev2-dev hev2-tools; do
	a=$(dpkg-deb -f "$(deb "$p" arm64)" Architecture)
	[ "$a" = arm64 ] || fail "$p arm64's Architecture is $a"
done
install_into "$root64" arm64
lib64=$root64/usr/lib/$triplet64
for f in "$lib64/libhev2.so.$version" "$root64/usr/bin/hev2-connect"; do
	m=$(readelf -h "$f" | sed -n 's/^ *Machine: *//p')
	[ "$m" = AArch64 ] || fail "$f is for '$m'"
done
soname=$(readelf -d "$lib64/libhev2.so.$version" | sed -n 's/.*(SONAME).*\[\(.*\)\]/\1/p')
[ "$soname" = "libhev2.so.${version%%.*}" ] || fail "arm64 SONAME '$soname'"
[ "$(readlink "$lib64/libhev2.so.1")" = "libhev2.so.$version" ] || fail "arm64 libhev2.so.1 link"
[ "$(readlink "$lib64/libhev2.so")" = "libhev2.so.1" ] || fail "arm64 libhev2.so link"
grep -q "^libdir=\${prefix}/lib/$triplet64\$" "$lib64/pkgconfig/hev2.pc" || fail "arm64 hev2.pc's libdir"
ok "arm64: Architecture arm64, AArch64 ELF files, SONAME $soname, links and hev2.pc's libdir"

# The arm64 symbols file: the amd64 one, and name for name the library's
# dynamic exports and capi/hev2.map's (symbol@node).
dpkg-deb -e "$(deb libhev2-1 arm64)" "$scratch/gensym/control64"
cmp -s "$scratch/gensym/control/symbols" "$scratch/gensym/control64/symbols" || fail "the arm64 symbols file differs from amd64's"
sed -n 's/^ \([^ ]*\) .*/\1/p' "$scratch/gensym/control64/symbols" | grep -v '^HEV2_' | sort > "$scratch/sym.file"
readelf --dyn-syms -W "$lib64/libhev2.so.$version" | awk '$5 == "GLOBAL" && $7 != "UND" && $7 != "ABS" { print $8 }' |
	sed 's/@@/@/' | sort > "$scratch/sym.lib"
awk '/^HEV2_[0-9.]* *\{/ { node = $1 } /^[ \t]*hev2_[a-z_0-9]*;/ { gsub(/[ \t;]/, ""); print $0 "@" node }' "$top/capi/hev2.map" | sort > "$scratch/sym.map"
cmp -s "$scratch/sym.file" "$scratch/sym.lib" || { diff "$scratch/sym.file" "$scratch/sym.lib"; fail "arm64: symbols file vs the library's exports"; }
cmp -s "$scratch/sym.file" "$scratch/sym.map" || { diff "$scratch/sym.file" "$scratch/sym.map"; fail "arm64: symbols file vs capi/hev2.map"; }
ok "arm64: the symbols file is amd64's and lists the library's $(wc -l < "$scratch/sym.lib") exports, those of capi/hev2.map"

# Under qemu. The guest's libc is the cross sysroot's, named first on the
# library path: the guest ld.so comes from $sysroot (qemu -L), and a libc
# found through this machine's /etc/ld.so.cache (libc6:arm64, when it is
# installed) is another build of glibc, which hangs in pthread_create
# against that ld.so.
guest_path=$lib64:$sysroot/lib
run64() { $bound "$qemu" -L "$sysroot" -E LD_LIBRARY_PATH="$guest_path" "$@"; }
got=$(run64 "$root64/usr/bin/hev2-connect" --version)
[ "$got" = "hev2-connect $version (libhev2 $version)" ] || fail "arm64 hev2-connect --version: '$got'"
ok "arm64 (qemu): $got"
build_probe "$root64" "$triplet64" "${ARM64_CC:-aarch64-linux-gnu-gcc}" "$scratch/probe64"
out=$(run64 "$scratch/probe64") || { echo "$out"; fail "arm64 probe under qemu"; }
echo "$out" | sed 's/^/  /'
echo "$out" | grep -q "loaded from $lib64/libhev2.so.1\$" || fail "the arm64 probe loaded another libhev2"
out=$(LD_LIBRARY_PATH=$lib $bound "$scratch/probe" "$qemu" -L "$sysroot" -E LD_LIBRARY_PATH="$guest_path" "$root64/usr/bin/hev2-connect") ||
	{ echo "$out"; fail "arm64 hev2-connect against the probe's listener"; }
echo "$out" | grep -q "^connected to 127.0.0.1 port [0-9]* (ipv4)" || fail "arm64 hev2-connect's connect line is missing"
ok "arm64 (qemu): the probe connected to its loopback listener, and the installed hev2-connect to the amd64 probe's"
echo "test_deb: all checks passed"
