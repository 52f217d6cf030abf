package testbed

import (
	"fmt"
	"net/netip"

	"github.com/hev2/hev2/core"
)

// NAT64Prefixes are the NAT64 prefixes the rows use, one of every length
// RFC 6052 allows, all inside 2001:db8::/32 (the only IPv6 space the bed
// may use): network-specific prefixes, as the test bed's IPv4 space
// (198.18.0.0/15) is not global and may never be embedded in the
// well-known 64:ff9b::/96.
var NAT64Prefixes = []netip.Prefix{
	netip.MustParsePrefix("2001:db8::/32"),
	netip.MustParsePrefix("2001:db8:6400::/40"),
	netip.MustParsePrefix("2001:db8:64::/48"),
	netip.MustParsePrefix("2001:db8:64:6400::/56"),
	netip.MustParsePrefix("2001:db8:64:64::/64"),
	netip.MustParsePrefix("2001:db8::64:0:0/96"),
}

// nat64Scenarios are the NAT64 rows: the client runs in the bed's
// IPv6-only namespace (no IPv4 route), the DNS server reveals the row's
// prefix for ipv4only.arpa, and the server owns the synthesized addresses
// of V4Good1 and V4Good2 (no translator is needed to prove the client's
// part). Each client process is a first connect on its network: it
// discovers the prefix alongside its own lookups.
func nat64Scenarios() []Scenario {
	var rows []Scenario
	for _, p := range NAT64Prefixes {
		rows = append(rows, Scenario{
			Name:  fmt.Sprintf("nat64-literal-%d", p.Bits()),
			About: fmt.Sprintf("IPv6-only, NAT64 prefix /%d: an IPv4 literal is reached at its synthesis", p.Bits()),
			Host:  V4Good1.String(), IPv6Only: true, Pref64: p,
			Want: Expect{Winner: core.NAT64Synthesize(p, V4Good1), SynthesizedFrom: V4Good1},
		})
	}
	p64, p96 := NAT64Prefixes[4], NAT64Prefixes[5]
	rows = append(rows,
		Scenario{Name: "nat64-a-only", About: "IPv6-only, NAT64: an A-only name is reached at its synthesis",
			AAAA: b(NoData()), A: b(Answer(V4Good1)), IPv6Only: true, Pref64: p64,
			Want: Expect{Winner: core.NAT64Synthesize(p64, V4Good1), SynthesizedFrom: V4Good1}},
		Scenario{Name: "nat64-dns64-sorted", About: "IPv6-only, a DNS64 AAAA listed before a real one: the real IPv6 is tried first",
			AAAA: b(Answer(core.NAT64Synthesize(p96, V4Good2), V6Good1)), A: b(Answer(V4Good2)), IPv6Only: true, Pref64: p96,
			Want: Expect{Winner: V6Good1}},
		Scenario{Name: "nat64-loopback", About: "IPv6-only, NAT64: 127.0.0.1 is never synthesized (refused locally)",
			Host: "127.0.0.1", IPv6Only: true, Pref64: p96, Want: Expect{Errno: "ECONNREFUSED"}},
		Scenario{Name: "nat64-none", About: "IPv6-only, no NAT64 (ipv4only.arpa NXDOMAIN): an IPv4 literal is unreachable",
			Host: V4Good1.String(), IPv6Only: true, Want: Expect{Errno: "ENETUNREACH"}},
		Scenario{Name: "nat64-off", About: "IPv6-only, NAT64 present but --no-nat64: an IPv4 literal is unreachable",
			Host: V4Good1.String(), Args: []string{"--no-nat64"}, IPv6Only: true, Pref64: p96, Want: Expect{Errno: "ENETUNREACH"}},
		Scenario{Name: "nat64-v4-route", About: "a NAT64 prefix on a host with an IPv4 route: nothing is synthesized",
			Host: V4Good2.String(), Pref64: p96, Want: Expect{Winner: V4Good2}},
	)
	return rows
}
