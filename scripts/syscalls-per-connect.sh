#!/bin/sh
# Prints syscalls per connect for hev2 and Go's net.Dialer on loopback:
# strace -c -f over N connects minus a run of 0 connects (start-up), the
# listener in a separate process so that only the client is counted.
set -eu
bin=${1:?usage: syscalls-per-connect.sh SYSCOUNT_BINARY [N]}
n=${2:-2000}
out=$(mktemp -d)
trap 'kill $server 2>/dev/null; rm -rf "$out"' EXIT
"$bin" -serve >"$out/port" &
server=$!
while [ ! -s "$out/port" ]; do sleep 0.05; done
port=$(cat "$out/port")
total() { # total calls in an strace -c summary
	awk '$NF=="total"{print $(NF-2)}' "$1"
}
socketlevel() { # calls of the syscalls that work on the socket or its readiness
	awk '$NF ~ /^(socket|connect|bind|epoll_ctl|epoll_pwait|epoll_wait|getsockopt|setsockopt|getsockname|getpeername|fcntl|close)$/ {s += $4} END {print s+0}' "$1"
}
for mode in hev2 net; do
	strace -f -c -o "$out/$mode.0" "$bin" -mode $mode -n 0 -port "$port"
	strace -f -c -o "$out/$mode.n" "$bin" -mode $mode -n "$n" -port "$port"
	a=$(total "$out/$mode.0"); b=$(total "$out/$mode.n")
	sa=$(socketlevel "$out/$mode.0"); sb=$(socketlevel "$out/$mode.n")
	echo "$mode $(awk -v a="$a" -v b="$b" -v n="$n" 'BEGIN{printf "%.1f", (b-a)/n}') $(awk -v a="$sa" -v b="$sb" -v n="$n" 'BEGIN{printf "%.1f", (b-a)/n}')" >>"$out/per"
	echo "--- $mode: syscalls over $n connects (start-up run subtracted in the per-connect figure)"
	sort -k4 -n -r "$out/$mode.n" | awk '$NF!="total" && $NF!="syscall" && $4+0 >= '"$n"'/2 {printf "  %-14s %8d calls  %.2f/connect\n", $NF, $4, $4/'"$n"'}'
done
h=$(awk '$1=="hev2"{print $2}' "$out/per"); g=$(awk '$1=="net"{print $2}' "$out/per")
hs=$(awk '$1=="hev2"{print $3}' "$out/per"); gs=$(awk '$1=="net"{print $3}' "$out/per")
echo "socket-level syscalls per connect: hev2 $hs, net.Dialer $gs, ratio $(awk -v h="$hs" -v g="$gs" 'BEGIN{printf "%.2f", h/g}')"
echo "all syscalls per connect (scheduler futex/nanosleep included, noisy): hev2 $h, net.Dialer $g, ratio $(awk -v h="$h" -v g="$g" 'BEGIN{printf "%.2f", h/g}')"
