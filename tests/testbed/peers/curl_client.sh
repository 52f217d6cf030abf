#!/bin/sh
# Scenario-client peer: curl (its Happy Eyeballs with the default 200 ms
# timeout, getaddrinfo AF_UNSPEC) behind the shared contract, connecting
# with telnet://HOST:PORT (plain TCP; the bed's server closes at once).
#
# Mapping: --open-timeout is curl's --connect-timeout (it bounds name
# resolution and connection together); --family 4|6 is -4/-6. curl has no
# resolution-only or connect-only timeout, no serial mode and no second
# resolver: --resolv-timeout, --connect-timeout, --no-fast-fallback and
# --resolver builtin are usage errors (exit 2). elapsed_ms is curl's
# time_connect on success, its time_total on failure.
set -u
usage() { echo "curl_client: $*" >&2; exit 2; }
open_ms=0 family=""
while [ $# -gt 2 ]; do
	case "$1" in
	--open-timeout) open_ms=$2; shift 2 ;;
	--family) case "$2" in 4|6) family="-$2" ;; *) usage "--family $2: want 4 or 6" ;; esac; shift 2 ;;
	--resolver) [ "$2" = system ] || usage "curl has only the system resolver"; shift 2 ;;
	--resolv-timeout|--connect-timeout|--no-fast-fallback) usage "curl has no $1" ;;
	*) usage "unknown option $1" ;;
	esac
done
[ $# -eq 2 ] || usage "want HOST PORT"
host=$1 port=$2
case "$port" in ''|*[!0-9]*) usage "PORT $port: want a number" ;; esac
case "$open_ms" in ''|*[!0-9]*) usage "--open-timeout $open_ms: want ms" ;; esac
case "$host" in *:*) url="telnet://[$host]:$port" ;; *) url="telnet://$host:$port" ;; esac
set --
[ "$open_ms" -gt 0 ] && set -- --connect-timeout "$(awk "BEGIN{print $open_ms/1000}")"
[ -n "$family" ] && set -- "$@" "$family"
errfile=$(mktemp)
out=$(curl -sS "$@" -o /dev/null -w '%{remote_ip} %{time_connect} %{time_total}' "$url" </dev/null 2>"$errfile")
rc=$?
# tr deletes double quotes and backslashes (the message goes into a JSON string).
# shellcheck disable=SC1003
msg=$(head -n1 "$errfile" | tr -d '"\\')
rm -f "$errfile"
ip=${out%% *} rest=${out#* }
tconnect=${rest%% *} ttotal=${rest#* }
ms() { awk "BEGIN{printf \"%.3f\", $1*1000}"; }
if [ $rc -eq 0 ]; then
	case "$ip" in *:*) fam=ipv6 ;; *) fam=ipv4 ;; esac
	printf '{"ok":true,"address":"%s","family":"%s","port":%s,"elapsed_ms":%s}\n' "$ip" "$fam" "$port" "$(ms "$tconnect")"
	exit 0
fi
errno="" eai="" timeout=""
case $rc in
6) eai=EAI_NONAME ;;
7) case "$msg" in *refused*|*"Couldn't connect"*) errno=ECONNREFUSED ;; esac ;;
28) errno=ETIMEDOUT; [ "$open_ms" -gt 0 ] && timeout=open_timeout ;;
esac
printf '{"ok":false,"port":%s,"elapsed_ms":%s,"error":{"errno":"%s","eai":"%s","timeout":"%s","message":"curl exit %s: %s"}}\n' \
	"$port" "$(ms "$ttotal")" "$errno" "$eai" "$timeout" "$rc" "$msg"
exit 1
