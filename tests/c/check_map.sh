#!/bin/sh
# The library's exports carry the versions capi/hev2.map gives them: each
# function in the node the map lists it under (name@@NODE, what a program
# linked against it records), each node of the map defined, and nothing
# exported that the map does not list.
# usage: check_map.sh capi/hev2.map build/libhev2.so
# (NM: the nm that reads the library, e.g. aarch64-linux-gnu-nm)
set -eu
map=$1 lib=$2
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
# The map's comments dropped, then its tokens: "NODE {" opens a node,
# "global:" starts the exported names, "local:" the hidden ones, and
# "} PARENT;" closes it.
awk '
{
	line = $0; text = ""
	while (line != "") {
		if (incomment) {
			i = index(line, "*/")
			if (!i) break
			line = substr(line, i + 2); incomment = 0
		} else {
			i = index(line, "/*")
			if (!i) { text = text line; break }
			text = text substr(line, 1, i - 1); line = substr(line, i + 2); incomment = 1
		}
	}
	gsub(/[{};]/, " & ", text)
	n = split(text, tok, /[ \t]+/)
	for (j = 1; j <= n; j++) {
		t = tok[j]
		if (t == "") continue
		if (t == "{") { node = prev; section = ""; print "node " node }
		else if (t == "}") { node = ""; section = "" }
		else if (t == "global:" || t == "local:") section = t
		else if (node != "" && section == "global:" && t != ";") print "symbol " t "@@" node
		prev = t
	}
}' "$map" | sort > "$tmp/map"
${NM:-nm} -D --defined-only "$lib" | awk '$2 == "A" { print "node " $3; next } { print "symbol " $3 }' | sort > "$tmp/lib"
if ! cmp -s "$tmp/map" "$tmp/lib"; then
	echo "check_map: $map and $lib differ (< in the map only, > in the library only):"
	diff "$tmp/map" "$tmp/lib" || true
	exit 1
fi
echo "check_map: $(grep -c '^symbol ' "$tmp/lib") exports in $(grep -c '^node ' "$tmp/lib") version nodes, as $map gives them"
