package testbed

import "net/netip"

// The address plan. Every address lives inside the bed's own namespaces:
// IPv4 in 198.18.0.0/24 (RFC 2544 benchmarking space), IPv6 in
// 2001:db8::/64 (documentation space, global scope, so RFC 6724 prefers it
// over IPv4).
//
// The client addresses have the top bit of their host part set and every
// server address has it clear, so each server address shares exactly the
// same prefix length with the client's source address. RFC 6724 rule 9
// (longest matching prefix) then ties, and the DNS order of a scenario is
// the order a correct client tries.
var (
	ClientV4 = netip.MustParseAddr("198.18.0.129")
	ClientV6 = netip.MustParseAddr("2001:db8::8000:0:0:1")

	// ServerLinkV4/V6 are the server ends of the two links.
	ServerLinkV4 = netip.MustParseAddr("198.18.0.2")
	ServerLinkV6 = netip.MustParseAddr("2001:db8::2")

	// DNSServerV4 is where the test DNS server listens (UDP and TCP 53); it
	// is the only nameserver in the client namespace's resolv.conf.
	DNSServerV4 = netip.MustParseAddr("198.18.0.53")
	DNSServerV6 = netip.MustParseAddr("2001:db8::53")
)

// The standard layout: server addresses with a fixed impairment each, so
// that scenarios using different roles never interfere and can run at once.
var (
	V4Good1 = netip.MustParseAddr("198.18.0.10")
	V4Good2 = netip.MustParseAddr("198.18.0.11")
	V6Good1 = netip.MustParseAddr("2001:db8::10")
	V6Good2 = netip.MustParseAddr("2001:db8::11")

	V4Blackhole1 = netip.MustParseAddr("198.18.0.20")
	V4Blackhole2 = netip.MustParseAddr("198.18.0.21")
	V6Blackhole1 = netip.MustParseAddr("2001:db8::20")
	V6Blackhole2 = netip.MustParseAddr("2001:db8::21")

	V4Refused1 = netip.MustParseAddr("198.18.0.30")
	V4Refused2 = netip.MustParseAddr("198.18.0.31")
	V6Refused1 = netip.MustParseAddr("2001:db8::30")
	V6Refused2 = netip.MustParseAddr("2001:db8::31")

	// Delayed paths: every packet towards these addresses is held in the
	// server namespace (NFQUEUE) for the given time, so connect() takes it.
	V4Delay100 = netip.MustParseAddr("198.18.0.40")
	V4Delay400 = netip.MustParseAddr("198.18.0.41")
	V6Delay100 = netip.MustParseAddr("2001:db8::40")
	V6Delay400 = netip.MustParseAddr("2001:db8::41")

	V4SlowAccept = netip.MustParseAddr("198.18.0.50")
	V6SlowAccept = netip.MustParseAddr("2001:db8::50")
)

// StandardLayout is the impairment of each standard server address.
func StandardLayout() map[netip.Addr]Impairment {
	m := map[netip.Addr]Impairment{}
	for _, a := range []netip.Addr{V4Good1, V4Good2, V6Good1, V6Good2} {
		m[a] = Healthy()
	}
	for _, a := range []netip.Addr{V4Blackhole1, V4Blackhole2, V6Blackhole1, V6Blackhole2} {
		m[a] = Blackhole()
	}
	for _, a := range []netip.Addr{V4Refused1, V4Refused2, V6Refused1, V6Refused2} {
		m[a] = Refuse()
	}
	m[V4Delay100] = PathDelay(StandardShortDelay)
	m[V6Delay100] = PathDelay(StandardShortDelay)
	m[V4Delay400] = PathDelay(StandardLongDelay)
	m[V6Delay400] = PathDelay(StandardLongDelay)
	m[V4SlowAccept] = SlowAccept(StandardAcceptDelay)
	m[V6SlowAccept] = SlowAccept(StandardAcceptDelay)
	return m
}

// HostsFileName is in the client namespace's hosts file (with V6Good2 and
// V4Good2) and unknown to the DNS server.
const HostsFileName = "hostsfile.hev2.test"

// standardHosts are the hosts-file lines every bed has.
var standardHosts = V6Good2.String() + "\t" + HostsFileName + "\n" + V4Good2.String() + "\t" + HostsFileName + "\n"
