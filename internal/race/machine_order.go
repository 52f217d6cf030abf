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
	if m.indexOf(e.addr) >= 0 {
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
