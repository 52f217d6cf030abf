package netstate

import (
	"hash/fnv"
	"net"
	"sort"
	"strconv"

	"github.com/vishvananda/netlink"
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

// compute derives a snapshot (Generation unset) from the kernel's
// addresses, main-table routes and interface names.
func compute(addrs []netlink.Addr, routes []netlink.Route, ifnames map[int]string) Snapshot {
	s := Snapshot{Known: true}
	for _, a := range addrs {
		if a.IPNet == nil {
			continue
		}
		ip := a.IP
		switch {
		case ip.IsLoopback():
		case ip.To4() != nil:
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
		if r.Dst != nil && (r.Dst.IP.IsLoopback() || (!v4 && r.Dst.IP.IsLinkLocalUnicast())) {
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
func routeIdentity(r netlink.Route, ifnames map[int]string) []string {
	dflt := r.Dst == nil || isZeroPrefix(r.Dst)
	if dflt {
		var ids []string
		if r.Gw != nil {
			ids = append(ids, "router "+r.Gw.String()+" "+ifname(r.LinkIndex, ifnames))
		}
		for _, hop := range r.MultiPath {
			if hop.Gw != nil {
				ids = append(ids, "router "+hop.Gw.String()+" "+ifname(hop.LinkIndex, ifnames))
			}
		}
		if len(ids) == 0 {
			// A default route without a router (a point-to-point
			// link): the interface is the network.
			ids = append(ids, "default dev "+ifname(r.LinkIndex, ifnames))
		}
		return ids
	}
	if r.Gw == nil && len(r.MultiPath) == 0 {
		return []string{"onlink " + r.Dst.String() + " " + ifname(r.LinkIndex, ifnames)}
	}
	return nil
}

func isZeroPrefix(n *net.IPNet) bool {
	ones, _ := n.Mask.Size()
	return ones == 0
}

// ifname names an interface by name rather than index: indices change
// when an interface is recreated (a VPN reconnecting), names do not.
func ifname(index int, names map[int]string) string {
	if n, ok := names[index]; ok {
		return n
	}
	return "if" + strconv.Itoa(index)
}
