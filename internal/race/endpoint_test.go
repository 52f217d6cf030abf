package race

import (
	"net/netip"
	"testing"
	"unsafe"
)

// Each endpoint says how the race came to know it, and carries the port
// its attempt is made on.
func TestEndpointsKeepTheirOrigin(t *testing.T) {
	want := func(h *harness, addr netip.Addr, origin Origin, from netip.Addr) {
		t.Helper()
		for _, e := range h.m.endpoints {
			if e.addr == addr {
				if e.origin != origin || e.from != from || e.port != h.m.cfg.Port {
					t.Errorf("%v: origin %v from %v port %d, want %v from %v port %d", addr, e.origin, e.from, e.port, origin, from, h.m.cfg.Port)
				}
				return
			}
		}
		t.Errorf("%v: no endpoint", addr)
	}

	h := newHarness(t, testConfig())
	h.start()
	h.step(0, answered(IPv6, v6a), answered(IPv4, v4a))
	want(h, v6a, OriginDNS, netip.Addr{})
	want(h, v4a, OriginDNS, netip.Addr{})

	cfg := testConfig()
	cfg.Literal = v4a
	h = newHarness(t, cfg)
	h.start()
	want(h, v4a, OriginStatic, netip.Addr{})

	h = newHarness(t, nat64Config([]netip.Addr{v4a, v6a}, NAT64Config{Prefixes: []netip.Prefix{pref96}}))
	h.start()
	want(h, synth4a, OriginSynthesized, v4a)
	want(h, v6a, OriginStatic, netip.Addr{})

	// Held for discovery, then synthesized: the origin is the synthesis.
	h = newHarness(t, nat64Config([]netip.Addr{v4a}, NAT64Config{Pending: true}))
	h.start()
	h.step(1, Event{Kind: EventPrefix64, Answer: []netip.Prefix{pref96}})
	want(h, synth4a, OriginSynthesized, v4a)
}

// The port and the origin live in the word an address and its flag left
// over: the machine keeps two endpoints in its own memory, and its size
// is what the drivers' size classes are made of.
func TestEndpointTakesNoMoreThanAnAddressPair(t *testing.T) {
	if got, want := unsafe.Sizeof(endpoint{}), 2*unsafe.Sizeof(netip.Addr{})+8; got != want {
		t.Fatalf("endpoint takes %d bytes, want %d", got, want)
	}
}
