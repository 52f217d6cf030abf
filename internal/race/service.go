package race

import "net/netip"

// Happy Eyeballs v3 (draft-ietf-happy-happyeyeballs-v3) adds the HTTPS
// record (RFC 9460) to the race's DNS phase: an origin's services, each
// with a target name, a port, an ALPN set, address hints and an ECH
// configuration. These are the record's contents as a resolver reads them
// off the wire; what the race makes of them (aliases followed, records
// whose mandatory keys are unknown ignored, ALPN matched against the
// caller's, priorities ordered) is the machine's.

// SvcParamKey numbers a service parameter (RFC 9460 §14.3.2).
type SvcParamKey uint16

// The keys the race understands.
const (
	KeyMandatory     SvcParamKey = 0
	KeyALPN          SvcParamKey = 1
	KeyNoDefaultALPN SvcParamKey = 2
	KeyPort          SvcParamKey = 3
	KeyIPv4Hint      SvcParamKey = 4
	KeyECH           SvcParamKey = 5
	KeyIPv6Hint      SvcParamKey = 6
)

// ServiceRecord is one ServiceMode record of an HTTPS RRset.
type ServiceRecord struct {
	// Priority is SvcPriority, 1 or more (lower is tried first).
	Priority uint16
	// Target is TargetName, fully qualified with its final dot; "." means
	// the record's owner name.
	Target string
	// Keys are the keys the record carries, in increasing order (the
	// wire's order), known or not.
	Keys []SvcParamKey
	// Mandatory are the keys of its "mandatory" parameter.
	Mandatory []SvcParamKey
	// ALPN is its "alpn" list, in the record's order.
	ALPN []string
	// NoDefaultALPN: the record has "no-default-alpn".
	NoDefaultALPN bool
	// Port is its "port" (0: none, the origin's port).
	Port uint16
	// IPv4Hint and IPv6Hint are its address hints.
	IPv4Hint []netip.Addr
	IPv6Hint []netip.Addr
	// ECH is its "ech" parameter: an ECHConfigList (nil: none).
	ECH []byte
}

// ServiceAnswer is what an HTTPS lookup of one name found.
type ServiceAnswer struct {
	// Alias is the TargetName of an AliasMode record (SvcPriority 0),
	// fully qualified; "" when the answer holds none. An RRset with an
	// AliasMode record is read as that alias, its ServiceMode records
	// ignored (RFC 9460 §2.4.2).
	Alias string
	// Records are the ServiceMode records, in the answer's order.
	Records []ServiceRecord
	// Malformed counts the records dropped because they could not be
	// decoded (the rest of the answer stands).
	Malformed int
}
