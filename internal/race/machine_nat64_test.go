package race

import (
	"errors"
	"net/netip"
	"testing"
)

var (
	errCanceledForTest = errors.New("canceled by the test")
	pref96             = netip.MustParsePrefix("2001:db8::64:0:0/96")
	loop4              = netip.MustParseAddr("127.0.0.1")
	synth4a            = Embed(pref96, v4a)
)

func nat64Config(static []netip.Addr, n NAT64Config) MachineConfig {
	cfg := testConfig()
	cfg.Static = static
	cfg.NAT64 = &n
	return cfg
}

func hasAction(acts []Action, k ActionKind) bool {
	for _, a := range acts {
		if a.Kind == k {
			return true
		}
	}
	return false
}

func (h *harness) traced(k TraceKind) []TraceEvent {
	var out []TraceEvent
	for _, ev := range h.trace {
		if ev.Kind == k {
			out = append(out, ev)
		}
	}
	return out
}

// A known prefix: an IPv4 literal is tried as its synthesis at once, and
// the attempt, the result and the trace say which IPv4 it stands for.
func TestNAT64LiteralWithKnownPrefix(t *testing.T) {
	h := newHarness(t, nat64Config([]netip.Addr{v4a}, NAT64Config{Prefixes: []netip.Prefix{pref96}, Source: "cache"}))
	acts := h.start()
	h.wantStarted(acts, synth4a)
	if hasAction(acts, ActionAwaitPrefix64) {
		t.Fatal("a known prefix must not wait for discovery")
	}
	h.wantWinner(h.step(1, connected(0)), 0)
	if got := h.m.Attempts()[0].SynthesizedFrom; got != v4a {
		t.Fatalf("SynthesizedFrom = %v, want %v", got, v4a)
	}
	syn := h.traced(TraceSynthesized)
	if len(syn) != 1 || syn[0].From != v4a || syn[0].Addr.Addr() != synth4a {
		t.Fatalf("synthesized trace = %+v", syn)
	}
	if p := h.traced(TraceNAT64Prefix); len(p) != 1 || p[0].Prefixes[0] != pref96 || p[0].Detail != "cache" {
		t.Fatalf("nat64-prefix trace = %+v", p)
	}
}

// The first race on a network waits for discovery with its IPv4 literal
// held, then tries the synthesis; with no prefix found, the literal is
// tried as IPv4 (and fails as it would have without NAT64).
func TestNAT64LiteralWaitsForDiscovery(t *testing.T) {
	h := newHarness(t, nat64Config([]netip.Addr{v4a}, NAT64Config{Pending: true}))
	acts := h.start()
	if !hasAction(acts, ActionAwaitPrefix64) {
		t.Fatalf("want ActionAwaitPrefix64, got %+v", acts)
	}
	h.wantStarted(acts)
	h.wantNotDone(acts)
	acts = h.step(20, Event{Kind: EventPrefix64, Answer: []netip.Prefix{pref96}})
	h.wantStarted(acts, synth4a)
	if len(h.traced(TraceNAT64Discovery)) != 1 {
		t.Fatal("no nat64-discovery trace event")
	}

	h = newHarness(t, nat64Config([]netip.Addr{v4a}, NAT64Config{Pending: true}))
	h.start()
	h.wantStarted(h.step(20, Event{Kind: EventPrefix64}), v4a)
}

// 127.0.0.1 is never synthesized, whatever the prefix.
func TestNAT64NeverSynthesizesLoopback(t *testing.T) {
	h := newHarness(t, nat64Config([]netip.Addr{loop4}, NAT64Config{Prefixes: []netip.Prefix{pref96}}))
	h.wantStarted(h.start(), loop4)
	if len(h.traced(TraceSynthesized)) != 0 {
		t.Fatal("127.0.0.1 was synthesized")
	}
}

// A name on the first connect of a network: the A answer is held until
// the prefix is known, the AAAA answer at most the Resolution Delay; when
// the prefix comes, both join, sorted with it (a DNS64 AAAA listed first
// goes after the real one).
func TestNAT64AnswersHeldForDiscovery(t *testing.T) {
	h := newHarness(t, nat64Config(nil, NAT64Config{Pending: true}))
	h.start()
	acts := h.step(5, answered(IPv6, synth4a, v6a))
	h.wantStarted(acts)
	h.wantTimer(acts, 55)
	h.wantStarted(h.step(10, answered(IPv4, v4a)))
	acts = h.step(30, Event{Kind: EventPrefix64, Answer: []netip.Prefix{pref96}})
	h.wantStarted(acts, v6a)
	h.wantTimer(acts, 280)
	h.wantStarted(h.step(280), synth4a)
}

// Discovery slower than the Resolution Delay: the AAAA answer races after
// it, the A answer still waits for the prefix.
func TestNAT64AAAANotHeldBeyondResolutionDelay(t *testing.T) {
	h := newHarness(t, nat64Config(nil, NAT64Config{Pending: true}))
	h.start()
	h.step(5, answered(IPv4, v4a))
	h.wantStarted(h.step(6, answered(IPv6, v6a)))
	h.wantStarted(h.step(56), v6a)
	acts := h.step(400, Event{Kind: EventPrefix64, Answer: []netip.Prefix{pref96}})
	h.wantStarted(acts, synth4a)
}

// An IPv4 literal alone, discovery still running, and the race canceled:
// the wait for discovery is given up with the race.
func TestNAT64CancelStopsTheWait(t *testing.T) {
	h := newHarness(t, nat64Config([]netip.Addr{v4a}, NAT64Config{Pending: true}))
	h.start()
	acts := h.step(5, Event{Kind: EventCancel, Err: errCanceledForTest})
	if !hasAction(acts, ActionCancelPrefix64) {
		t.Fatalf("want ActionCancelPrefix64, got %+v", acts)
	}
	h.wantFailure(acts)
}

// resolv_timeout ends a name's wait for discovery like its lookups'.
func TestNAT64ResolvTimeoutEndsTheWait(t *testing.T) {
	cfg := nat64Config(nil, NAT64Config{Pending: true})
	cfg.ResolvTimeout = ms(100)
	h := newHarness(t, cfg)
	h.start()
	h.step(5, answered(IPv4, v4a))
	h.wantStarted(h.step(6, lookupFailed(IPv6, EAI_NODATA)))
	acts := h.step(100)
	if !hasAction(acts, ActionCancelPrefix64) {
		t.Fatalf("want ActionCancelPrefix64, got %+v", acts)
	}
	h.wantStarted(acts, v4a)
}

// A real AAAA and a DNS64 one (inside the known prefix), the DNS64 one
// listed first: the real IPv6 address is tried first.
func TestNAT64RealIPv6SortsBeforeDNS64(t *testing.T) {
	h := newHarness(t, nat64Config(nil, NAT64Config{Prefixes: []netip.Prefix{pref96}}))
	h.start()
	h.wantStarted(h.step(1, answered(IPv6, synth4a, v6a)), v6a)
}

// Without NAT64 the machine asks for no discovery and synthesizes nothing.
func TestNoNAT64NoDiscovery(t *testing.T) {
	cfg := testConfig()
	cfg.Static = []netip.Addr{v4a}
	h := newHarness(t, cfg)
	acts := h.start()
	h.wantStarted(acts, v4a)
	if hasAction(acts, ActionAwaitPrefix64) || len(h.traced(TraceSynthesized)) != 0 {
		t.Fatalf("NAT64 work without NAT64: %+v", acts)
	}
}

// The network's history preferring IPv4 counts a DNS64 AAAA as IPv4 too:
// it goes before the real IPv6 address.
func TestNAT64HistoryPrefersTranslatedAsIPv4(t *testing.T) {
	cfg := nat64Config(nil, NAT64Config{Prefixes: []netip.Prefix{pref96}})
	cfg.History.First = IPv4
	h := newHarness(t, cfg)
	h.start()
	h.wantStarted(h.step(1, answered(IPv6, v6a, synth4a), lookupFailed(IPv4, EAI_NODATA)), synth4a)
}
