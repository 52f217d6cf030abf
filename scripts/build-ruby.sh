#!/bin/sh
# Builds the pinned Ruby 3.4 from Debian's `ruby3.4` source package (suite
# `experimental`; its .orig tarball is the upstream release) into a cache
# outside the clone, once: a prefix that holds the stamp file is reused as is.
#
#   scripts/build-ruby.sh            # builds if needed; prints the ruby's path
#   scripts/build-ruby.sh --print    # only prints where that ruby is (or will be)
#   HEV2_CACHE=/some/dir scripts/build-ruby.sh
#
# On success the last line of stdout is the path of the built `ruby`.
# Needs root to install missing build dependencies (apt-get) and to write
# /var/cache/hev2. The machine's apt configuration is never changed: the
# experimental deb-src entry lives in a sources file and a package-list
# directory of this script's own, both removed on exit.
set -eu

RUBY_DEB_VERSION=3.4.5-1~exp1
RUBY_UPSTREAM_VERSION=3.4.5
RUBY_ORIG=ruby3.4_${RUBY_UPSTREAM_VERSION}.orig.tar.xz
RUBY_ORIG_SHA256=141fb3b0192b8196361b3b4d6c29fc9b10c0798dbe54ada1539d9f1c311bfcbf
DEBIAN_MIRROR=${DEBIAN_MIRROR:-http://deb.debian.org/debian}
BUILD_DEPS="build-essential libssl-dev libyaml-dev libffi-dev zlib1g-dev libreadline-dev libgdbm-dev autoconf bison pkg-config xz-utils"

HEV2_CACHE=${HEV2_CACHE:-/var/cache/hev2}
PREFIX=${RUBY_PREFIX:-$HEV2_CACHE/ruby-$RUBY_UPSTREAM_VERSION}
STAMP=$PREFIX/.hev2-ruby-built
LOG=$HEV2_CACHE/ruby-$RUBY_UPSTREAM_VERSION.build.log
JOBS=${JOBS:-$(nproc 2>/dev/null || echo 2)}

here=$(cd "$(dirname "$0")" && pwd)
say() { echo "build-ruby: $*" >&2; }
die() { echo "build-ruby: ERROR: $*" >&2; exit 1; }

if [ "${1:-}" = --print ]; then
	echo "$PREFIX/bin/ruby"
	exit 0
fi
[ $# = 0 ] || die "usage: $0 [--print]"

stamp_ok() {
	[ -f "$STAMP" ] && [ -x "$PREFIX/bin/ruby" ] &&
		grep -qx "$RUBY_DEB_VERSION $RUBY_ORIG_SHA256" "$STAMP"
}

if stamp_ok; then
	echo "$PREFIX/bin/ruby"
	exit 0
fi

mkdir -p "$HEV2_CACHE" || die "cannot create $HEV2_CACHE (run as root, or set HEV2_CACHE)"

# One build at a time (two make runs may both want it).
if command -v flock >/dev/null 2>&1 && [ -z "${HEV2_RUBY_LOCKED:-}" ]; then
	HEV2_RUBY_LOCKED=1 exec flock "$HEV2_CACHE/ruby-$RUBY_UPSTREAM_VERSION.lock" "$0" "$@"
fi
if stamp_ok; then # built by the run we waited for
	echo "$PREFIX/bin/ruby"
	exit 0
fi

say "Ruby $RUBY_DEB_VERSION is not in $PREFIX yet: building it (about 10 minutes on 2 cores)"
say "build log: $LOG"

# --- build dependencies ---
# shellcheck disable=SC2086 # a list of words
"$here/install-deps.sh" $BUILD_DEPS
for p in $BUILD_DEPS; do
	dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "ok installed" ||
		die "build dependency $p is missing (run as root so that apt-get can install it)"
done

work=$(mktemp -d "${TMPDIR:-/tmp}/hev2-ruby-build.XXXXXX")
cleanup() { rm -rf "$work"; }
trap cleanup EXIT
trap 'exit 130' INT TERM
chmod 755 "$work"

# --- the source package, through apt with a private sources file and lists ---
mkdir -p "$work/apt/lists/partial" "$work/apt/cache/archives/partial" "$work/src"
cat >"$work/apt/experimental.sources" <<EOF
Types: deb-src
URIs: $DEBIAN_MIRROR
Suites: experimental
Components: main
Signed-By: /usr/share/keyrings/debian-archive-keyring.gpg
EOF
# apt drops privileges to _apt for downloads: let it write there.
if id _apt >/dev/null 2>&1; then chown -R _apt "$work/apt/lists/partial" "$work/src"; fi
apt_private() {
	apt-get -q \
		-o Dir::Etc::sourcelist="$work/apt/experimental.sources" \
		-o Dir::Etc::sourceparts=/nonexistent \
		-o Dir::State::Lists="$work/apt/lists" \
		-o Dir::Cache="$work/apt/cache" \
		"$@"
}
: >"$LOG"
say "apt-get update (experimental deb-src, private lists)"
apt_private update --error-on=any >>"$LOG" 2>&1 || { tail -n 20 "$LOG" >&2; die "apt-get update of the experimental suite failed"; }
say "apt-get source --download-only ruby3.4=$RUBY_DEB_VERSION"
(cd "$work/src" && apt_private source --download-only "ruby3.4=$RUBY_DEB_VERSION") >>"$LOG" 2>&1 ||
	{ tail -n 20 "$LOG" >&2; die "could not download ruby3.4 $RUBY_DEB_VERSION from $DEBIAN_MIRROR (experimental)"; }

orig=$work/src/$RUBY_ORIG
[ -f "$orig" ] || die "$RUBY_ORIG not among the downloaded files: $(ls "$work/src")"
sum=$(sha256sum "$orig" | cut -d' ' -f1)
if [ "$sum" != "$RUBY_ORIG_SHA256" ]; then
	die "sha256 of $RUBY_ORIG is $sum, the pinned one is $RUBY_ORIG_SHA256: refusing to build (update the pin in $0 only after checking the new tarball)"
fi
say "sha256 of $RUBY_ORIG matches the pin"

# --- configure, make, make install ---
say "unpacking"
tar -xJf "$orig" -C "$work/src"
srcdir=$work/src/ruby-$RUBY_UPSTREAM_VERSION
[ -x "$srcdir/configure" ] || die "no configure in $RUBY_ORIG"

run_logged() {
	step=$1
	shift
	say "$step"
	echo "== $step: $*" >>"$LOG"
	if ! (cd "$srcdir" && "$@") >>"$LOG" 2>&1; then
		echo "---- last 40 lines of $LOG ----" >&2
		tail -n 40 "$LOG" >&2
		die "$step failed (full log: $LOG)"
	fi
}

# A prefix without the stamp is a leftover of an interrupted run.
rm -rf "$PREFIX"
run_logged "configure --prefix=$PREFIX" ./configure --prefix="$PREFIX" --disable-install-doc
run_logged "make -j$JOBS" make -j"$JOBS"
# HAVE_BASERUBY=no: install the bundled gems from the tree instead of fetching them.
run_logged "make install" make install HAVE_BASERUBY=no

# The scheduler Ruby tests its own Fiber hooks with, for the gem's tests.
mkdir -p "$PREFIX/share/hev2-ruby-source/test/fiber"
cp "$srcdir/test/fiber/scheduler.rb" "$PREFIX/share/hev2-ruby-source/test/fiber/"

"$PREFIX/bin/ruby" -e 'require "fiddle"; require "minitest"; require "socket"' >>"$LOG" 2>&1 ||
	{ tail -n 20 "$LOG" >&2; die "the installed Ruby cannot load fiddle/minitest/socket"; }
ver=$("$PREFIX/bin/ruby" -e 'print RUBY_VERSION')
[ "$ver" = "$RUBY_UPSTREAM_VERSION" ] || die "installed ruby reports $ver, expected $RUBY_UPSTREAM_VERSION"

echo "$RUBY_DEB_VERSION $RUBY_ORIG_SHA256" >"$STAMP"
say "Ruby $ver installed in $PREFIX"
echo "$PREFIX/bin/ruby"
