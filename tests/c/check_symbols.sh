#!/bin/sh
# The dynamic symbols libhev2.so exports are exactly the functions hev2.h
# declares: nothing missing, no Go internal leaking out.
# usage: check_symbols.sh include/hev2.h build/libhev2.so
# (NM: the nm that reads the library, e.g. aarch64-linux-gnu-nm; CC: the
# compiler whose preprocessor reads the header)
set -eu
header=$1 lib=$2
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
# Preprocess (drops comments), then take every "hev2_name(" that is a
# declaration; function-pointer typedefs read "(*hev2_x)(" and do not match.
${CC:-cc} -E -P -Iinclude "$header" | grep -oE '\bhev2_[a-z0-9_]+ *\(' | tr -d ' (' | sort -u > "$tmp/declared"
${NM:-nm} -D --defined-only "$lib" | awk '$2 != "A" { sub(/@.*/, "", $3); print $3 }' | sort -u > "$tmp/exported"
if ! cmp -s "$tmp/declared" "$tmp/exported"; then
	echo "check_symbols: hev2.h and $lib differ (< declared only, > exported only):"
	diff "$tmp/declared" "$tmp/exported" || true
	exit 1
fi
echo "check_symbols: $(wc -l < "$tmp/exported") exported symbols == functions declared in hev2.h"
