package race

import "net/netip"

// addAddrs adds the addresses not seen before and recomputes the order of
// the whole list, so that late answers join in their sorted position while
// what was already tried stays tried.
// from, when not nil, gives for each address the IPv4 address it was
// synthesized from (NAT64) or the zero Addr.
func (m *Machine) addAddrs(addrs, from []netip.Addr) {
	added := false
	for i, a := range addrs {
		if m.indexOf(a) < 0 {
			c := candidate{addr: a}
			if from != nil {
				c.from = from[i]
			}
			m.cands = append(m.cands, c)
			m.untried++
			added = true
		}
	}
	if added {
		m.reorder()
	}
}

// reorder computes the order of every candidate: RFC 6724, then the
// interleave by family, both with addresses inside the NAT64 prefixes
// counted as IPv4.
func (m *Machine) reorder() {
	if len(m.cands) == 1 {
		// One address (an IP literal, a one-address name): nothing to
		// sort or interleave.
		m.order = append(m.order[:0], 0)
		return
	}
	all := make([]netip.Addr, len(m.cands))
	for i := range m.cands {
		all[i] = m.cands[i].addr
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
	for i := range m.cands {
		if m.cands[i].addr == a {
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
