#!/bin/sh
# fresh-netns.sh CMD [ARG ...]: runs CMD in a network namespace of its own,
# with only a loopback interface (up), so that a benchmark starts with no
# TIME_WAIT socket: tens of thousands of them left on loopback by earlier
# runs double a plain connect's cost and make one run's ratios disagree
# with the next. The namespace, and every TIME_WAIT socket the run leaves,
# goes away with CMD. Its ephemeral port range is the widest (1024-65535,
# a setting of that namespace alone): a benchmark makes some 40,000
# connects to one listener within seconds, more than the default range
# (28,232 ports) holds while their TIME_WAIT lasts, and the kernel's search
# for a free port would then cost more than the connects being measured.
# Without root (or unshare) CMD runs in the host's namespace, and the line
# printed says so.
set -eu
if [ "$(id -u)" = 0 ] && command -v unshare >/dev/null 2>&1; then
	exec unshare --net -- sh -c '
		ip link set lo up &&
		echo "1024 65535" > /proc/sys/net/ipv4/ip_local_port_range &&
		echo "  (in a fresh network namespace: no TIME_WAIT socket at the start, ports 1024-65535)" &&
		exec "$@"' sh "$@"
fi
echo "  (in the host's network namespace: not root; TIME_WAIT sockets of earlier runs may slow every loopback connect)"
exec "$@"
