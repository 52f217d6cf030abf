package netstate

import (
	"hash/fnv"
	"net/netip"
	"sort"
	"strconv"

	"golang.org/x/sys/unix"
)

// Snapshot is what the host's network looked like at the last change the
// kernel announced.
type Snapshot struct {
	// Known says netlink answered; if false nothing below may be relied on.
	Known bool
	// HaveIPv4 is a usable IPv4 address (not loopback).
	HaveIPv4 bool
	// HaveIPv6 is a usable IPv6 address (not loopback, not link-local).
	HaveIPv6 bool
	// IPv4Route is an IPv4 route to somewhere beyond this host: a
	// main-table unicast route whose destination is not loopback.
	IPv4Route bool
	// IPv6Route is the same for IPv6; link-local (fe80::/10) routes, which
	// every interface has, do not count.
	IPv6Route bool
	// Network identifies the attached network: a hash of the default
	// routers (gateway and interface) and the on-link prefixes. Zero when
	// !Known.
	Network uint64
	// Generation increases at every change of any other field.
	Generation uint64
}

// sameState reports whether two snapshots describe the same network,
// generations aside.
func sameState(a, b Snapshot) bool {
	a.Generation, b.Generation = 0, 0
	return a == b
}

// route is what compute needs of a kernel route.
type route struct {
	Family int // unix.AF_INET or unix.AF_INET6
	Type   int // unix.RTN_*
	Table  int // RTA_TABLE when present, else rtm_table
	// Dst is the destination; the zero Prefix for none (a default route).
	Dst netip.Prefix
	// Gateway is the zero Addr for none.
	Gateway  netip.Addr
	Ifindex  int // the output interface
	Nexthops []nexthop
}

// nexthop is one next hop of a multipath route.
type nexthop struct {
	Gateway netip.Addr
	Ifindex int
}

// compute derives a snapshot (Generation unset) from the kernel's
// addresses, main-table routes and interface names. An IPv4-mapped IPv6
// address counts as IPv4 (as net.IP sees it, which the identity has
// always followed).
func compute(addrs []netip.Addr, routes []route, ifnames map[int]string) Snapshot {
	s := Snapshot{Known: true}
	for _, ip := range addrs {
		switch {
		case !ip.IsValid():
		case ip.IsLoopback():
		case ip.Is4() || ip.Is4In6():
			s.HaveIPv4 = true
		case ip.IsLinkLocalUnicast():
			// fe80::/10 reaches no name's global address.
		default:
			s.HaveIPv6 = true
		}
	}
	var identity []string
	for _, r := range routes {
		if r.Type != unix.RTN_UNICAST || (r.Table != 0 && r.Table != unix.RT_TABLE_MAIN) {
			continue
		}
		v4 := r.Family == unix.AF_INET
		if dst := r.Dst.Addr(); r.Dst.IsValid() && (dst.IsLoopback() || (!v4 && dst.IsLinkLocalUnicast())) {
			continue
		}
		if v4 {
			s.IPv4Route = true
		} else {
			s.IPv6Route = true
		}
		identity = append(identity, routeIdentity(r, ifnames)...)
	}
	sort.Strings(identity)
	h := fnv.New64a()
	for _, id := range identity {
		h.Write([]byte(id))
		h.Write([]byte{0})
	}
	s.Network = h.Sum64()
	if s.Network == 0 {
		s.Network = 1 // zero means unknown
	}
	return s
}

// routeIdentity names what of a route identifies the network: a default
// route's routers, or an on-link prefix. Routes via a gateway to a
// particular prefix are the network's inner structure, not its identity.
func routeIdentity(r route, ifnames map[int]string) []string {
	if !r.Dst.IsValid() || r.Dst.Bits() == 0 {
		var ids []string
		if r.Gateway.IsValid() {
			ids = append(ids, "router "+ipString(r.Gateway)+" "+ifname(r.Ifindex, ifnames))
		}
		for _, hop := range r.Nexthops {
			if hop.Gateway.IsValid() {
				ids = append(ids, "router "+ipString(hop.Gateway)+" "+ifname(hop.Ifindex, ifnames))
			}
		}
		if len(ids) == 0 {
			// A default route without a router (a point-to-point
			// link): the interface is the network.
			ids = append(ids, "default dev "+ifname(r.Ifindex, ifnames))
		}
		return ids
	}
	if !r.Gateway.IsValid() && len(r.Nexthops) == 0 {
		return []string{"onlink " + prefixString(r.Dst) + " " + ifname(r.Ifindex, ifnames)}
	}
	return nil
}

// ipString and prefixString spell addresses and prefixes as net.IP and
// net.IPNet do, which the identity has always hashed: an IPv4-mapped
// address as IPv4, its prefix length counted past the first 96 bits.
func ipString(a netip.Addr) string { return a.Unmap().String() }

func prefixString(p netip.Prefix) string {
	if a := p.Addr(); a.Is4In6() {
		return a.Unmap().String() + "/" + strconv.Itoa(max(p.Bits()-96, 0))
	}
	return p.String()
}

// ifname names an interface by name rather than index: indices change
// when an interface is recreated (a VPN reconnecting), names do not.
func ifname(index int, names map[int]string) string {
	if n, ok := names[index]; ok {
		return n
	}
	return "if" + strconv.Itoa(index)
}
