#!/bin/sh
# Every Go export of capi recovers panics: its first statement is
# "defer guard(&rc)", so no Go panic can unwind into a host.
# usage: check_exports.sh capi
set -eu
bad=$(awk '
	/^\/\/export / { name = $2; want = 1; next }
	want && /^func / { next }
	want { if ($0 !~ /^\tdefer guard\(&rc\)$/) print name; want = 0 }
' "$1"/*.go)
n=$(grep -h -c '^//export ' "$1"/*.go | awk '{ s += $1 } END { print s }')
if [ -n "$bad" ]; then
	echo "check_exports: exports without 'defer guard(&rc)' first: $bad"
	exit 1
fi
echo "check_exports: all $n Go exports recover panics"
