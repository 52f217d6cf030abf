#!/bin/sh
# hev2-connect against the scenario-client contract: exit 0/1/2, one JSON
# line with the contract's fields, the -v timeline, every flag accepted.
# Loopback only: the demo helper holds [::1]:P (SYNs dropped) and
# 127.0.0.1:P (accepting), and RP refused on both (bound, never listening,
# held for the whole run). usage: test_cli.sh build/hev2-connect
# HEV2_RUNNER: a command prefix (words split on blanks) every program of
# the build (the tool, the examples, the demo helper) runs under, e.g. an
# emulator for another architecture's build.
set -u
tool=$1
dir=$(dirname "$tool")
run() {
	# shellcheck disable=SC2086 # a prefix of words, split on purpose
	${HEV2_RUNNER-} "$@"
}
fails=0 checks=0
check() { # check NAME WANT_EXIT CMD... ; output in $out
	name=$1 want=$2
	shift 2
	out=$(run "$@" 2>/tmp/hev2-cli-err.$$)
	got=$?
	checks=$((checks + 1))
	if [ "$got" != "$want" ]; then
		fails=$((fails + 1))
		echo "FAIL $name: exit $got, want $want: $out $(cat /tmp/hev2-cli-err.$$)"
	fi
}
err_has() { # err_has NAME TEXT: the last stderr contains TEXT
	checks=$((checks + 1))
	if ! grep -qF -- "$2" /tmp/hev2-cli-err.$$; then
		fails=$((fails + 1))
		echo "FAIL $1: stderr lacks '$2': $(cat /tmp/hev2-cli-err.$$)"
	fi
}
json_is() { # json_is NAME JQ_EXPR: the last output satisfies it
	checks=$((checks + 1))
	if ! printf '%s\n' "$out" | jq -e "$2" >/dev/null 2>&1; then
		fails=$((fails + 1))
		echo "FAIL $1: $2 not true of: $out"
	fi
}

fifo=$(mktemp -u)
mkfifo "$fifo"
run "$dir/hev2-demo-listeners" refused < "$fifo" > "$fifo.port" &
exec 3> "$fifo"
trap 'exec 3>&-; rm -f "$fifo" "$fifo.port" /tmp/hev2-cli-err.$$' EXIT
# Both ports printed (up to 30 s: a loaded machine may start it late). The
# file itself appears only once the helper has opened the fifo.
ports_ready() { [ -f "$fifo.port" ] && [ "$(wc -l < "$fifo.port")" -ge 2 ]; }
i=0
until ports_ready || [ $i -ge 300 ]; do sleep 0.1; i=$((i + 1)); done
P=$(sed -n 1p "$fifo.port")
RP=$(sed -n 2p "$fifo.port")
if [ -z "$P" ] || [ -z "$RP" ]; then
	echo "test_cli: hev2-demo-listeners gave no ports"
	exit 1
fi

# --version: the tool's version (the header it was built with) and the
# loaded library's, both include/hev2.h's here; --help lists it
version=$(awk '$2 ~ /^HEV2_VERSION_(MAJOR|MINOR|PATCH)$/ { v = v (v == "" ? "" : ".") $3 } END { print v }' \
	"$(dirname "$0")/../../include/hev2.h")
check version 0 "$tool" --version
checks=$((checks + 1))
[ "$out" = "hev2-connect $version (libhev2 $version)" ] ||
	{ fails=$((fails + 1)); echo "FAIL version: '$out', want 'hev2-connect $version (libhev2 $version)'"; }
check version-short 0 "$tool" -V
checks=$((checks + 1))
[ "$out" = "hev2-connect $version (libhev2 $version)" ] || { fails=$((fails + 1)); echo "FAIL version-short: '$out'"; }
check help 0 "$tool" --help
checks=$((checks + 1))
case "$out" in *"-V, --version "*) ;; *) fails=$((fails + 1)); echo "FAIL help: no --version line" ;; esac

# usage errors: exit 2
check no-args 2 "$tool"
check one-arg 2 "$tool" 127.0.0.1
check unknown-flag 2 "$tool" --bogus 127.0.0.1 "$P"
check family-5 2 "$tool" --family 5 127.0.0.1 "$P"
check timeout-negative 2 "$tool" --resolv-timeout -1 127.0.0.1 "$P"
check timeout-not-number 2 "$tool" --connect-timeout 12x 127.0.0.1 "$P"
check resolver-unknown 2 "$tool" --resolver magic 127.0.0.1 "$P"
check port-zero 2 "$tool" 127.0.0.1 0
check port-unknown 2 "$tool" 127.0.0.1 no-such-service-hev2
check resolve-malformed 2 "$tool" --resolve nocolon 127.0.0.1 "$P"
check open-with-connect 2 "$tool" --open-timeout 100 --connect-timeout 100 127.0.0.1 "$P"
err_has open-with-connect "hev2_connect: invalid open_timeout: cannot be combined with resolv_timeout or connect_timeout"
check host-too-long 2 "$tool" "$(printf 'a%.0s' $(seq 1 300))" "$P"
err_has host-too-long "invalid host: longer than 253 characters"
# values are the library's to judge (the tool only parses numbers)
check timeout-over-a-day 2 "$tool" --connect-timeout 86400001 127.0.0.1 "$P"
err_has timeout-over-a-day "invalid connect_timeout: 24h0m0.001s out of range"
check first-family-count-65 2 "$tool" --first-family-count 65 127.0.0.1 "$P"
err_has first-family-count-65 "invalid first_address_family_count: 65 out of range"
check local-port-70000 2 "$tool" --local-port 70000 127.0.0.1 "$P"
err_has local-port-70000 "local_port 70000 is not a port number"
check timeout-beyond-int 2 "$tool" --connect-timeout 99999999999 127.0.0.1 "$P"

# success: exit 0, the contract's JSON
check success 0 "$tool" --json 127.0.0.1 "$P"
json_is success '.ok == true and .address == "127.0.0.1" and .family == "ipv4" and .port == '"$P"' and (.elapsed_ms | type) == "number" and (.error == null)'
json_is success-events '[.events[].kind] | index("attempt-won") != null'
# the establishment report: its fields (the contract's Report, the same for
# every client) and, for a literal, who won and why
json_is success-report-fields '(.report | keys) == ["attempts","connected","elapsed_ms","family","https","lookups","phases","reason","resolution_delay_expired","timeout","winner"] and (.report.phases | keys) == ["connecting","resolution_delay","resolving"] and (.report.lookups[0] | keys) == ["addresses","eai","end_ms","errno","family","ms","start_ms","state"] and (.report.attempts[0] | keys) == ["address","bind_failed","end_ms","errno","family","ms","origin","outcome","port","service","start_ms","synthesized_from"] and .report.attempts[0].synthesized_from == "" and .report.https == null and .report.attempts[0].service == 0 and .report.attempts[0].origin == "static"'
json_is success-report '.report.connected == true and .report.winner == 0 and .report.family == "ipv4" and .report.reason == "given-addresses" and .report.phases.resolving == null and .report.phases.connecting.end_ms == .report.elapsed_ms and ([.report.lookups[].state] == ["not-asked","not-asked"]) and .report.attempts[0].outcome == "connected" and .report.attempts[0].address == "127.0.0.1"'

# every flag at once (the contract's and the rest)
check all-flags 0 "$tool" --json --resolv-timeout 1000 --connect-timeout 1000 --family 4 \
	--resolver system --resolution-delay 10 --attempt-delay 20 --first-family-count 2 \
	--local 127.0.0.1 --local-port 0 --nodelay --keepalive 1000 --blocking 127.0.0.1 "$P"
json_is all-flags '.ok == true'
check no-fast-fallback 0 "$tool" --json --no-fast-fallback --open-timeout 2000 127.0.0.1 "$P"

# the fallback race through a static list, as a timeline and as JSON
check fallback-timeline 0 "$tool" -v --attempt-delay 30 --resolve fb.test:::1,127.0.0.1 fb.test "$P"
checks=$((checks + 1))
case "$out" in
*"attempt-started   #0 [::1]"*"attempt-started   #1 127.0.0.1"*"attempt-won       #1"*) ;;
*) fails=$((fails + 1)); echo "FAIL fallback-timeline: $out" ;;
esac
checks=$((checks + 1))
case "$out" in
*"report: ipv4 won (first-to-connect) in "*"; attempts #0 lost "*", #1 connected "*) ;;
*) fails=$((fails + 1)); echo "FAIL fallback-timeline report line: $out" ;;
esac
check fallback-json 0 "$tool" --json --attempt-delay 30 --resolve fb.test:::1,127.0.0.1 fb.test "$P"
json_is fallback-json '.family == "ipv4" and ([.events[] | select(.kind == "attempt-started")] | length) == 2 and .elapsed_ms >= 29'
json_is fallback-report '.report.reason == "first-to-connect" and .report.winner == 1 and .report.family == "ipv4" and ([.report.attempts[].outcome] == ["lost","connected"]) and .report.attempts[1].start_ms >= 29 and .report.attempts[0].end_ms == .report.elapsed_ms'

# the race as trace files (hev2_write_trace): the fallback race drawn and
# logged; a file that cannot be written fails the run (exit 1, which file)
tdir=$(mktemp -d)
check trace-files 0 "$tool" --attempt-delay 30 --resolve fb.test:::1,127.0.0.1 \
	--svg "$tdir/race.svg" --qlog "$tdir/race.qlog" --chrome-trace "$tdir/race.json" fb.test "$P"
out=$(head -c 40 "$tdir/race.svg")
checks=$((checks + 1))
case "$out" in '<svg xmlns="http://www.w3.org/2000/svg"'*) ;; *) fails=$((fails + 1)); echo "FAIL trace-svg: $out" ;; esac
checks=$((checks + 1))
grep -q 'data-outcome="won"' "$tdir/race.svg" || { fails=$((fails + 1)); echo "FAIL trace-svg: no winner lane"; }
out=$(tr '\036' '\n' < "$tdir/race.qlog" | jq -s -c '[.[].name | select(. != null)]')
json_is trace-qlog 'index("hev3:attempt_started") != null and index("hev3:connection_selected") != null and index("hev3:metrics") != null'
out=$(cat "$tdir/race.json")
json_is trace-chrome '([.traceEvents[] | select(.ph == "B")] | length) == ([.traceEvents[] | select(.ph == "E")] | length) and ([.traceEvents[] | select(.name == "attempt" and .ph == "B")] | length) == 2'
check trace-empty-name 2 "$tool" --svg "" 127.0.0.1 "$P"
check trace-unwritable 1 "$tool" --qlog /nonexistent-hev2-dir/race.qlog 127.0.0.1 "$P"
checks=$((checks + 1))
grep -q "qlog /nonexistent-hev2-dir/race.qlog: hev2_write_trace: open" /tmp/hev2-cli-err.$$ ||
	{ fails=$((fails + 1)); echo "FAIL trace-unwritable: $(cat /tmp/hev2-cli-err.$$)"; }
rm -rf "$tdir"

# failures: exit 1 with the error parts
check connect-timeout 1 "$tool" --json --family 6 --connect-timeout 100 --resolve fb.test:::1,127.0.0.1 fb.test "$P"
json_is connect-timeout '.ok == false and .error.errno == "ETIMEDOUT" and .error.timeout == "connect_timeout" and .error.eai == "" and (.error.message | length) > 0'
json_is connect-timeout-report '.report.connected == false and .report.winner == -1 and .report.reason == "none" and .report.timeout == "connect_timeout" and .report.attempts[0].outcome == "timed-out" and .report.attempts[0].errno == "ETIMEDOUT" and .report.attempts[0].family == "ipv6"'
check open-timeout 1 "$tool" --json --open-timeout 80 ::1 "$P"
json_is open-timeout '.error.timeout == "open_timeout"'
check refused 1 "$tool" --json 127.0.0.1 "$RP"
json_is refused '.ok == false and .error.errno == "ECONNREFUSED" and .error.timeout == "" and .port == '"$RP"
json_is refused-report '.report.connected == false and .report.attempts[0].outcome == "failed" and .report.attempts[0].errno == "ECONNREFUSED"'
check family-mismatch 1 "$tool" --json --family 6 127.0.0.1 "$P"
json_is family-mismatch '.ok == false and .error.eai == "EAI_ADDRFAMILY"'

# --stdio (the relay itself is tested on the test bed: make test-capi-stdio)
check stdio-json 2 "$tool" --stdio --json 127.0.0.1 "$P"
check stdio-blocking 2 "$tool" --stdio --blocking 127.0.0.1 "$P"
check stdio-refused 1 "$tool" --stdio --resolve fb.test:::1,127.0.0.1 fb.test "$RP"
checks=$((checks + 1))
err=$(cat /tmp/hev2-cli-err.$$)
case "$out|$err" in
"|hev2-connect: cannot connect to fb.test port $RP: "*"connection refused"*) ;;
*) fails=$((fails + 1)); echo "FAIL stdio-refused: want no stdout and one line naming fb.test: $out|$err" ;;
esac
[ "$(printf '%s\n' "$err" | wc -l)" = 1 ] || { fails=$((fails + 1)); echo "FAIL stdio-refused: more than one line: $err"; }

# the small examples of examples/c, built beside the tool
ex=$dir/examples
check example-simple 0 "$ex/simple_connect" 127.0.0.1 "$P"
check example-simple-refused 1 "$ex/simple_connect" 127.0.0.1 "$RP"
check example-event-loop 1 "$ex/event_loop" "127.0.0.1:$P" "[::1]:$RP" "127.0.0.1:$RP" "127.0.0.1:$P"
checks=$((checks + 1))
case "$out" in
*"127.0.0.1:$P: connected to 127.0.0.1"*"4 done, 2 failed, completion job ran"*) ;;
*) fails=$((fails + 1)); echo "FAIL example-event-loop: $out" ;;
esac

if [ "$fails" -ne 0 ]; then
	echo "test_cli: $fails of $checks checks FAILED"
	exit 1
fi
echo "test_cli: $checks checks passed"
