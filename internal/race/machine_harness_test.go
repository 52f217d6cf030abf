package race

import (
	"net/netip"
	"syscall"
	"testing"
	"time"
)

// harness drives a Machine with a fake clock: times are whole milliseconds
// given by the test, and every action is checked against them.
type harness struct {
	t     *testing.T
	m     *Machine
	trace []TraceEvent
}

var (
	v6a = netip.MustParseAddr("2001:db8::a")
	v6b = netip.MustParseAddr("2001:db8::b")
	v6c = netip.MustParseAddr("2001:db8::c")
	v4a = netip.MustParseAddr("198.18.0.10")
	v4b = netip.MustParseAddr("198.18.0.11")
)

func ms(n int) time.Duration { return time.Duration(n) * time.Millisecond }

// testConfig is the RFC default configuration with a sorter that prefers
// IPv6 (as RFC 6724 does for global IPv6 and IPv4 sources).
func testConfig() MachineConfig {
	return MachineConfig{
		Host:                    "example.test",
		Port:                    443,
		Queries:                 AddressQueries[:],
		ResolutionDelay:         DefaultResolutionDelay,
		ConnectionAttemptDelay:  DefaultConnectionAttemptDelay,
		FirstAddressFamilyCount: 1,
		Sort: func(a []netip.Addr, nat64 []netip.Prefix) []netip.Addr {
			return SortRFC6724NAT64(a, func(dst netip.Addr) (netip.Addr, bool) {
				if dst.Is4() {
					return netip.MustParseAddr("198.18.0.2"), true
				}
				return netip.MustParseAddr("2001:db8::2"), true
			}, nat64)
		},
	}
}

func newHarness(t *testing.T, cfg MachineConfig) *harness {
	h := &harness{t: t}
	cfg.Trace = func(ev TraceEvent) { h.trace = append(h.trace, ev) }
	h.m = NewMachine(cfg)
	return h
}

func (h *harness) start() []Action { return clone(h.m.Start(0)) }

func (h *harness) step(at int, evs ...Event) []Action { return clone(h.m.Step(ms(at), evs...)) }

func clone(a []Action) []Action { return append([]Action(nil), a...) }

func answered(f Family, addrs ...netip.Addr) Event {
	return Event{Kind: EventLookupDone, Query: QueryFor(f), Addrs: addrs}
}

func lookupFailed(f Family, code int) Event {
	return Event{Kind: EventLookupDone, Query: QueryFor(f), Err: &ResolveError{Host: "example.test", Family: f, Code: code}}
}

func connected(id int) Event { return Event{Kind: EventAttemptDone, Attempt: id} }

func refused(id int) Event {
	return Event{Kind: EventAttemptDone, Attempt: id, Err: syscall.ECONNREFUSED}
}

// started returns the addresses of the attempts the actions start.
func started(acts []Action) []netip.Addr {
	var out []netip.Addr
	for _, a := range acts {
		if a.Kind == ActionStartAttempt {
			out = append(out, a.Addr.Addr())
		}
	}
	return out
}

func timerAt(acts []Action) (time.Duration, bool) {
	at, ok := time.Duration(0), false
	for _, a := range acts {
		if a.Kind == ActionArmTimer {
			at, ok = a.At, true
		}
	}
	return at, ok
}

func done(acts []Action) (Action, bool) {
	for _, a := range acts {
		if a.Kind == ActionDone {
			return a, true
		}
	}
	return Action{}, false
}

func closed(acts []Action) []int {
	var out []int
	for _, a := range acts {
		if a.Kind == ActionCloseAttempt {
			out = append(out, a.Attempt)
		}
	}
	return out
}

func (h *harness) wantStarted(acts []Action, want ...netip.Addr) {
	h.t.Helper()
	got := started(acts)
	if len(got) != len(want) {
		h.t.Fatalf("started %v, want %v", got, want)
	}
	for i := range got {
		if got[i] != want[i] {
			h.t.Fatalf("started %v, want %v", got, want)
		}
	}
}

func (h *harness) wantTimer(acts []Action, at int) {
	h.t.Helper()
	got, ok := timerAt(acts)
	if !ok || got != ms(at) && !(at < 0 && got < 0) {
		h.t.Fatalf("timer = %v (armed: %v), want %v; actions %+v", got, ok, ms(at), acts)
	}
}

func (h *harness) wantWinner(acts []Action, id int) {
	h.t.Helper()
	d, ok := done(acts)
	if !ok || d.Err != nil || d.Attempt != id {
		h.t.Fatalf("done = %+v (%v), want winner %d", d, ok, id)
	}
}

func (h *harness) wantFailure(acts []Action) *Error {
	h.t.Helper()
	d, ok := done(acts)
	if !ok || d.Err == nil {
		h.t.Fatalf("want failure, got %+v", acts)
	}
	return d.Err.(*Error)
}

func (h *harness) wantNotDone(acts []Action) {
	h.t.Helper()
	if d, ok := done(acts); ok {
		h.t.Fatalf("race ended early: %+v", d)
	}
}
