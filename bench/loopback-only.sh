#!/bin/sh
# loopback-only.sh CMD [ARG ...]: runs CMD under strace (every thread) and
# fails unless every IPv4 or IPv6 address its connect, sendto, sendmsg and
# sendmmsg calls name is a loopback one (127.0.0.0/8, ::1, ::ffff:127.x):
# the proof that a benchmark resolving a name sent nothing off the machine.
# Prints each destination with its count (a DNS query to 127.0.0.1:53
# would show there: a name that got past the hosts file).
set -eu
out=$(mktemp)
trap 'rm -f "$out"' EXIT
rc=0
strace -f -qq -o "$out" -e trace=connect,sendto,sendmsg,sendmmsg "$@" >/dev/null || rc=$?
# strace writes an address as inet_addr("A") or inet_pton(AF_INET6, "A", ...),
# its port as sin_port=htons(P) or sin6_port=htons(P) just before.
dests=$(grep -oE 'sin6?_port=htons\([0-9]+\), (sin6_flowinfo=htonl\([0-9]+\), )?(sin_addr=inet_addr\("[^"]+"\)|inet_pton\(AF_INET6, "[^"]+")' "$out" |
	sed -E 's/.*htons\(([0-9]+)\).*"([^"]+)".*/\2 port \1/' | sort | uniq -c || true)
echo "  destinations (count, address, port) named by connect/send* of: $*"
if [ -z "$dests" ]; then
	echo "    none"
	exit "$rc"
fi
echo "$dests" | sed 's/^ */    /'
bad=$(echo "$dests" | awk '$2 !~ /^(127\.|::1$|::ffff:127\.)/')
if [ -n "$bad" ]; then
	echo "loopback-only.sh: addresses off this machine were named:" >&2
	echo "$bad" >&2
	exit 1
fi
if [ "$rc" != 0 ]; then
	echo "loopback-only.sh: $1 failed (exit status $rc)" >&2
fi
exit "$rc"
