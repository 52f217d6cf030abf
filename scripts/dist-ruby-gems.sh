#!/bin/sh
# Builds the three gems of `make dist-ruby` from bindings/ruby/hev2.gemspec,
# each in a staging copy of bindings/ruby:
#
#   hev2-VERSION-x86_64-linux.gem   with the amd64 libhev2.so inside
#   hev2-VERSION-aarch64-linux.gem  with the arm64 libhev2.so inside
#   hev2-VERSION.gem                (platform ruby) with the library's Go
#                                   module, its dependencies vendored, built
#                                   at install by ext/libhev2/extconf.rb
#
#   scripts/dist-ruby-gems.sh OUT_DIR STAGE_DIR AMD64_LIB ARM64_LIB
#
# Run from the top of the tree. GO and GEM name the go and gem commands.
# Offline: `go mod vendor` reads the module cache (`make deps` fills it) and
# checks it against go.sum. SOURCE_DATE_EPOCH (default: the last commit's
# time) dates the gems' files, so that a rebuild gives the same bytes.
set -eu

[ $# = 4 ] || { echo "usage: $0 OUT_DIR STAGE_DIR AMD64_LIB ARM64_LIB" >&2; exit 2; }
out=$1 stage=$2 amd64_lib=$3 arm64_lib=$4
GO=${GO:-go}
GEM=${GEM:-gem}
for f in "$amd64_lib" "$arm64_lib"; do
	[ -f "$f" ] || { echo "dist-ruby-gems: $f is missing (make capi-lib capi-lib-arm64)" >&2; exit 1; }
done
if [ -z "${SOURCE_DATE_EPOCH:-}" ]; then
	SOURCE_DATE_EPOCH=$(git log -1 --format=%ct 2>/dev/null) ||
		{ echo "dist-ruby-gems: not a git checkout: set SOURCE_DATE_EPOCH" >&2; exit 1; }
fi
export SOURCE_DATE_EPOCH

rm -rf "$stage"
mkdir -p "$stage/base/ext" "$stage/base/licenses" "$out"
out=$(cd "$out" && pwd)

# What every gem carries: the Ruby code, the C extension's source, the
# changes, and the licences of what libhev2.so links in (the Go runtime and
# the modules of `go list -deps ./capi`) beside the gem's own.
cp -r bindings/ruby/hev2.gemspec bindings/ruby/README.md bindings/ruby/lib CHANGELOG.md "$stage/base/"
cp -r bindings/ruby/ext/hev2_wait "$stage/base/ext/"
rm -rf "$stage/base/lib/hev2/native"
mkdir -p "$stage/base/licenses/go"
cp "$("$GO" env GOROOT)/LICENSE" "$stage/base/licenses/go/LICENSE"
GOFLAGS=-mod=mod GOPROXY=off "$GO" list -deps -f '{{with .Module}}{{if not .Main}}{{.Path}} {{.Dir}}{{end}}{{end}}' ./capi |
	sort -u | while read -r path dir; do
		[ -n "$path" ] || continue
		mkdir -p "$stage/base/licenses/$path"
		found=0
		for l in "$dir"/LICENSE* "$dir"/COPYING* "$dir"/NOTICE*; do
			[ -f "$l" ] && cp "$l" "$stage/base/licenses/$path/" && found=1
		done
		[ $found = 1 ] || { echo "dist-ruby-gems: module $path has no LICENSE file in $dir" >&2; exit 1; }
	done

build_gem() { # PLATFORM DIR: gem build in DIR (it names the file), the .gem moved to $out
	(cd "$2" && HEV2_GEM_PLATFORM=$1 "$GEM" build --quiet hev2.gemspec) >/dev/null
	for g in "$2"/*.gem; do
		mv "$g" "$out/"
		echo "dist-ruby-gems: $out/${g##*/}"
	done
}

# The platform gems: the library as lib/hev2/library.rb finds it.
for arch in x86_64:"$amd64_lib" aarch64:"$arm64_lib"; do
	d=$stage/${arch%%:*}-linux
	cp -r "$stage/base" "$d"
	mkdir -p "$d/lib/hev2/native"
	cp "${arch#*:}" "$d/lib/hev2/native/libhev2.so"
	build_gem "${arch%%:*}-linux" "$d"
done

# The source gem: the packages libhev2.so is built from (no tests, no test
# data), go.mod and go.sum as they are, and `go mod vendor` of that copy,
# which vendors exactly the packages those import (every architecture's
# files: the gem builds wherever Go does).
d=$stage/ruby
cp -r "$stage/base" "$d"
m=$d/ext/libhev2/go
mkdir -p "$m/include"
cp bindings/ruby/ext/libhev2/extconf.rb "$d/ext/libhev2/"
cp go.mod go.sum "$m/"
cp include/hev2.h "$m/include/"
tar -cf - --exclude='*_test.go' --exclude=testdata capi core internal | tar -xf - -C "$m"
(cd "$m" && GOFLAGS=-mod=mod GOPROXY=off "$GO" mod vendor)
# The copy must build from what it carries alone.
(cd "$m" && GOFLAGS=-mod=vendor GOPROXY=off "$GO" list ./capi >/dev/null)
build_gem ruby "$d"
