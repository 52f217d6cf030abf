#!/bin/sh
# bench-capi: connect+close through the C ABI (the race on a library thread,
# and driven by the waiting thread) beside plain C, in one run, interleaved,
# then call by call (medians of each call, paired in each iteration);
# syscalls per connect of each (strace -c -f over the client process only,
# start-up subtracted); the same with a name from a hosts file (in a private
# mount namespace, never the machine's own hosts file); the cost of loading
# the library and of the first connects; 10,000 pending handles (memory per
# handle, threads, cancel + release CPU beside plain C's close).
# usage: bench_capi.sh BUILD_DIR [N]
set -eu
b=$1 n=${2:-6000}
tmp=$(mktemp -d)
mkfifo "$tmp/in"
"$b/bench/c/bench_connect" serve < "$tmp/in" > "$tmp/port" &
exec 3> "$tmp/in"
trap 'exec 3>&-; rm -rf "$tmp"' EXIT
i=0 # up to 30 s: a loaded machine may start the server late
while [ ! -s "$tmp/port" ] && [ $i -lt 300 ]; do sleep 0.1; i=$((i + 1)); done
port=$(cat "$tmp/port")

echo "  $(ss -s | awk '/^TCP:/ {print "TCP sockets now: " $0}')"
"$b/bench/c/bench_connect" "$port" "$n"

count() { # count MODE N -> total syscalls of the client process
	strace -f -c -o "$tmp/strace" "$b/bench/c/bench_connect" "$port" "$1" "$2" >/dev/null 2>&1
	awk '$NF == "total" { print $(NF-2) }' "$tmp/strace"
}
sn=1000
p0=$(count plain 0) p1=$(count plain $sn)
echo "  syscalls per connect (strace -f, start-up subtracted): plain C $(awk -v a="$p0" -v b="$p1" -v n=$sn 'BEGIN{printf "%.1f", (b-a)/n}')"
for mode in library waiter onecall; do
	h0=$(count $mode 0) h1=$(count $mode $sn)
	echo "    hev2 $mode: $(awk -v a="$h0" -v b="$h1" -v n=$sn 'BEGIN{printf "%.1f", (b-a)/n}') in all; by syscall, per connect:"
	strace -f -c -o "$tmp/strace" "$b/bench/c/bench_connect" "$port" $mode $sn >/dev/null 2>&1
	awk -v n="$sn" '$NF != "total" && $NF != "syscall" && $1 !~ /^-/ && NF >= 5 && $4 / n >= 0.01 { printf "      %-14s %6.2f\n", $NF, $4 / n }' "$tmp/strace" |
		sort -k2 -rn | head -10
done

# A name in a hosts file, ::1 and 127.0.0.1: getaddrinfo + connect against
# hev2's system resolver (one getaddrinfo per family on its threads).
if [ "$(id -u)" = 0 ] && command -v unshare >/dev/null; then
	printf '127.0.0.1 localhost\n::1 dual.hev2.test\n127.0.0.1 dual.hev2.test\n' > "$tmp/hosts"
	unshare -m sh -c "mount --bind '$tmp/hosts' /etc/hosts && '$b/bench/c/bench_connect' '$port' $((n / 2)) dual.hev2.test"
else
	echo "  (hosts-file row skipped: needs root for a private mount namespace)"
fi
"$b/bench/c/bench_dlopen" "$b/libhev2.so"
"$b/bench/c/bench_pending" 10000 library
"$b/bench/c/bench_pending" 10000 waiter | grep -v warm-up
"$b/bench/c/bench_pending" 10000 library job | grep -v warm-up
"$b/bench/c/bench_pending" 10000 waiter job | grep -v warm-up
