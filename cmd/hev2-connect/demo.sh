#!/bin/sh
# make demo: hev2-connect races a name whose static addresses are ::1 (SYNs
# silently dropped) and 127.0.0.1 (accepting), on loopback, without root and
# without DNS. The timeline shows the IPv6 attempt hanging and the IPv4
# attempt, started one Connection Attempt Delay (250 ms) later, winning.
# The timeline is also kept in $build/demo/race.txt, and the race drawn
# beside it as a waterfall picture, $build/demo/race.svg.
set -eu
build=${1:-build}
if ! ip -6 addr show dev lo 2>/dev/null | grep -q 'inet6 ::1/128'; then
	echo "demo: ::1 is not configured on lo; the IPv6 half of the demo cannot run" >&2
	exit 1
fi
fifo=$(mktemp -u)
mkfifo "$fifo"
# The helper serves until its stdin (the fifo, held open below) closes.
"$build/hev2-demo-listeners" < "$fifo" > "$fifo.port" &
helper=$!
exec 3> "$fifo"
trap 'exec 3>&-; wait $helper 2>/dev/null; rm -f "$fifo" "$fifo.port"' EXIT
i=0
while [ ! -s "$fifo.port" ] && [ $i -lt 300 ]; do sleep 0.1; i=$((i + 1)); done
port=$(cat "$fifo.port")
out=$build/demo
mkdir -p "$out"
echo "\$ hev2-connect -v --resolve demo.test:::1,127.0.0.1 --svg $out/race.svg demo.test $port"
echo "  ([::1]:$port drops SYNs; 127.0.0.1:$port accepts)"
rc=0
"$build/hev2-connect" -v --resolve demo.test:::1,127.0.0.1 --svg "$out/race.svg" demo.test "$port" > "$out/race.txt" || rc=$?
cat "$out/race.txt"
echo
echo "timeline: $out/race.txt"
echo "picture:  $out/race.svg (open it in a browser: one lane per attempt, the timers, the winner)"
exit "$rc"
