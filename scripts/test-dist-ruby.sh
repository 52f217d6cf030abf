#!/bin/sh
# The gems of `make dist-ruby` installed and used the way their users do,
# on each Ruby given (`make test-dist-ruby`):
#
#   scripts/test-dist-ruby.sh DIST_DIR VERSION RUBY...
#
# Every install and use runs from /, in an environment holding only PATH,
# HOME, LANG, GEM_HOME and GEM_PATH (a scratch GEM_HOME and HOME under
# mktemp; no HEV2_LIBRARY, no RUBYLIB, no checkout on any path; the Ruby
# that checks the use reads its script on stdin). Per Ruby:
#   - the x86_64-linux gem: gem install --local of the file with no Go on
#     PATH; Hev2.tcp, and Socket.tcp and TCPSocket.new after hev2/replace,
#     to a loopback listener on a port the kernel chose; its C extension
#     built at install and used; installed again with no C compiler on
#     PATH: the same use without the extension
#   - the source gem (platform ruby) with no `go` on PATH: the install fails
#     with the one line saying Go is needed, and nothing is installed; the
#     same with a `go` older than go.mod's
#   - the source gem with Go on PATH: it builds libhev2.so from the modules
#     it vendors (GOMODCACHE an empty directory that stays empty; Go's build
#     cache, GOCACHE, is the caller's, so a second build is quick), then the
#     same use as above
#   - the aarch64-linux gem, which RubyGems installs when its file is named
#     (it does not check a named file's platform) but which is not usable
#     here: `require "hev2"` raises Hev2::LibraryError naming the library's
#     architecture, and no library is loaded; and from an index holding all
#     three gems RubyGems chooses x86_64-linux
# Once: every gem's specification and files (bindings/ruby/test/dist/
# check_gems.rb), and each platform gem's library: an ELF of its
# architecture with the SONAME libhev2.so.MAJOR exporting hev2_version.
# Prints how long each install takes. GO names the go command.
set -eu

[ $# -ge 3 ] || { echo "usage: $0 DIST_DIR VERSION RUBY..." >&2; exit 2; }
dist=$(cd "$1" && pwd) version=$2
shift 2
checkout=$(pwd)
smoke=$checkout/bindings/ruby/test/dist/gem_smoke.rb
GO=${GO:-go}
go_bin=$(command -v "$GO") || { echo "test-dist-ruby: no $GO on PATH" >&2; exit 1; }
go_dir=$(dirname "$go_bin")
gocache=$("$GO" env GOCACHE)
go_needed=$(sed -n 's/^go //p' go.mod)
major=${version%%.*}
x86_gem=$dist/hev2-$version-x86_64-linux.gem
arm_gem=$dist/hev2-$version-aarch64-linux.gem
src_gem=$dist/hev2-$version.gem
# PATH without Go (the platform gems need none; the source gem's failure).
plain_path=/usr/bin:/bin
if PATH=$plain_path command -v go >/dev/null; then
	echo "test-dist-ruby: a go is on $plain_path: the install without Go cannot be tested" >&2
	exit 1
fi

scratch=$(mktemp -d)
trap 'rm -rf "$scratch"' EXIT

fail() {
	echo "test-dist-ruby: $*" >&2
	exit 1
}

now_ms() {
	echo $(($(date +%s%N) / 1000000))
}

# Runs the rest of the line from / in the users' environment for GEM_HOME $1
# (HOME beside it), with PATH $2.
as_user() {
	home=$1 path=$2
	shift 2
	mkdir -p "$home" "$home.home"
	(cd / && env -i PATH="$path" HOME="$home.home" LANG=C.UTF-8 GEM_HOME="$home" GEM_PATH="$home" "$@")
}

# The gem installed in GEM_HOME $1 used by Ruby $r: it must be the gem of
# platform $2, with its C extension when $3 is 1, without it when 0.
use() {
	as_user "$1" "$plain_path" HEV2_EXPECT_PLATFORM="$2" HEV2_EXPECT_EXT="$3" HEV2_CHECKOUT="$checkout" "$r" - <"$smoke"
}

# A PATH with make and what its recipes run, and no C compiler: the
# C extension cannot be built, the gem installs without it.
mkdir -p "$scratch/no-cc"
for t in make sh rm; do
	ln -s "$(command -v "$t")" "$scratch/no-cc/$t"
done
# A go too old for go.mod.
mkdir -p "$scratch/old-go"
printf '#!/bin/sh\n[ "$*" = "env GOVERSION" ] && echo go1.21.0\n' >"$scratch/old-go/go"
chmod +x "$scratch/old-go/go"

# ---- without installing: the specifications, files and libraries --------
"$1" "$checkout/bindings/ruby/test/dist/check_gems.rb" "$dist" "$version"
for arch in x86_64:"Advanced Micro Devices X86-64" aarch64:AArch64; do
	gem=$dist/hev2-$version-${arch%%:*}-linux.gem
	lib=$scratch/libhev2-${arch%%:*}.so
	tar -xOf "$gem" data.tar.gz | tar -xzOf - lib/hev2/native/libhev2.so >"$lib"
	header=$(readelf -h "$lib")
	echo "$header" | grep -q "Class: *ELF64" || fail "${gem##*/}: the library is not ELF64"
	echo "$header" | grep -q "Machine: *${arch#*:}\$" ||
		fail "${gem##*/}: the library's machine is $(echo "$header" | sed -n 's/^ *Machine: *//p'), not ${arch#*:}"
	readelf -d "$lib" | grep -q "Library soname: \[libhev2.so.$major\]" || fail "${gem##*/}: SONAME is not libhev2.so.$major"
	readelf --dyn-syms -W "$lib" | grep -Eq ' hev2_version(@@HEV2_[0-9.]+)?$' || fail "${gem##*/}: the library exports no hev2_version"
	echo "test-dist-ruby: ${gem##*/}: lib/hev2/native/libhev2.so is ELF64 ${arch#*:}, SONAME libhev2.so.$major, $(stat -c %s "$lib") bytes"
done

# An index as a gem server has (gem generate_index; Ruby 3.1's RubyGems
# has the command, 3.4's moved it to another gem), for RubyGems' choice.
mkdir -p "$scratch/repo/gems"
cp "$x86_gem" "$arm_gem" "$src_gem" "$scratch/repo/gems/"
as_user "$scratch/index-home" "$plain_path" /usr/bin/gem generate_index --quiet -d "$scratch/repo" >/dev/null

for r in "$@"; do
	v=$("$r" -e 'print RUBY_VERSION') || fail "$r does not run"
	gem=$(dirname "$r")/gem
	echo "== test-dist-ruby on Ruby $v ($r)"
	run=$scratch/$v

	# The x86_64-linux gem, with no Go anywhere on PATH.
	t=$(now_ms)
	as_user "$run/x86" "$plain_path" "$r" "$gem" install --local --no-document --quiet "$x86_gem" >/dev/null
	echo "test-dist-ruby: ${x86_gem##*/} installed in $(($(now_ms) - t)) ms (its C extension compiled)"
	use "$run/x86" x86_64-linux 1

	# The same without a C compiler on PATH.
	t=$(now_ms)
	as_user "$run/x86-nocc" "$scratch/no-cc" "$r" "$gem" install --local --no-document --quiet "$x86_gem" >/dev/null
	echo "test-dist-ruby: ${x86_gem##*/} installed with no C compiler in $(($(now_ms) - t)) ms"
	use "$run/x86-nocc" x86_64-linux 0

	# The source gem without Go: one clear line, nothing installed.
	want="hev2: building libhev2.so from source needs Go $go_needed or newer (go.mod) and no \`go\` is on PATH; install it, or install a platform gem of hev2"
	t=$(now_ms)
	if out=$(as_user "$run/nogo" "$plain_path" "$r" "$gem" install --local --no-document "$src_gem" 2>&1); then
		fail "${src_gem##*/} installed with no go on PATH"
	fi
	echo "$out" | grep -qF "$want" || { echo "$out" >&2; fail "${src_gem##*/} without Go failed without the line: $want"; }
	if as_user "$run/nogo" "$plain_path" "$r" "$gem" list --installed hev2 >/dev/null; then
		fail "${src_gem##*/} without Go: hev2 is listed as installed"
	fi
	echo "test-dist-ruby: ${src_gem##*/} without Go refused in $(($(now_ms) - t)) ms: $(echo "$out" | grep -F "$want")"

	# The source gem with a Go older than go.mod's.
	want="hev2: building libhev2.so from source needs Go $go_needed or newer (go.mod) and $scratch/old-go/go is go1.21.0; install it"
	if out=$(as_user "$run/oldgo" "$scratch/old-go:$plain_path" "$r" "$gem" install --local --no-document "$src_gem" 2>&1); then
		fail "${src_gem##*/} installed with go1.21.0"
	fi
	echo "$out" | grep -qF "$want" || { echo "$out" >&2; fail "${src_gem##*/} with an old Go failed without the line: $want"; }
	echo "test-dist-ruby: ${src_gem##*/} with go1.21.0 refused: $(echo "$out" | grep -F "$want")"

	# The source gem with Go: libhev2.so built from the vendored modules.
	mkdir -p "$run/modcache"
	t=$(now_ms)
	as_user "$run/src" "$go_dir:$plain_path" GOCACHE="$gocache" GOMODCACHE="$run/modcache" \
		"$r" "$gem" install --local --no-document --quiet "$src_gem" >/dev/null
	echo "test-dist-ruby: ${src_gem##*/} installed in $(($(now_ms) - t)) ms (libhev2.so built with $("$GO" env GOVERSION), C extension compiled)"
	[ -z "$(ls -A "$run/modcache")" ] || fail "${src_gem##*/}: the install wrote to the module cache: it did not build from its vendored modules"
	use "$run/src" ruby 1

	# The aarch64-linux gem on x86_64: RubyGems (3.3 and 3.6) installs a
	# .gem file named on the command line whatever its platform, and
	# `require "hev2"` then loads its Ruby files (only `gem "hev2"` refuses
	# it); the gem's library loader refuses the aarch64 library with
	# Hev2::LibraryError (a LoadError) saying what it is.
	t=$(now_ms)
	as_user "$run/arm" "$plain_path" "$r" "$gem" install --local --no-document --quiet "$arm_gem" >/dev/null ||
		fail "RubyGems refused ${arm_gem##*/} named by its file: update what this script and docs/install.md say"
	out=$(as_user "$run/arm" "$plain_path" "$r" -e '
		begin
		  require "hev2"
		  print "loaded ", Hev2.library[:path]
		rescue LoadError => e
		  print e.class, ": ", e.message.lines.first.strip
		  native = e.message.lines.grep(%r{lib/hev2/native/}).first
		  print " ", native.strip.sub(/\A.*?\(/, "(") if native
		end')
	case $out in
	"Hev2::LibraryError: hev2: cannot load libhev2.so; tried: ("*"it is a library for aarch64, this Ruby runs on x86_64)")
		how="require \"hev2\" raises $out" ;;
	*) fail "${arm_gem##*/} installed on x86_64: require \"hev2\" gave: $out" ;;
	esac
	echo "test-dist-ruby: ${arm_gem##*/} named by its file: installed in $(($(now_ms) - t)) ms, not usable: $how"
	pick=$(as_user "$run/pick" "$plain_path" "$r" "$gem" install --clear-sources --source "file://$scratch/repo/" --explain hev2)
	echo "$pick" | grep -qx " *hev2-$version-x86_64-linux" || fail "from an index of the three gems RubyGems chose: $pick"
	echo "test-dist-ruby: from an index of the three gems RubyGems $("$r" "$gem" --version) chooses hev2-$version-x86_64-linux"
done
echo "test-dist-ruby: the gems installed and used on $# Rubies"
