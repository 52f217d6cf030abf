package resolve

import (
	"github.com/hev2/hev2/internal/netstate"
	"github.com/hev2/hev2/internal/race"
)

// hev2 never passes AI_ADDRCONFIG to getaddrinfo: with an explicit family it
// hides "localhost" on a loopback-only host (Ruby Bug #20048). Instead the
// resolvers skip a family only when the host has usable addresses of the
// other family and none of this one (Ruby #19144: no wasted AAAA query, no
// wait for an answer nobody can use, on an IPv4-only host). What the host
// has comes from netstate, which reads it once and again only when the
// kernel announces a change, so the policy costs an atomic load per lookup.

// AddrConfigFamilies reports whether this host has a usable IPv4 and IPv6
// address (not loopback; for IPv6 not link-local either), and known=false if
// it could not tell (no netlink), in which case no family is skipped. The
// host is the network namespace of the thread that made the first lookup.
func AddrConfigFamilies() (ipv4, ipv6, known bool) {
	s := netstate.Current()
	return s.HaveIPv4, s.HaveIPv6, s.Known
}

// addrConfigWants reports whether a lookup of family is worth making.
func addrConfigWants(family race.Family) bool {
	s := netstate.Current()
	if !s.Known || (!s.HaveIPv4 && !s.HaveIPv6) {
		// Unknown, or loopback-only: nothing to narrow on; names such as
		// localhost must still resolve in both families.
		return true
	}
	if family == race.IPv6 {
		return s.HaveIPv6
	}
	// On an IPv6-only host the A answer is still of use once NAT64 is
	// found (or being discovered): it is synthesized into the prefix.
	return s.HaveIPv4 || NAT64Wanted()
}
