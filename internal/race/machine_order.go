package race

import (
	"net/netip"
	"time"
)

// admit adds destinations of one origin to the race, each on the race's
// port.
func (m *Machine) admit(now time.Duration, addrs []netip.Addr, origin Origin) {
	added := false
	for _, a := range addrs {
		added = m.admitOne(now, endpoint{addr: a, port: m.cfg.Port, origin: origin}) || added
	}
	if added {
		m.reorder()
	}
}

// admitOne adds e, once NAT64 (when it applies) has held or synthesized
// it (admitNAT64), and reports whether it did; the caller reorders.
func (m *Machine) admitOne(now time.Duration, e endpoint) bool {
	if m.cfg.NAT64 != nil && !m.admitNAT64(now, &e) {
		return false
	}
	return m.add(e)
}

// addAll adds endpoints as they are (see add).
func (m *Machine) addAll(eps []endpoint) {
	added := false
	for _, e := range eps {
		added = m.add(e) || added
	}
	if added {
		m.reorder()
	}
}

// add adds e unless its address is known already, and reports whether it
// did. The caller reorders, once for all it adds, so that late answers
// join in their sorted position while what was already tried stays tried.
func (m *Machine) add(e endpoint) bool {
	if i := m.indexOfEndpoint(e.addr, e.port); i >= 0 {
		// Known already. An untried one that a service also names moves
		// to the service, which is tried earlier.
		if old := &m.endpoints[i]; !old.tried && e.service != 0 && (old.service == 0 || e.service < old.service) {
			old.service, old.origin = e.service, e.origin
			return true
		}
		return false
	}
	m.endpoints = append(m.endpoints, e)
	m.untried++
	return true
}

// reorder computes the order of every endpoint: RFC 6724, then the
// interleave by family, both with addresses inside the NAT64 prefixes
// counted as IPv4.
func (m *Machine) reorder() {
	if m.cfg.HTTPS != nil {
		m.reorderByService()
		return
	}
	if len(m.endpoints) == 1 {
		// One address (an IP literal, a one-address name): nothing to
		// sort or interleave.
		m.order = append(m.order[:0], 0)
		return
	}
	all := make([]netip.Addr, len(m.endpoints))
	for i := range m.endpoints {
		all[i] = m.endpoints[i].addr
	}
	if len(all) > 1 && m.cfg.Sort != nil {
		all = m.cfg.Sort(all, m.nat64Prefixes())
	}
	all = preferFamily(all, m.cfg.History.First, m.nat64Prefixes())
	all = InterleaveNAT64(all, m.cfg.FirstAddressFamilyCount, m.nat64Prefixes())
	m.order = m.order[:0]
	for _, a := range all {
		m.order = append(m.order, m.indexOf(a))
	}
}

// indexOfEndpoint finds the endpoint of address a on port.
func (m *Machine) indexOfEndpoint(a netip.Addr, port uint16) int {
	for i := range m.endpoints {
		if m.endpoints[i].addr == a && m.endpoints[i].port == port {
			return i
		}
	}
	return -1
}

// reorderByService is reorder for a race with services: the endpoints of
// each service in the services' order, the origin's own last, each group
// in RFC 6724 order interleaved by family. Within a group every endpoint
// has the group's port, so an address names it.
func (m *Machine) reorderByService() {
	m.order = m.order[:0]
	groups := len(m.https().out.Services) + 1
	for g := 1; g <= groups; g++ {
		svc := uint8(g)
		if g == groups {
			svc = 0 // the origin's own addresses, last
		}
		var idx []int
		var addrs []netip.Addr
		for i := range m.endpoints {
			if m.endpoints[i].service == svc {
				idx = append(idx, i)
				addrs = append(addrs, m.endpoints[i].addr)
			}
		}
		if len(addrs) > 1 {
			if m.cfg.Sort != nil {
				addrs = m.cfg.Sort(addrs, m.nat64Prefixes())
			}
			addrs = preferFamily(addrs, m.cfg.History.First, m.nat64Prefixes())
			addrs = InterleaveNAT64(addrs, m.cfg.FirstAddressFamilyCount, m.nat64Prefixes())
		}
		for _, a := range addrs {
			for _, i := range idx {
				if m.endpoints[i].addr == a {
					m.order = append(m.order, i)
					break
				}
			}
		}
	}
}

// serviceOfAttempt is the service (endpoint.service) of the endpoint at
// addr, 0 when it is the origin's.
func (m *Machine) serviceOfAttempt(addr netip.AddrPort) int {
	if i := m.indexOfEndpoint(addr.Addr(), addr.Port()); i >= 0 {
		return int(m.endpoints[i].service)
	}
	return 0
}

func (m *Machine) indexOf(a netip.Addr) int {
	for i := range m.endpoints {
		if m.endpoints[i].addr == a {
			return i
		}
	}
	return -1
}

// addrsOfFamily keeps the addresses of family f (IPv4-mapped addresses
// count as IPv4 and are unmapped), dropping duplicates.
func addrsOfFamily(addrs []netip.Addr, f Family) []netip.Addr {
	out := addrs[:0:0]
	for _, a := range addrs {
		if f == IPv4 {
			a = a.Unmap()
		}
		if FamilyOf(a) != f || containsAddr(out, a) {
			continue
		}
		out = append(out, a)
	}
	return out
}

func containsAddr(list []netip.Addr, a netip.Addr) bool {
	for _, b := range list {
		if a == b {
			return true
		}
	}
	return false
}

// Interleave orders addresses by family as RFC 8305 §4 asks: the first
// firstCount addresses of the preferred family (the family of addrs[0]),
// then alternately one of the other family and one of the preferred. The
// relative order inside each family is kept.
func Interleave(addrs []netip.Addr, firstCount int) []netip.Addr {
	return InterleaveNAT64(addrs, firstCount, nil)
}

// InterleaveNAT64 is Interleave where an IPv6 address inside one of the
// discovered NAT64 prefixes counts as IPv4 (Happy Eyeballs v3): the
// translated path alternates with real IPv6 as IPv4 would.
func InterleaveNAT64(addrs []netip.Addr, firstCount int, prefixes []netip.Prefix) []netip.Addr {
	if len(addrs) < 2 {
		return addrs
	}
	if firstCount < 1 {
		firstCount = 1
	}
	famOf := func(a netip.Addr) Family { return familyNAT64(a, prefixes) }
	first := famOf(addrs[0])
	var primary, secondary []netip.Addr
	for _, a := range addrs {
		if famOf(a) == first {
			primary = append(primary, a)
		} else {
			secondary = append(secondary, a)
		}
	}
	out := make([]netip.Addr, 0, len(addrs))
	n := min(firstCount, len(primary))
	out = append(out, primary[:n]...)
	primary = primary[n:]
	for len(primary) > 0 || len(secondary) > 0 {
		if len(secondary) > 0 {
			out = append(out, secondary[0])
			secondary = secondary[1:]
		}
		if len(primary) > 0 {
			out = append(out, primary[0])
			primary = primary[1:]
		}
	}
	return out
}
