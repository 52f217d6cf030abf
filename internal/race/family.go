package race

import "net/netip"

// Family is an address family: IPv6, IPv4, or FamilyUnspec for both.
type Family uint8

const (
	FamilyUnspec Family = 0
	IPv4         Family = 4
	IPv6         Family = 6
)

func (f Family) String() string {
	switch f {
	case IPv4:
		return "ipv4"
	case IPv6:
		return "ipv6"
	}
	return "unspec"
}

// QueryType is the DNS record type that resolves f, as traces print it.
func (f Family) QueryType() string { return QueryFor(f).String() }

// FamilyOf reports the family of a (IPv4-mapped IPv6 addresses count as IPv4).
func FamilyOf(a netip.Addr) Family {
	if a.Unmap().Is4() {
		return IPv4
	}
	return IPv6
}

// FamilyIndex maps IPv6 to 0 and IPv4 to 1: the order RFC 8305 queries them in,
// and the index of per-family arrays such as Result.Lookups.
func FamilyIndex(f Family) int {
	if f == IPv6 {
		return 0
	}
	return 1
}

// LookupFamilies is the RFC 8305 query order: AAAA first, then A.
var LookupFamilies = [2]Family{IPv6, IPv4}
