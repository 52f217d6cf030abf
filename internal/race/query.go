package race

// QueryKind is one of the race's lookups: a DNS record type asked of the
// race's host (Machine.Host). The machine keys its lookups by it (the
// actions that start and cancel them, the events that answer them, its
// own state), so that a new record type, Happy Eyeballs v3's HTTPS, is
// one more kind rather than one more machine.
//
// A byte, not a (name, type) pair: actions and events carry it, and the
// machine keeps four actions and a lookup per kind in its own memory,
// whose size the drivers' allocation size classes are made of (WaiterDriven's
// has no byte to spare). The name is the host's until HEv3's service
// targets bring names of their own.
type QueryKind uint8

const (
	// QueryAAAA asks for the host's IPv6 addresses.
	QueryAAAA QueryKind = iota + 1
	// QueryA asks for the host's IPv4 addresses.
	QueryA

	queryEnd // one past the last address kind

	// QueryHTTPS asks for a name's HTTPS records (RFC 9460): only a
	// service lookup (Action.Lookup > 0) asks it, so it has no place in
	// the arrays kept per kind, which hold the host's address lookups.
	QueryHTTPS QueryKind = 65 // the record type
)

// NumQueryKinds sizes the arrays kept per kind (QueryKind.Index).
const NumQueryKinds = int(queryEnd) - 1

// AddressQueries are RFC 8305's lookups in its order: AAAA first, then A.
var AddressQueries = [...]QueryKind{QueryAAAA, QueryA}

// QueryFor is the query whose answer holds addresses of family f (A for
// FamilyUnspec, as a resolve error of no family has always said).
func QueryFor(f Family) QueryKind {
	if f == IPv6 {
		return QueryAAAA
	}
	return QueryA
}

// Family is the address family of q's answer: what the C ABI, the
// resolvers and the reports, which count per family, know a lookup by.
func (q QueryKind) Family() Family {
	if q == QueryAAAA {
		return IPv6
	}
	return IPv4
}

// Index is q's place in an array kept per kind: 0 to NumQueryKinds-1, in
// RFC 8305's query order, as FamilyIndex numbers the families.
func (q QueryKind) Index() int { return int(q) - 1 }

// Valid reports whether q is one of the kinds above (the zero QueryKind,
// an event that names no lookup, is not).
func (q QueryKind) Valid() bool { return q >= QueryAAAA && q < queryEnd }

// String is the record type, as traces print it.
func (q QueryKind) String() string {
	switch q {
	case QueryAAAA:
		return "AAAA"
	case QueryA:
		return "A"
	case QueryHTTPS:
		return "HTTPS"
	}
	return "unknown"
}
