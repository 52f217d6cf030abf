#!/bin/sh
# make test-dist-python: the artifacts of make dist-python installed and
# used as their users would, from /, HEV2_LIBRARY and PYTHONPATH unset, in
# scratch directories removed at the end. The environment (mk/dist-python.mk):
#   DIST VERSION CHECKOUT  the artifacts, their version, the checkout (never on a path)
#   PYTHON                 Debian's python3, which makes the venvs
#   GO                     the go command, for the sdist's install with Go
#   QEMU ARM64_ROOT ARM64_PYTHON  qemu-aarch64-static and the arm64 root with Debian's Python
set -eu
: "${DIST:?}" "${VERSION:?}" "${CHECKOUT:?}" "${PYTHON:?}" "${GO:?}" "${QEMU:?}" "${ARM64_ROOT:?}" "${ARM64_PYTHON:?}"
here=$(cd "$(dirname "$0")" && pwd)
tagger=$CHECKOUT/scripts/manylinux-tag.py
scratch=$(mktemp -d /tmp/hev2-test-dist-python.XXXXXX)
trap 'rm -rf "$scratch"' EXIT
# pip's own wheels (pip, setuptools, wheel) as Debian ships them: the only
# index there is, so that nothing is fetched.
wheels=/usr/share/python-wheels
pip_flags="--disable-pip-version-check --no-index --no-cache-dir"
sdist=$DIST/hev2-$VERSION.tar.gz
amd64_wheel=$(find "$DIST" -maxdepth 1 -name "hev2-$VERSION-py3-none-manylinux_2_*_x86_64.whl")
arm64_wheel=$(find "$DIST" -maxdepth 1 -name "hev2-$VERSION-py3-none-manylinux_2_*_aarch64.whl")
cd /
# The scripts run from the scratch directory: a script's own directory is
# the first entry of sys.path, and the checkout must be on none.
cp "$here/check_artifacts.py" "$here/use_installed.py" "$scratch/"
unzip -q "$amd64_wheel" hev2/libhev2.so -d "$scratch/wheel-lib"
wheel_lib=$scratch/wheel-lib/hev2/libhev2.so

step() { printf '%s: %s\n' "test-dist-python" "$*"; }
seconds() { date +%s.%N; }
took() { awk -v a="$1" -v b="$(seconds)" 'BEGIN { printf "%.1f s", b - a }'; }

# A fresh venv at $1 made by Debian's Python (pip and setuptools inside).
venv() {
	"$PYTHON" -m venv "$1"
	site=$("$1/bin/python" -c 'import sysconfig; print(sysconfig.get_path("platlib"))')
}

# --- metadata, and each wheel's tag against its library
t=$(seconds)
"$PYTHON" "$scratch/check_artifacts.py" "$DIST" "$VERSION" "$tagger"
# The tagger refuses a library that needs one outside the allow-list.
printf 'int hev2_version(void);\nint f(void) { return hev2_version(); }\n' >"$scratch/needs.c"
cc -shared -o "$scratch/needs-hev2.so" "$scratch/needs.c" "$wheel_lib"
if out=$("$PYTHON" "$tagger" "$scratch/needs-hev2.so" 2>&1); then
	echo "test-dist-python: manylinux-tag.py accepted a library that needs libhev2.so.1: $out"; exit 1
fi
case "$out" in
*"needs libhev2.so.1, outside the manylinux allow-list"*) step "a library needing libhev2.so.1 is refused: $out" ;;
*) echo "test-dist-python: manylinux-tag.py's refusal does not name the library: $out"; exit 1 ;;
esac
step "artifacts checked in $(took "$t")"

# --- the x86_64 wheel in a fresh venv
t=$(seconds)
venv "$scratch/wheel-venv"
# shellcheck disable=SC2086 # the flags are words
"$scratch/wheel-venv/bin/python" -m pip install -q $pip_flags "$amd64_wheel"
"$scratch/wheel-venv/bin/python" "$scratch/use_installed.py" --site "$site" --version "$VERSION" --checkout "$CHECKOUT"
step "x86_64 wheel: installed with pip into a fresh venv and used in $(took "$t")"

# --- the sdist without Go: one clear line, nothing installed
t=$(seconds)
venv "$scratch/sdist-venv"
nogo_path=$scratch/sdist-venv/bin
for dir in /usr/local/sbin /usr/local/bin /usr/sbin /usr/bin /sbin /bin; do
	[ -x "$dir/go" ] || nogo_path=$nogo_path:$dir
done
if PATH=$nogo_path command -v go >/dev/null; then
	echo "test-dist-python: cannot make a PATH without go"; exit 1
fi
# shellcheck disable=SC2086
if PATH=$nogo_path "$scratch/sdist-venv/bin/python" -m pip install $pip_flags --find-links "$wheels" "$sdist" >"$scratch/nogo.log" 2>&1; then
	echo "test-dist-python: the sdist installed without Go on PATH"; cat "$scratch/nogo.log"; exit 1
fi
line=$(grep -m1 "hev2: building libhev2.so from source needs Go" "$scratch/nogo.log" | sed 's/^ *//') || {
	echo "test-dist-python: installing the sdist without Go failed without saying Go is needed:"; cat "$scratch/nogo.log"; exit 1
}
need=$(sed -n 's/^go //p' "$CHECKOUT/go.mod")
case "$line" in
*"needs Go $need or newer"*"install a hev2 wheel instead"*) ;;
*) echo "test-dist-python: the line does not name Go $need and the wheel: $line"; exit 1 ;;
esac
if "$scratch/sdist-venv/bin/python" -m pip list --disable-pip-version-check | grep -qi '^hev2 ' ||
	"$scratch/sdist-venv/bin/python" -c 'import hev2' 2>/dev/null; then
	echo "test-dist-python: the refused install left hev2 installed"; exit 1
fi
step "sdist without go on PATH: refused in $(took "$t"), saying: $line"

# --- the sdist with Go, in the same venv (as fresh as made: the refused
# install left nothing, checked above): built from its own sources and
# vendored modules (an empty module cache and no proxy: nothing is fetched)
t=$(seconds)
mkdir "$scratch/empty-gomodcache"
# shellcheck disable=SC2086
PATH=$(dirname "$GO"):$scratch/sdist-venv/bin:/usr/sbin:/usr/bin:/sbin:/bin GOPROXY=off GOMODCACHE=$scratch/empty-gomodcache \
	"$scratch/sdist-venv/bin/python" -m pip install -v $pip_flags --find-links "$wheels" "$sdist" >"$scratch/sdist.log" 2>&1 || {
	echo "test-dist-python: installing the sdist with Go failed:"; tail -40 "$scratch/sdist.log"; exit 1
}
built=$(grep -m1 "hev2: building libhev2.so with go" "$scratch/sdist.log" | sed 's/^ *//') || {
	echo "test-dist-python: the sdist installed without building libhev2.so with Go:"; tail -40 "$scratch/sdist.log"; exit 1
}
if [ -n "$(find "$scratch/empty-gomodcache" -type f | head -1)" ]; then
	echo "test-dist-python: the sdist's build fetched modules into the module cache"; exit 1
fi
"$scratch/sdist-venv/bin/python" "$scratch/use_installed.py" --site "$site" --version "$VERSION" --checkout "$CHECKOUT"
# The library built from the sdist is the wheel's: same SONAME, same exports.
exports() {
	readelf -dW "$1" | sed -n 's/.*(SONAME) *//p'
	readelf --dyn-syms -W "$1" | awk '$5 == "GLOBAL" && $7 != "UND" { print $8 }' | sort
}
exports "$wheel_lib" >"$scratch/wheel.exports"
exports "$site/hev2/libhev2.so" >"$scratch/sdist.exports"
diff "$scratch/wheel.exports" "$scratch/sdist.exports" ||
	{ echo "test-dist-python: the sdist's libhev2.so differs from the wheel's in SONAME or exports (above)"; exit 1; }
n_exports=$(($(wc -l <"$scratch/wheel.exports") - 1))
step "sdist with Go: $built; installed and used in $(took "$t"); SONAME and $n_exports exports as the wheel's library"

# --- the aarch64 wheel: installed for aarch64 by the host's pip, used by
# Debian's arm64 Python under qemu
t=$(seconds)
# shellcheck disable=SC2086
"$PYTHON" -m pip install -q $pip_flags --no-deps --only-binary=:all: --target "$scratch/arm64-site" \
	--platform "$(basename "$arm64_wheel" .whl | sed 's/.*-py3-none-//')" --root-user-action=ignore "$arm64_wheel"
PYTHONPATH=$scratch/arm64-site PYTHONDONTWRITEBYTECODE=1 "$QEMU" -L "$ARM64_ROOT" "$ARM64_ROOT/usr/bin/$ARM64_PYTHON" \
	"$scratch/use_installed.py" --site "$scratch/arm64-site" --version "$VERSION" --checkout "$CHECKOUT" --machine aarch64 --main runpy
step "aarch64 wheel: installed with pip --platform and used under $QEMU in $(took "$t")"
