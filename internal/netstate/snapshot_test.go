package netstate_test

import (
	"net"
	"testing"

	"github.com/vishvananda/netlink"
	"golang.org/x/sys/unix"

	"github.com/hev2/hev2/internal/netstate"
)

func prefix(s string) *net.IPNet {
	_, n, err := net.ParseCIDR(s)
	if err != nil {
		panic(err)
	}
	return n
}

func addr(s string) netlink.Addr {
	ip, n, err := net.ParseCIDR(s)
	if err != nil {
		panic(err)
	}
	n.IP = ip
	return netlink.Addr{IPNet: n}
}

func route(family int, dst, gw string, link int) netlink.Route {
	r := netlink.Route{Family: family, Type: unix.RTN_UNICAST, Table: unix.RT_TABLE_MAIN, LinkIndex: link}
	if dst != "" {
		r.Dst = prefix(dst)
	}
	if gw != "" {
		r.Gw = net.ParseIP(gw)
	}
	return r
}

var names = map[int]string{1: "lo", 2: "eth0", 3: "wlan0"}

func TestComputeFamiliesAndRoutes(t *testing.T) {
	cases := []struct {
		name   string
		addrs  []netlink.Addr
		routes []netlink.Route
		want   netstate.Snapshot
	}{
		{"loopback only", []netlink.Addr{addr("127.0.0.1/8"), addr("::1/128")}, nil,
			netstate.Snapshot{Known: true}},
		{"link-local IPv6 is not IPv6",
			[]netlink.Addr{addr("fe80::1/64")},
			[]netlink.Route{route(unix.AF_INET6, "fe80::/64", "", 2)},
			netstate.Snapshot{Known: true}},
		{"IPv6-only with a router",
			[]netlink.Addr{addr("2001:db8::2/64"), addr("fe80::1/64")},
			[]netlink.Route{route(unix.AF_INET6, "2001:db8::/64", "", 2), route(unix.AF_INET6, "", "fe80::1", 2)},
			netstate.Snapshot{Known: true, HaveIPv6: true, IPv6Route: true}},
		{"dual stack",
			[]netlink.Addr{addr("198.18.0.2/24"), addr("2001:db8::2/64")},
			[]netlink.Route{route(unix.AF_INET, "198.18.0.0/24", "", 2), route(unix.AF_INET6, "2001:db8::/64", "", 2)},
			netstate.Snapshot{Known: true, HaveIPv4: true, HaveIPv6: true, IPv4Route: true, IPv6Route: true}},
		{"an IPv4 address without a route",
			[]netlink.Addr{addr("198.18.0.2/32")}, nil,
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
	got := netstate.Compute(nil, []netlink.Route{blackhole, policy}, names)
	if got.IPv4Route || got.IPv6Route {
		t.Errorf("a blackhole or another table's route counted: %+v", got)
	}
}

// The identity follows the routers and on-link prefixes, not the host's
// own addresses (IPv6 temporary addresses rotate on one network).
func TestNetworkIdentity(t *testing.T) {
	base := []netlink.Route{
		route(unix.AF_INET6, "2001:db8:1::/64", "", 2),
		route(unix.AF_INET6, "", "fe80::1", 2),
		route(unix.AF_INET, "198.18.0.0/24", "", 2),
		route(unix.AF_INET, "", "198.18.0.1", 2),
	}
	home := netstate.Compute([]netlink.Addr{addr("2001:db8:1::aaaa/64")}, base, names)
	rotated := netstate.Compute([]netlink.Addr{addr("2001:db8:1::bbbb/64"), addr("2001:db8:1::cccc/64")}, base, names)
	if home.Network == 0 || home.Network != rotated.Network {
		t.Errorf("a rotated address changed the network: %x vs %x", home.Network, rotated.Network)
	}
	reordered := append([]netlink.Route{base[3], base[2]}, base[:2]...)
	if n := netstate.Compute(nil, reordered, names).Network; n != home.Network {
		t.Errorf("the order of the dump changed the network: %x vs %x", n, home.Network)
	}
	other := append([]netlink.Route{}, base...)
	other[3] = route(unix.AF_INET, "", "198.18.0.254", 2)
	if n := netstate.Compute(nil, other, names).Network; n == home.Network {
		t.Error("another IPv4 router is the same network")
	}
	other = append([]netlink.Route{}, base...)
	other[0] = route(unix.AF_INET6, "2001:db8:2::/64", "", 2)
	if n := netstate.Compute(nil, other, names).Network; n == home.Network {
		t.Error("another on-link prefix is the same network")
	}
	other = append([]netlink.Route{}, base...)
	other[1] = route(unix.AF_INET6, "", "fe80::1", 3)
	if n := netstate.Compute(nil, other, names).Network; n == home.Network {
		t.Error("the same router address on another interface is the same network")
	}
	// Routes via a router to one prefix are the network's inner structure.
	inner := append(append([]netlink.Route{}, base...), route(unix.AF_INET, "198.19.0.0/16", "198.18.0.1", 2))
	if n := netstate.Compute(nil, inner, names).Network; n != home.Network {
		t.Error("a route to an inner prefix changed the network")
	}
}
