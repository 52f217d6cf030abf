#!/bin/sh
# hosts-netns.sh HOSTS CMD [ARG ...]: runs CMD in a fresh network namespace
# (scripts/fresh-netns.sh: only loopback, no TIME_WAIT socket) inside a
# private mount namespace whose resolver files are its own: /etc/hosts
# holds HOSTS (its lines, \n between them), resolv.conf names 127.0.0.1,
# where nothing listens in the new namespace, so a lookup that gets past the
# hosts file is refused at once and never leaves the machine,
# nsswitch.conf reads hosts from files then DNS (no mdns or other module
# of the host's), and gai.conf is empty (no local preference reorders
# addresses). This machine's own files are never read for a name. Root only.
set -eu
if [ $# -lt 2 ]; then
	echo "usage: hosts-netns.sh HOSTS CMD [ARG ...]" >&2
	exit 2
fi
if [ "$(id -u)" != 0 ] || ! command -v unshare >/dev/null 2>&1; then
	echo "hosts-netns.sh: needs root and unshare (a private mount and network namespace)" >&2
	exit 1
fi
hosts=$1
shift
dir=$(mktemp -d)
trap 'rm -rf "$dir"' EXIT
printf '%b\n' "$hosts" > "$dir/hosts"
printf 'nameserver 127.0.0.1\noptions timeout:1 attempts:1\n' > "$dir/resolv.conf"
printf 'passwd: files\ngroup: files\nshadow: files\nhosts: files dns\nnetworks: files\nprotocols: files\nservices: files\n' > "$dir/nsswitch.conf"
: > "$dir/gai.conf"
here=$(cd "$(dirname "$0")" && pwd)
# shellcheck disable=SC2016 # the inner sh expands them
unshare --mount -- sh -c '
	dir=$1 fresh=$2
	shift 2
	for f in hosts resolv.conf nsswitch.conf gai.conf; do
		[ -e "/etc/$f" ] || continue # nothing to cover: glibc has no such file to read either
		mount --bind "$dir/$f" "/etc/$f"
	done
	exec "$fresh" "$@"' sh "$dir" "$here/fresh-netns.sh" "$@"
