package netstate_test

import (
	"hash/fnv"
	"net/netip"
	"sort"
	"testing"

	"golang.org/x/sys/unix"

	"github.com/hev2/hev2/internal/netstate"
)

// addr is an address as an RTM_NEWADDR dump gives it, written with its
// prefix length as `ip addr` shows it.
func addr(s string) netip.Addr {
	return netip.MustParsePrefix(s).Addr()
}

func route(family int, dst, gw string, link int) netstate.Route {
	r := netstate.Route{Family: family, Type: unix.RTN_UNICAST, Table: unix.RT_TABLE_MAIN, Ifindex: link}
	if dst != "" {
		r.Dst = netip.MustParsePrefix(dst)
	}
	if gw != "" {
		r.Gateway = netip.MustParseAddr(gw)
	}
	return r
}

var names = map[int]string{1: "lo", 2: "eth0", 3: "wlan0"}

func TestComputeFamiliesAndRoutes(t *testing.T) {
	cases := []struct {
		name   string
		addrs  []netip.Addr
		routes []netstate.Route
		want   netstate.Snapshot
	}{
		{"loopback only", []netip.Addr{addr("127.0.0.1/8"), addr("::1/128")}, nil,
			netstate.Snapshot{Known: true}},
		{"link-local IPv6 is not IPv6",
			[]netip.Addr{addr("fe80::1/64")},
			[]netstate.Route{route(unix.AF_INET6, "fe80::/64", "", 2)},
			netstate.Snapshot{Known: true}},
		{"IPv6-only with a router",
			[]netip.Addr{addr("2001:db8::2/64"), addr("fe80::1/64")},
			[]netstate.Route{route(unix.AF_INET6, "2001:db8::/64", "", 2), route(unix.AF_INET6, "", "fe80::1", 2)},
			netstate.Snapshot{Known: true, HaveIPv6: true, IPv6Route: true}},
		{"dual stack",
			[]netip.Addr{addr("198.18.0.2/24"), addr("2001:db8::2/64")},
			[]netstate.Route{route(unix.AF_INET, "198.18.0.0/24", "", 2), route(unix.AF_INET6, "2001:db8::/64", "", 2)},
			netstate.Snapshot{Known: true, HaveIPv4: true, HaveIPv6: true, IPv4Route: true, IPv6Route: true}},
		{"an IPv4 address without a route",
			[]netip.Addr{addr("198.18.0.2/32")}, nil,
			netstate.Snapshot{Known: true, HaveIPv4: true}},
	}
	for _, c := range cases {
		got := netstate.Compute(c.addrs, c.routes, names)
		got.Network = 0
		if got != c.want {
			t.Errorf("%s: got %+v, want %+v", c.name, got, c.want)
		}
	}
}

func TestComputeIgnoresNonUnicastAndOtherTables(t *testing.T) {
	blackhole := route(unix.AF_INET6, "", "", 0)
	blackhole.Type = unix.RTN_BLACKHOLE
	policy := route(unix.AF_INET, "", "198.18.0.1", 2)
	policy.Table = 100
	got := netstate.Compute(nil, []netstate.Route{blackhole, policy}, names)
	if got.IPv4Route || got.IPv6Route {
		t.Errorf("a blackhole or another table's route counted: %+v", got)
	}
}

// The identity follows the routers and on-link prefixes, not the host's
// own addresses (IPv6 temporary addresses rotate on one network).
func TestNetworkIdentity(t *testing.T) {
	base := []netstate.Route{
		route(unix.AF_INET6, "2001:db8:1::/64", "", 2),
		route(unix.AF_INET6, "", "fe80::1", 2),
		route(unix.AF_INET, "198.18.0.0/24", "", 2),
		route(unix.AF_INET, "", "198.18.0.1", 2),
	}
	home := netstate.Compute([]netip.Addr{addr("2001:db8:1::aaaa/64")}, base, names)
	rotated := netstate.Compute([]netip.Addr{addr("2001:db8:1::bbbb/64"), addr("2001:db8:1::cccc/64")}, base, names)
	if home.Network == 0 || home.Network != rotated.Network {
		t.Errorf("a rotated address changed the network: %x vs %x", home.Network, rotated.Network)
	}
	reordered := append([]netstate.Route{base[3], base[2]}, base[:2]...)
	if n := netstate.Compute(nil, reordered, names).Network; n != home.Network {
		t.Errorf("the order of the dump changed the network: %x vs %x", n, home.Network)
	}
	other := append([]netstate.Route{}, base...)
	other[3] = route(unix.AF_INET, "", "198.18.0.254", 2)
	if n := netstate.Compute(nil, other, names).Network; n == home.Network {
		t.Error("another IPv4 router is the same network")
	}
	other = append([]netstate.Route{}, base...)
	other[0] = route(unix.AF_INET6, "2001:db8:2::/64", "", 2)
	if n := netstate.Compute(nil, other, names).Network; n == home.Network {
		t.Error("another on-link prefix is the same network")
	}
	other = append([]netstate.Route{}, base...)
	other[1] = route(unix.AF_INET6, "", "fe80::1", 3)
	if n := netstate.Compute(nil, other, names).Network; n == home.Network {
		t.Error("the same router address on another interface is the same network")
	}
	// Routes via a router to one prefix are the network's inner structure.
	inner := append(append([]netstate.Route{}, base...), route(unix.AF_INET, "198.19.0.0/16", "198.18.0.1", 2))
	if n := netstate.Compute(nil, inner, names).Network; n != home.Network {
		t.Error("a route to an inner prefix changed the network")
	}
}

// identity is the Network the documented derivation gives for these
// strings: FNV-1a over them sorted, each followed by a NUL.
func identity(ids ...string) uint64 {
	sorted := append([]string(nil), ids...)
	sort.Strings(sorted)
	h := fnv.New64a()
	for _, id := range sorted {
		h.Write([]byte(id))
		h.Write([]byte{0})
	}
	return h.Sum64()
}

// The identity hashes the same strings for the same network in every
// version (history is keyed by it): "router GATEWAY IFNAME" per default
// router, "default dev IFNAME" for a default route without one, "onlink
// PREFIX IFNAME" per on-link prefix, addresses and prefixes spelled as
// net.IP and net.IPNet spell them (an IPv4-mapped prefix as IPv4), an
// interface without a name as "if" and its index.
func TestNetworkIdentityStrings(t *testing.T) {
	multipath := route(unix.AF_INET, "", "", 0)
	multipath.Nexthops = []netstate.Nexthop{
		{Gateway: netip.MustParseAddr("198.18.0.1"), Ifindex: 2},
		{Gateway: netip.MustParseAddr("198.18.0.3"), Ifindex: 3},
		{Ifindex: 2}, // a hop without a router names nothing
	}
	routes := []netstate.Route{
		multipath,
		route(unix.AF_INET6, "", "fe80::1", 9),
		route(unix.AF_INET6, "2001:db8:1::/64", "", 2),
		route(unix.AF_INET6, "::ffff:198.51.100.0/120", "", 3),
		route(unix.AF_INET, "198.18.0.0/24", "", 2),
		route(unix.AF_INET, "198.19.0.0/16", "198.18.0.1", 2),
	}
	want := identity("router 198.18.0.1 eth0", "router 198.18.0.3 wlan0", "router fe80::1 if9",
		"onlink 2001:db8:1::/64 eth0", "onlink 198.51.100.0/24 wlan0", "onlink 198.18.0.0/24 eth0")
	if got := netstate.Compute(nil, routes, names).Network; got != want {
		t.Errorf("network %x, want %x", got, want)
	}
	pointToPoint := []netstate.Route{route(unix.AF_INET, "", "", 3), route(unix.AF_INET6, "::/0", "", 3)}
	if got, want := netstate.Compute(nil, pointToPoint, names).Network, identity("default dev wlan0", "default dev wlan0"); got != want {
		t.Errorf("default routes without a router: network %x, want %x", got, want)
	}
}
