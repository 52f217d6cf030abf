package testbed

import "net/netip"

// The IPv6-only client: a third namespace with one IPv6 link to the server
// namespace and no IPv4 at all (no address, so no IPv4 route: only
// loopback's 127/8, which is in the local table). It is the host of a
// NAT64 network: the rows that test NAT64 run their client here, while
// the server namespace, its addresses and the DNS server are the bed's.
//
//	v6-only ns hev2-<pid>-<n>-n                 server ns
//	n6 2001:db8:1::8000:0:0:1/64 ── veth ──  s6n 2001:db8:1::2/64
//	route 2001:db8::/32 via 2001:db8:1::2
//
// Every server address in 2001:db8::/32 (the standard ones, and the
// synthesized addresses of NAT64 prefixes of every RFC 6052 length inside
// 2001:db8::/32) is reached through the server end of the link. The
// client's address has its top host bit set like the other client's, so
// RFC 6724 rule 9 ties between the server addresses the rows compare.
var (
	ClientV6Only     = netip.MustParseAddr("2001:db8:1::8000:0:0:1")
	ServerLinkV6Only = netip.MustParseAddr("2001:db8:1::2")
	v6OnlyLinkPrefix = netip.MustParsePrefix("2001:db8:1::/64")
)

const (
	macClientV6Only = "02:68:65:76:06:11"
	macServerV6Only = "02:68:65:76:06:12"
)

func (b *Bed) createV6Only() error {
	if err := run("ip", "netns", "add", b.V6OnlyNS); err != nil {
		return err
	}
	b.created = append(b.created, b.V6OnlyNS)
	noDAD := []string{"net.ipv6.conf.all.accept_dad=0", "net.ipv6.conf.default.accept_dad=0"}
	if err := sysctl(b.V6OnlyNS, noDAD...); err != nil {
		return err
	}
	client := []string{
		"link add n6 type veth peer name s6n netns " + b.ServerNS,
		"link set lo up",
		"link set n6 address " + macClientV6Only,
		"link set n6 addrgenmode none",
		"addr add " + ClientV6Only.String() + "/64 dev n6 nodad",
		"link set n6 up",
		"neigh replace " + ServerLinkV6Only.String() + " lladdr " + macServerV6Only + " dev n6 nud permanent",
		"route add 2001:db8::/32 via " + ServerLinkV6Only.String() + " dev n6",
	}
	server := []string{
		"link set s6n address " + macServerV6Only,
		"link set s6n addrgenmode none",
		"addr add " + ServerLinkV6Only.String() + "/64 dev s6n nodad",
		"link set s6n up",
		"neigh replace " + ClientV6Only.String() + " lladdr " + macClientV6Only + " dev s6n nud permanent",
	}
	if err := ipBatch(b.V6OnlyNS, client); err != nil {
		return err
	}
	return ipBatch(b.ServerNS, server)
}

// ClientNSFor is the client namespace a row runs in.
func (b *Bed) ClientNSFor(row Scenario) string {
	if row.IPv6Only {
		return b.V6OnlyNS
	}
	return b.ClientNS
}
