package race

import "net/netip"

// NAT64 (RFC 6052, RFC 7050, RFC 8880): the pure rules. A host on an
// IPv6-only network behind a NAT64 translator reaches an IPv4 address by
// connecting to that address embedded in the translator's IPv6 prefix
// (PREF64). Discovery of the prefix is I/O and lives with the resolvers;
// everything here is arithmetic the machine and the discovery share.

// Prefix64Lengths are the prefix lengths RFC 6052 §2.2 allows, longest
// first: the order in which RFC 7050 §3 looks for the well-known IPv4
// addresses in an answer (a /96 is the common case, and a shorter prefix
// whose bits happen to hold 192.0.0.170 further right must not win over
// it).
var Prefix64Lengths = [...]int{96, 64, 56, 48, 40, 32}

// WellKnownPrefix is RFC 6052's 64:ff9b::/96. hev2 never assumes it: it is
// used only when discovery returns it.
var WellKnownPrefix = netip.MustParsePrefix("64:ff9b::/96")

// The well-known IPv4 addresses of ipv4only.arpa (RFC 7050 §2.2, RFC 8880):
// a DNS64 resolver synthesizes its AAAA answer from them, so finding them
// inside the answer reveals the prefix and its length.
var (
	IPv4OnlyName = "ipv4only.arpa"
	WKA1         = netip.AddrFrom4([4]byte{192, 0, 0, 170})
	WKA2         = netip.AddrFrom4([4]byte{192, 0, 0, 171})
)

// ValidPrefix64 reports whether p can be a NAT64 prefix: IPv6 (not
// IPv4-mapped), one of RFC 6052's lengths, host bits clear, and for the
// lengths below /96 the reserved u-octet (bits 64-71) clear, which a
// masked prefix of at most 64 bits always has.
func ValidPrefix64(p netip.Prefix) bool {
	a := p.Addr()
	if !p.IsValid() || !a.Is6() || a.Is4In6() || a.Zone() != "" || p != p.Masked() {
		return false
	}
	if a.IsMulticast() || a.IsLinkLocalUnicast() || a.IsLoopback() {
		return false
	}
	if a.As16()[8] != 0 {
		return false // RFC 6052 §2.2: bits 64-71 are zero in every length
	}
	for _, l := range Prefix64Lengths {
		if p.Bits() == l {
			return true
		}
	}
	return false
}

// v4Positions gives, per prefix length, the byte positions of the four
// IPv4 octets in the IPv6 address (RFC 6052 §2.2, figure 1): byte 8 (bits
// 64-71, the u-octet) is always skipped.
func v4Positions(bits int) [4]int {
	switch bits {
	case 32:
		return [4]int{4, 5, 6, 7}
	case 40:
		return [4]int{5, 6, 7, 9}
	case 48:
		return [4]int{6, 7, 9, 10}
	case 56:
		return [4]int{7, 9, 10, 11}
	case 64:
		return [4]int{9, 10, 11, 12}
	}
	return [4]int{12, 13, 14, 15} // 96
}

// Embed returns v4 embedded in the NAT64 prefix p (RFC 6052 §2.2): the
// prefix, the IPv4 address around the u-octet, zero suffix. p must be
// ValidPrefix64 and v4 IPv4 (or IPv4-mapped).
func Embed(p netip.Prefix, v4 netip.Addr) netip.Addr {
	b := p.Addr().As16()
	for i := p.Bits() / 8; i < 16; i++ {
		b[i] = 0
	}
	o := v4.Unmap().As4()
	for i, pos := range v4Positions(p.Bits()) {
		b[pos] = o[i]
	}
	return netip.AddrFrom16(b)
}

// Extract returns the IPv4 address embedded in a under prefix p, if a is
// inside p and shaped as RFC 6052 says (u-octet and suffix zero).
func Extract(p netip.Prefix, a netip.Addr) (netip.Addr, bool) {
	if !a.Is6() || a.Is4In6() || !p.Contains(a.WithZone("")) {
		return netip.Addr{}, false
	}
	b := a.As16()
	pos := v4Positions(p.Bits())
	var o [4]byte
	used := [16]bool{}
	for i, at := range pos {
		o[i] = b[at]
		used[at] = true
	}
	// Everything after the prefix that is not the IPv4 address (the
	// u-octet and the suffix) must be zero.
	for i := p.Bits() / 8; i < 16; i++ {
		if !used[i] && b[i] != 0 {
			return netip.Addr{}, false
		}
	}
	return netip.AddrFrom4(o), true
}

// PrefixFromIPv4Only finds the NAT64 prefix in one AAAA answer for
// ipv4only.arpa (RFC 7050 §3): the length at which one of the well-known
// IPv4 addresses sits in the address, with the u-octet and suffix zero.
// It reports false for an address that is no synthesis of them (which RFC
// 7050 says to ignore).
func PrefixFromIPv4Only(a netip.Addr) (netip.Prefix, bool) {
	if !a.Is6() || a.Is4In6() {
		return netip.Prefix{}, false
	}
	a = a.WithZone("")
	for _, l := range Prefix64Lengths {
		p := netip.PrefixFrom(a, l).Masked()
		if !ValidPrefix64(p) {
			continue
		}
		if v4, ok := Extract(p, a); ok && (v4 == WKA1 || v4 == WKA2) {
			return p, true
		}
	}
	return netip.Prefix{}, false
}

// PrefixesFromIPv4Only returns the distinct NAT64 prefixes of an answer
// for ipv4only.arpa, in the answer's order; addresses that reveal none
// are ignored.
func PrefixesFromIPv4Only(addrs []netip.Addr) []netip.Prefix {
	var out []netip.Prefix
	for _, a := range addrs {
		p, ok := PrefixFromIPv4Only(a)
		if !ok {
			continue
		}
		dup := false
		for _, q := range out {
			dup = dup || q == p
		}
		if !dup {
			out = append(out, p)
		}
	}
	return out
}

// Synthesizable reports whether v4 may be reached through NAT64 prefix p:
// never "this network" (0/8), loopback (127/8), link-local (169.254/16),
// multicast (224/4) or reserved and broadcast (240/4): they mean this host
// or its link, which no translator stands for. With the well-known prefix,
// only global IPv4 addresses (RFC 6052 §3.1: not RFC 1918 space nor any
// special-use block of RFC 5735 / RFC 6890).
func Synthesizable(v4 netip.Addr, p netip.Prefix) bool {
	v4 = v4.Unmap()
	if !v4.Is4() {
		return false
	}
	for _, q := range neverSynthesized {
		if q.Contains(v4) {
			return false
		}
	}
	if p == WellKnownPrefix {
		for _, q := range nonGlobal4 {
			if q.Contains(v4) {
				return false
			}
		}
	}
	return true
}

var neverSynthesized = []netip.Prefix{
	netip.MustParsePrefix("0.0.0.0/8"),
	netip.MustParsePrefix("127.0.0.0/8"),
	netip.MustParsePrefix("169.254.0.0/16"),
	netip.MustParsePrefix("224.0.0.0/4"),
	netip.MustParsePrefix("240.0.0.0/4"),
}

// nonGlobal4 is the IPv4 space RFC 6052 §3.1 keeps away from the
// well-known prefix: RFC 1918, shared address space (RFC 6598) and the
// special-use blocks of RFC 6890 that are not globally reachable.
var nonGlobal4 = []netip.Prefix{
	netip.MustParsePrefix("10.0.0.0/8"),
	netip.MustParsePrefix("100.64.0.0/10"),
	netip.MustParsePrefix("172.16.0.0/12"),
	netip.MustParsePrefix("192.0.0.0/24"),
	netip.MustParsePrefix("192.0.2.0/24"),
	netip.MustParsePrefix("192.88.99.0/24"),
	netip.MustParsePrefix("192.168.0.0/16"),
	netip.MustParsePrefix("198.18.0.0/15"),
	netip.MustParsePrefix("198.51.100.0/24"),
	netip.MustParsePrefix("203.0.113.0/24"),
}

// translated reports the IPv4 address an IPv6 destination stands for when
// it lies inside one of the discovered prefixes (a DNS64 answer or our own
// synthesis): such a destination is IPv4 beyond the translator.
func translated(a netip.Addr, prefixes []netip.Prefix) (netip.Addr, bool) {
	for _, p := range prefixes {
		if v4, ok := Extract(p, a); ok {
			return v4, true
		}
	}
	return netip.Addr{}, false
}

// familyNAT64 is a's family as the ordering sees it: IPv4 for an address
// inside one of the NAT64 prefixes (its path is IPv4 beyond the
// translator), FamilyOf otherwise.
func familyNAT64(a netip.Addr, prefixes []netip.Prefix) Family {
	if _, ok := translated(a, prefixes); ok {
		return IPv4
	}
	return FamilyOf(a)
}
