package netstate

import (
	"encoding/binary"
	"fmt"
	"net/netip"

	"golang.org/x/sys/unix"
)

// readAttempts bounds the dumps one read makes while the kernel's tables
// keep changing under them; each change also wakes the watcher, which
// reads again.
const readAttempts = 3

// read dumps addresses and main-table routes and names the interfaces
// those routes use; any failure makes the state unknown rather than
// half-known.
func read() Snapshot {
	for range readAttempts {
		s, err := readOnce()
		if err == nil {
			return s
		}
		if err != errDumpInterrupted {
			break
		}
	}
	return Snapshot{}
}

func readOnce() (Snapshot, error) {
	c, err := dialRtnl()
	if err != nil {
		return Snapshot{}, err
	}
	defer c.close()
	var addrs []netip.Addr
	err = c.dump(unix.RTM_GETADDR, unix.SizeofIfAddrmsg, func(body []byte) error {
		a, err := parseAddr(body)
		if a.IsValid() {
			addrs = append(addrs, a)
		}
		return err
	})
	if err != nil {
		return Snapshot{}, err
	}
	var routes []route
	err = c.dump(unix.RTM_GETROUTE, unix.SizeofRtMsg, func(body []byte) error {
		r, ok, err := parseRoute(body)
		if ok && r.Table == unix.RT_TABLE_MAIN {
			routes = append(routes, r)
		}
		return err
	})
	if err != nil {
		return Snapshot{}, err
	}
	names, err := routeInterfaceNames(c, routes)
	if err != nil {
		return Snapshot{}, err
	}
	return compute(addrs, routes, names), nil
}

// routeInterfaceNames names every interface the routes use, and only
// those: a host may have many more (one per container).
func routeInterfaceNames(c *rtnl, routes []route) (map[int]string, error) {
	names := make(map[int]string, 4)
	add := func(index int) error {
		if _, seen := names[index]; seen {
			return nil
		}
		name, ok, err := c.ifname(index)
		if ok {
			names[index] = name
		}
		return err
	}
	for _, r := range routes {
		if err := add(r.Ifindex); err != nil {
			return nil, err
		}
		for _, hop := range r.Nexthops {
			if err := add(hop.Ifindex); err != nil {
				return nil, err
			}
		}
	}
	return names, nil
}

// parseAddr returns the address of an RTM_NEWADDR body (struct ifaddrmsg
// and attributes): IFA_LOCAL, else IFA_ADDRESS (IFA_ADDRESS is the peer's
// on a point-to-point link). The zero Addr: not an IP address.
func parseAddr(body []byte) (netip.Addr, error) {
	if len(body) < unix.SizeofIfAddrmsg {
		return netip.Addr{}, fmt.Errorf("rtnetlink: an address message of %d bytes", len(body))
	}
	if family := body[0]; family != unix.AF_INET && family != unix.AF_INET6 {
		return netip.Addr{}, nil
	}
	var local, address netip.Addr
	err := eachAttr(body[unix.SizeofIfAddrmsg:], func(typ uint16, val []byte) {
		switch typ {
		case unix.IFA_LOCAL:
			local, _ = netip.AddrFromSlice(val)
		case unix.IFA_ADDRESS:
			address, _ = netip.AddrFromSlice(val)
		}
	})
	if local.IsValid() {
		return local, err
	}
	return address, err
}

// parseRoute returns what compute needs of an RTM_NEWROUTE body (struct
// rtmsg and attributes); ok is false for a route that is not an IPv4 or
// IPv6 one of the routing tables (a cached clone, an MPLS label route).
func parseRoute(body []byte) (r route, ok bool, err error) {
	if len(body) < unix.SizeofRtMsg {
		return route{}, false, fmt.Errorf("rtnetlink: a route message of %d bytes", len(body))
	}
	family, dstLen, table, typ := body[0], int(body[1]), body[4], body[7]
	flags := binary.NativeEndian.Uint32(body[8:12])
	if (family != unix.AF_INET && family != unix.AF_INET6) || flags&unix.RTM_F_CLONED != 0 {
		return route{}, false, nil
	}
	r = route{Family: int(family), Type: int(typ), Table: int(table)}
	var hopsErr error
	err = eachAttr(body[unix.SizeofRtMsg:], func(typ uint16, val []byte) {
		switch typ {
		case unix.RTA_TABLE:
			if len(val) >= 4 {
				r.Table = int(binary.NativeEndian.Uint32(val))
			}
		case unix.RTA_DST:
			if a, ok := netip.AddrFromSlice(val); ok {
				r.Dst = netip.PrefixFrom(a, dstLen)
			}
		case unix.RTA_GATEWAY:
			r.Gateway, _ = netip.AddrFromSlice(val)
		case unix.RTA_OIF:
			if len(val) >= 4 {
				r.Ifindex = int(binary.NativeEndian.Uint32(val))
			}
		case unix.RTA_MULTIPATH:
			r.Nexthops, hopsErr = parseNexthops(val)
		}
	})
	if err == nil {
		err = hopsErr
	}
	if err != nil {
		return route{}, false, err
	}
	return r, true, nil
}

// parseNexthops reads RTA_MULTIPATH: struct rtnexthop entries, each with
// its own attributes.
func parseNexthops(b []byte) ([]nexthop, error) {
	var hops []nexthop
	for len(b) > 0 {
		if len(b) < unix.SizeofRtNexthop {
			return nil, fmt.Errorf("rtnetlink: a next hop of %d bytes", len(b))
		}
		n := int(binary.NativeEndian.Uint16(b[0:2]))
		if n < unix.SizeofRtNexthop || n > len(b) {
			return nil, fmt.Errorf("rtnetlink: a next hop of %d bytes in %d", n, len(b))
		}
		hop := nexthop{Ifindex: int(int32(binary.NativeEndian.Uint32(b[4:8])))}
		err := eachAttr(b[unix.SizeofRtNexthop:n], func(typ uint16, val []byte) {
			if typ == unix.RTA_GATEWAY {
				hop.Gateway, _ = netip.AddrFromSlice(val)
			}
		})
		if err != nil {
			return nil, err
		}
		hops = append(hops, hop)
		b = b[min(align4(n), len(b)):]
	}
	return hops, nil
}
