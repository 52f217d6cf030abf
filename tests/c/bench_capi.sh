#!/bin/sh
# bench-capi: connect+close through the C ABI beside plain C connect(), in
# one run; syscalls per connect of each (strace -c -f over the client
# process only, start-up subtracted); the cost of loading the library.
# usage: bench_capi.sh BUILD_DIR [N]
set -eu
b=$1 n=${2:-4000}
tmp=$(mktemp -d)
mkfifo "$tmp/in"
"$b/tests/c/bench_connect" serve < "$tmp/in" > "$tmp/port" &
exec 3> "$tmp/in"
trap 'exec 3>&-; rm -rf "$tmp"' EXIT
for _ in 1 2 3 4 5 6 7 8 9 10; do [ -s "$tmp/port" ] && break; sleep 0.1; done
port=$(cat "$tmp/port")

"$b/tests/c/bench_connect" "$port" "$n"

count() { # count MODE N -> total syscalls of the client process
	strace -f -c -o "$tmp/strace" "$b/tests/c/bench_connect" "$port" "$1" "$2" >/dev/null 2>&1
	awk '$NF == "total" { print $(NF-2) }' "$tmp/strace"
}
sn=1000
p0=$(count plain 0) p1=$(count plain $sn)
h0=$(count hev2 0) h1=$(count hev2 $sn)
awk -v p0="$p0" -v p1="$p1" -v h0="$h0" -v h1="$h1" -v n="$sn" 'BEGIN {
	p = (p1 - p0) / n; h = (h1 - h0) / n
	printf "%-34s %10.1f %10.1f %7.2fx\n", "  syscalls per connect (strace -f)", p, h, h / p
}'
echo "  hev2 path by syscall, per connect ($sn connects, start-up included):"
strace -f -c -o "$tmp/strace" "$b/tests/c/bench_connect" "$port" hev2 $sn >/dev/null 2>&1
awk -v n="$sn" '$NF != "total" && $NF != "syscall" && $1 !~ /^-/ && NF >= 5 { printf "    %-16s %6.2f\n", $NF, $4 / n }' "$tmp/strace" |
	sort -k2 -rn | head -10
"$b/tests/c/bench_dlopen" "$b/libhev2.so"
