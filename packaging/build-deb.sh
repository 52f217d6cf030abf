#!/bin/sh
# Builds hev2's Debian source package and its binary packages for each
# architecture given, from this checkout, offline.
#
#   packaging/build-deb.sh VERSION WORKDIR OUTDIR ARCH...
#
# 1. Stages the source tree WORKDIR/hev2-VERSION: the files git tracks
#    (their working-tree content), vendor/ (go mod vendor, from the module
#    cache that `make deps` fills), and debian/ (packaging/debian with a
#    debian/changelog written for VERSION, the version of include/hev2.h).
# 2. Packs hev2_VERSION.orig.tar.xz (everything but debian/, reproducible:
#    sorted, owner 0, mtimes of the last commit) and runs dpkg-source -b:
#    the .dsc and hev2_VERSION-1.debian.tar.xz.
# 3. For each ARCH, unpacks the .dsc afresh into WORKDIR/ARCH (so the
#    binaries are built from exactly the source package) and runs
#    dpkg-buildpackage -us -uc -b, with -a ARCH when it is not this
#    machine's architecture (a cross build).
# 4. Copies the source package's three files and every .deb into OUTDIR.
#
# Build-Depends states Go >= go.mod's go line as golang-go (>= 2:1.26~),
# which Debian bookworm cannot satisfy (its golang-go is 1.19): the
# dependencies are checked here without that one, and the Go on PATH (or
# $GO) builds, after it is shown to be new enough.
set -eu

die() { echo "build-deb: $*" >&2; exit 1; }
[ $# -ge 4 ] || die "usage: $0 VERSION WORKDIR OUTDIR ARCH..."
version=$1 work=$2 out=$3
shift 3
arches=$*
revision=1
debversion=$version-$revision
top=$(cd "$(dirname "$0")/.." && pwd)
GO=${GO:-go}

command -v dpkg-buildpackage >/dev/null || die "dpkg-buildpackage not found (Debian's dpkg-dev)"
command -v "$GO" >/dev/null || die "Go not found ('$GO'): set GO or PATH"
git -C "$top" rev-parse --git-dir >/dev/null 2>&1 ||
	die "$top is not a git checkout: the source package is made of the files git tracks"

# The Go build cache of this machine (the packages' go build would
# otherwise start from an empty one inside each tree, as on a buildd).
GOCACHE=${GOCACHE:-$("$GO" env GOCACHE)}
export GOCACHE

rm -rf "$work"
mkdir -p "$work"
work=$(cd "$work" && pwd)
src=$work/hev2-$version

# 1. the staged source tree
begin=$(date +%s)
epoch=$(git -C "$top" log -1 --format=%ct)
mkdir -p "$src"
git -C "$top" ls-files -z | (cd "$top" && tar --null -T - -cf -) | tar -C "$src" -xf -
(cd "$src" && "$GO" mod vendor) || die "go mod vendor failed: the modules of go.mod must be in the module cache (make deps)"

# Every vendored module has its stanza in debian/copyright.
sed -n 's/^# \([^ ]*\) .*/\1/p' "$src/vendor/modules.txt" | while read -r m; do
	grep -q "^\(Files:\)\? *vendor/$m/\*\$" "$top/packaging/debian/copyright" ||
		die "packaging/debian/copyright has no Files: stanza for vendor/$m/* (a module go mod vendor added)"
done

tar_sorted() { # tar_sorted ARCHIVE DIR: a reproducible .tar.xz of DIR (relative to $work)
	(cd "$work" && tar --sort=name --mtime="@$epoch" --owner=0 --group=0 --numeric-owner \
		--pax-option=exthdr.name=%d/PaxHeaders/%f,delete=atime,delete=ctime \
		--format=pax -cf - "$2") | xz -6 -T1 > "$1"
}
tar_sorted "$work/hev2_$version.orig.tar.xz" "hev2-$version"

cp -r "$top/packaging/debian" "$src/debian"
maintainer=$(sed -n 's/^Maintainer: //p' "$src/debian/control")
{
	echo "hev2 ($debversion) unstable; urgency=medium"
	echo
	echo "  * Upstream release $version: the user-visible changes are in"
	echo "    /usr/share/doc/<package>/changelog.gz (upstream's CHANGELOG.md)."
	echo
	echo " -- $maintainer  $(LC_ALL=C date -u -R -d "@$epoch")"
} > "$src/debian/changelog"

# 2. the source package
(cd "$work" && dpkg-source --compression=xz -b "hev2-$version" >/dev/null)
dsc=$work/hev2_$debversion.dsc
[ -f "$dsc" ] || die "dpkg-source made no $dsc"
echo "build-deb: source package in $(($(date +%s) - begin)) s: $(cd "$work" && echo hev2_*)"

# The build dependencies but Go's, for ARCH (a cross build asks for the
# host architecture's libraries and the build machine's tools).
check_build_deps() {
	deps=$(sed -n 's/^Build-Depends: //p' "$dsc" | tr ',' '\n' | sed 's/^ *//; s/ *$//' |
		grep -v '^golang-go\( \|$\)' | grep . | paste -sd, -)
	(cd "$1" && dpkg-checkbuilddeps -a "$2" -d "$deps") || die "unmet build dependencies for $2 (above)"
}
# Go: the control file's golang-go version is go.mod's go line (major.minor).
need=$(sed -n 's/^go \([0-9.]*\)$/\1/p' "$src/go.mod")
need_minor=$(echo "$need" | cut -d. -f1-2)
golang_dep=$(sed -n 's/^Build-Depends: //p' "$dsc" | tr ',' '\n' | sed 's/^ *//; s/ *$//' | grep '^golang-go ')
[ "$golang_dep" = "golang-go (>= 2:$need_minor~)" ] ||
	die "packaging/debian/control says '$golang_dep'; go.mod's go line is $need: want golang-go (>= 2:$need_minor~)"
have=$("$GO" env GOVERSION | sed 's/^go//')
# sort -V: the older of the two first
[ "$(printf '%s\n%s\n' "$need" "$have" | sort -V | head -1)" = "$need" ] ||
	die "$GO is go$have; go.mod needs go >= $need"
if dpkg-checkbuilddeps -d "$golang_dep" /dev/null >/dev/null 2>&1; then
	echo "build-deb: Build-Depends $golang_dep is met by Debian's golang-go; building with $(command -v "$GO") (go$have)"
else
	echo "build-deb: Build-Depends $golang_dep is not met by an installed Debian package (bookworm's golang-go is 1.19): building with $(command -v "$GO") (go$have), dpkg-buildpackage -d"
fi

# 3. the binary packages, per architecture. No -dbgsym packages: the
# artifacts are the three packages (the library is stripped by its own
# build, so only hev2-tools would have one).
build_arch=$(dpkg --print-architecture)
deb_build_options="${DEB_BUILD_OPTIONS:+$DEB_BUILD_OPTIONS }noautodbgsym"
for arch in $arches; do
	dir=$work/$arch
	mkdir -p "$dir"
	(cd "$dir" && dpkg-source --no-check -x "$dsc" "hev2-$version" >/dev/null)
	check_build_deps "$dir/hev2-$version" "$arch"
	# A cross build: the host's compiler, and no tests (the arm64 packages
	# are tested under qemu by test-dist-deb).
	set -- GO="$GO" DEB_BUILD_OPTIONS="$deb_build_options"
	host_flag=""
	if [ "$arch" != "$build_arch" ]; then
		host_flag="--host-arch=$arch"
		set -- GO="$GO" DEB_BUILD_OPTIONS="$deb_build_options nocheck" \
			CC="$(dpkg-architecture -a"$arch" -qDEB_HOST_GNU_TYPE 2>/dev/null)-gcc"
	fi
	start=$(date +%s)
	(cd "$dir/hev2-$version" && env "$@" dpkg-buildpackage -us -uc -b --no-check-builddeps ${host_flag:+"$host_flag"}) \
		> "$dir/build.log" 2>&1 || { tail -40 "$dir/build.log"; die "dpkg-buildpackage for $arch failed (log: $dir/build.log)"; }
	echo "build-deb: $arch built in $(($(date +%s) - start)) s: $(cd "$dir" && echo *.deb)"
done

# 4. the artifacts
mkdir -p "$out"
cp "$dsc" "$work/hev2_$version.orig.tar.xz" "$work/hev2_$debversion.debian.tar.xz" "$out/"
for arch in $arches; do
	cp "$work/$arch/"*.deb "$out/"
done
