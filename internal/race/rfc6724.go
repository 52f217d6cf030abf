package race

import (
	"net/netip"
	"slices"
)

// SourceFunc reports the source address the kernel would use to reach dst,
// or false if dst is unreachable (no route).
type SourceFunc func(dst netip.Addr) (netip.Addr, bool)

// SortRFC6724 returns addrs in RFC 6724 §6 destination order, given the
// source address the kernel would pick for each. Rules 3, 4 and 7 need
// knowledge the kernel does not expose (deprecated, home and native
// addresses) and are skipped, as Go's net package does; rule 10 keeps the
// resolver's order for ties.
func SortRFC6724(addrs []netip.Addr, source SourceFunc) []netip.Addr {
	return SortRFC6724NAT64(addrs, source, nil)
}

// SortRFC6724NAT64 is SortRFC6724 with the NAT64 prefixes discovered on
// this network: a destination inside one of them (a DNS64-synthesized AAAA,
// or hev2's own synthesis) is treated as the IPv4 address it embeds, as
// Happy Eyeballs v3 asks: IPv4's precedence and label for the destination,
// and for its path (the IPv6 source reaches IPv4 through the translator).
// It is usable when the kernel has a source for the IPv6 address. So a
// real global IPv6 destination sorts before a translated one, and a ULA
// after it, as they would against plain IPv4.
func SortRFC6724NAT64(addrs []netip.Addr, source SourceFunc, prefixes []netip.Prefix) []netip.Addr {
	type entry struct {
		dst, src netip.Addr
		hasSrc   bool
		asIPv4   bool // translated: sorted as the IPv4 address it embeds
		dstAttr  policyAttr
		srcAttr  policyAttr
	}
	es := make([]entry, len(addrs))
	for i, a := range addrs {
		e := entry{dst: a, dstAttr: attrOf(a)}
		v4, asIPv4 := translated(a, prefixes)
		if asIPv4 {
			e.asIPv4 = true
			e.dstAttr = attrOf(v4)
		}
		if src, ok := source(a); ok {
			e.src, e.hasSrc = src, true
			e.srcAttr = attrOf(src)
			if asIPv4 {
				// Beyond the translator the path is IPv4: the
				// source's label is IPv4's, its scope its own.
				e.srcAttr.label = ipv4Label
			}
		}
		es[i] = e
	}
	slices.SortStableFunc(es, func(a, b entry) int {
		// Rule 1: avoid unusable destinations.
		if a.hasSrc != b.hasSrc {
			return preferIf(a.hasSrc)
		}
		if !a.hasSrc {
			return 0
		}
		// Rule 2: prefer matching scope.
		am := a.dstAttr.scope == a.srcAttr.scope
		bm := b.dstAttr.scope == b.srcAttr.scope
		if am != bm {
			return preferIf(am)
		}
		// Rule 5: prefer matching label.
		am = a.dstAttr.label == a.srcAttr.label
		bm = b.dstAttr.label == b.srcAttr.label
		if am != bm {
			return preferIf(am)
		}
		// Rule 6: prefer higher precedence.
		if a.dstAttr.precedence != b.dstAttr.precedence {
			return preferIf(a.dstAttr.precedence > b.dstAttr.precedence)
		}
		// Rule 8: prefer smaller scope.
		if a.dstAttr.scope != b.dstAttr.scope {
			return preferIf(a.dstAttr.scope < b.dstAttr.scope)
		}
		// Rule 9: prefer the longest matching prefix (IPv6 only, same
		// family; RFC 6724 §6 note applied as in glibc).
		if a.dst.Is6() && b.dst.Is6() && !a.dst.Is4In6() && !b.dst.Is4In6() && !a.asIPv4 && !b.asIPv4 {
			la := commonPrefixLen(a.dst, a.src)
			lb := commonPrefixLen(b.dst, b.src)
			if la != lb {
				return preferIf(la > lb)
			}
		}
		return 0 // Rule 10: leave the order unchanged.
	})
	out := make([]netip.Addr, len(es))
	for i := range es {
		out[i] = es[i].dst
	}
	return out
}

// preferIf makes "a before b" the answer when cond holds.
func preferIf(cond bool) int {
	if cond {
		return -1
	}
	return 1
}

func commonPrefixLen(a, b netip.Addr) int {
	if a.BitLen() != b.BitLen() {
		return 0
	}
	x, y := a.As16(), b.As16()
	n := 0
	// RFC 6724 §2.2: only the prefix (the first 64 bits) counts.
	for i := 0; i < 8; i++ {
		d := x[i] ^ y[i]
		if d == 0 {
			n += 8
			continue
		}
		for d&0x80 == 0 {
			n++
			d <<= 1
		}
		break
	}
	return n
}

type policyAttr struct {
	precedence, label, scope uint8
}

type policyRow struct {
	prefix     netip.Prefix
	precedence uint8
	label      uint8
}

// defaultPolicy is RFC 6724 §2.1's table, longest prefixes first.
var defaultPolicy = []policyRow{
	{netip.MustParsePrefix("::1/128"), 50, 0},
	{netip.MustParsePrefix("::ffff:0:0/96"), 35, 4},
	{netip.MustParsePrefix("::/96"), 1, 3},
	{netip.MustParsePrefix("2001::/32"), 5, 5},
	{netip.MustParsePrefix("2002::/16"), 30, 2},
	{netip.MustParsePrefix("3ffe::/16"), 1, 12},
	{netip.MustParsePrefix("fec0::/10"), 1, 11},
	{netip.MustParsePrefix("fc00::/7"), 3, 13},
	{netip.MustParsePrefix("::/0"), 40, 1},
}

// ipv4Label is the label of ::ffff:0:0/96 (IPv4) in the default policy.
const ipv4Label = 4

// Scopes of RFC 4291 §2.7 as RFC 6724 §3.1 applies them.
const (
	scopeLinkLocal = 0x2
	scopeSiteLocal = 0x5
	scopeGlobal    = 0xe
)

func attrOf(a netip.Addr) policyAttr {
	a16 := netip.AddrFrom16(a.As16()) // IPv4 as ::ffff:a.b.c.d
	var attr policyAttr
	for _, row := range defaultPolicy {
		if row.prefix.Contains(a16) {
			attr.precedence, attr.label = row.precedence, row.label
			break
		}
	}
	attr.scope = scopeOf(a)
	return attr
}

var siteLocalPrefix = netip.MustParsePrefix("fec0::/10")

func scopeOf(a netip.Addr) uint8 {
	if a.Is4() || a.Is4In6() {
		v4 := a.Unmap().As4()
		// RFC 6724 §3.2: loopback and link-local IPv4 are link-local scope;
		// everything else, private ranges included, is global.
		if v4[0] == 127 || v4[0] == 169 && v4[1] == 254 {
			return scopeLinkLocal
		}
		return scopeGlobal
	}
	switch {
	case a.IsMulticast():
		return a.As16()[1] & 0xf
	case a.IsLoopback(), a.IsLinkLocalUnicast():
		return scopeLinkLocal
	case siteLocalPrefix.Contains(a):
		return scopeSiteLocal
	}
	return scopeGlobal
}
