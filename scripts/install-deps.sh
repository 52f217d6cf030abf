#!/bin/sh
# Installs the Debian packages given as arguments when any is missing.
# Root is needed to install; without root, missing packages are reported and
# the tests that need them say SKIP or fail with a clear message.
set -eu
missing=""
for p in "$@"; do
	dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "ok installed" || missing="$missing $p"
done
[ -z "$missing" ] && exit 0
if [ "$(id -u)" != 0 ]; then
	echo "install-deps: not root; missing Debian packages:$missing" >&2
	exit 0
fi
echo "install-deps: apt-get install$missing"
export DEBIAN_FRONTEND=noninteractive
# A package named pkg:ARCH of a foreign architecture (the arm64 sysroots of
# make dist) needs that architecture known to dpkg before apt-get update.
for p in $missing; do
	case "$p" in
	*:*) arch="${p##*:}"
		dpkg --print-foreign-architectures | grep -qx "$arch" || dpkg --add-architecture "$arch" ;;
	esac
done
apt-get update -qq >/dev/null || apt-get update
# shellcheck disable=SC2086
apt-get install -y -qq --no-install-recommends $missing >/dev/null
