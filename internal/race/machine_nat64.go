package race

import (
	"net/netip"
	"time"
)

// The machine's NAT64 part. It runs only when the driver's configuration
// says the host has IPv6 and no IPv4 route (MachineConfig.NAT64 != nil):
// every other race never enters it.

// startNAT64 takes the network's discovery state: prefixes known from an
// earlier discovery, or a discovery to wait for.
func (m *Machine) startNAT64(now time.Duration) {
	n := m.cfg.NAT64
	m.nat = &nat64State{prefixes: validPrefixes(n.Prefixes)}
	if n.Pending {
		m.nat.wait = true
		m.emit(Action{Kind: ActionAwaitPrefix64})
		m.trace(now, TraceEvent{Kind: TraceNAT64Discovery, Detail: n.Source})
		return
	}
	m.trace(now, TraceEvent{Kind: TraceNAT64Prefix, Prefixes: m.nat.prefixes, Detail: n.Source})
}

// admitNAT64 is what NAT64 does to a destination as it arrives: false
// when it holds it. An IPv4 destination is held while discovery runs,
// then synthesized into the first prefix when RFC 6052 allows it (it
// stays IPv4 otherwise, and fails as IPv4 does on a host without an IPv4
// route). An IPv6 destination that arrives while discovery runs (only on
// the first connect on a network) waits for it at most the Resolution
// Delay: a DNS64 answer among them can only be sorted as IPv4 once the
// prefix is known, and the discovery's answer comes from the same
// resolver, so it is usually there first or within a round trip.
func (m *Machine) admitNAT64(now time.Duration, e *endpoint) bool {
	if FamilyOf(e.addr) == IPv4 {
		e.addr = e.addr.Unmap()
		if m.nat.wait {
			m.nat.heldV4 = append(m.nat.heldV4, *e)
			return false
		}
		if len(m.nat.prefixes) > 0 && Synthesizable(e.addr, m.nat.prefixes[0]) {
			e.from, e.addr, e.origin = e.addr, Embed(m.nat.prefixes[0], e.addr), OriginSynthesized
			m.trace(now, TraceEvent{Kind: TraceSynthesized, Addr: e.addrPort(), From: e.from, Prefixes: m.nat.prefixes[:1]})
		}
	} else if m.nat.wait && !m.cfg.Serial {
		if len(m.nat.heldV6) == 0 {
			m.nat.heldV6Until = now + m.cfg.ResolutionDelay
		}
		m.nat.heldV6 = append(m.nat.heldV6, *e)
		return false
	}
	return true
}

// releaseHeldV6 lets the IPv6 destinations held for discovery race.
func (m *Machine) releaseHeldV6() {
	held := m.nat.heldV6
	m.nat.heldV6 = nil
	m.addAll(held)
}

// prefixDone ends the wait for discovery: the held IPv4 destinations are
// admitted (synthesized if a prefix was found), and what is known is
// re-sorted, since a DNS64 answer inside the prefix now counts as IPv4.
func (m *Machine) prefixDone(now time.Duration, prefixes []netip.Prefix, err error) {
	if !m.prefixWaiting() || m.done {
		return
	}
	m.nat.wait = false
	m.nat.prefixes = validPrefixes(prefixes)
	m.trace(now, TraceEvent{Kind: TraceNAT64Prefix, Prefixes: m.nat.prefixes, Err: err, Detail: "discovered"})
	held := append(m.nat.heldV6, m.nat.heldV4...)
	m.nat.heldV4, m.nat.heldV6 = nil, nil
	added := false
	for _, e := range held {
		added = m.admitOne(now, e) || added
	}
	if added {
		m.reorder()
	}
	if len(m.nat.prefixes) > 0 && len(m.endpoints) > 1 {
		m.reorder()
	}
}

// validPrefixes keeps what RFC 6052 allows; the slice is the caller's
// when nothing is dropped.
func validPrefixes(ps []netip.Prefix) []netip.Prefix {
	for _, p := range ps {
		if !ValidPrefix64(p) {
			out := make([]netip.Prefix, 0, len(ps))
			for _, q := range ps {
				if ValidPrefix64(q) {
					out = append(out, q)
				}
			}
			return out
		}
	}
	return ps
}

// NAT64Prefixes are the NAT64 prefixes the race uses (nil without NAT64).
func (m *Machine) NAT64Prefixes() []netip.Prefix { return m.nat64Prefixes() }

// nat64State is a NAT64 race's part of the Machine.
type nat64State struct {
	prefixes []netip.Prefix // in use (the first synthesizes)
	wait     bool           // discovery still awaited
	heldV4   []endpoint     // IPv4 destinations held until it ends
	// IPv6 answers wait for discovery too, but only until heldV6Until
	// (the Resolution Delay after the first of them): see admit.
	heldV6      []endpoint
	heldV6Until time.Duration
}

func (m *Machine) nat64Prefixes() []netip.Prefix {
	if m.nat == nil {
		return nil
	}
	return m.nat.prefixes
}

func (m *Machine) prefixWaiting() bool { return m.nat != nil && m.nat.wait }

func (m *Machine) holdingV6() bool { return m.nat != nil && len(m.nat.heldV6) > 0 }
