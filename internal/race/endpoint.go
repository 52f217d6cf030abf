package race

import "net/netip"

// Origin says how the race came to know an endpoint. Happy Eyeballs v3
// adds endpoints from HTTPS/SVCB records (a service's target, with a port
// of its own); their origin will say which service, and the order and the
// reports will read it, where today only a synthesized endpoint's IPv4
// address is reported (AttemptInfo.SynthesizedFrom).
type Origin uint8

const (
	// OriginDNS: an A or AAAA answer.
	OriginDNS Origin = iota + 1
	// OriginStatic: the host as an IP literal, or a static host entry
	// (MachineConfig.Literal, MachineConfig.Static).
	OriginStatic
	// OriginSynthesized: an IPv6 address synthesized through the network's
	// NAT64 prefix from an IPv4 one (RFC 6052), whichever origin that had.
	OriginSynthesized
)

var originNames = [...]string{
	OriginDNS:         "dns",
	OriginStatic:      "static",
	OriginSynthesized: "synthesized",
	OriginHint:        "hint",
	OriginService:     "service",
}

func (o Origin) String() string {
	if int(o) < len(originNames) && originNames[o] != "" {
		return originNames[o]
	}
	return "unknown"
}

// endpoint is a destination the race may try: an address, the port to
// try it on and where it came from. The port is the endpoint's own, not
// the race's, so that endpoints of one race may differ in it (HTTPS
// records give a port per service); today every endpoint has the race's.
//
// addr alone tells endpoints apart (indexOf), as the order is computed
// on addresses (MachineConfig.Sort): true while a race has one port.
//
// port, origin and tried share the word that addr and from leave, so
// that an endpoint takes the 56 bytes the address with its flag took:
// the machine keeps two of them in its own memory (endpointBuf).
type endpoint struct {
	addr   netip.Addr
	from   netip.Addr // OriginSynthesized: the IPv4 address addr embeds
	port   uint16
	origin Origin
	tried  bool
	// service is the HTTPS service the endpoint belongs to (1 is
	// HTTPSOutcome.Services[0]); 0: the origin's own addresses. Services
	// are tried in their order, the origin's addresses last.
	service uint8
	// hint: the endpoint is a service's address hint, which the target's
	// own answer replaces while untried (its origin may have become
	// OriginSynthesized).
	hint bool
}

func (e *endpoint) addrPort() netip.AddrPort { return netip.AddrPortFrom(e.addr, e.port) }
