package race

import (
	"context"
	"errors"
	"net/netip"
	"reflect"
	"syscall"
	"testing"
)

// Helpers that spell a report's parts in whole milliseconds.
func span(start, end int) Phase { return Phase{Happened: true, Start: ms(start), End: ms(end)} }

func lookupRep(f Family, st LookupState, start, end int, addrs ...netip.Addr) LookupReport {
	return LookupReport{Family: f, State: st, Start: ms(start), End: ms(end), Addrs: addrs}
}

func attemptRep(a netip.Addr, start, end int, out AttemptOutcome, err error) AttemptReport {
	return AttemptReport{Addr: netip.AddrPortFrom(a, 443), Family: FamilyOf(a), Start: ms(start), End: ms(end), Outcome: out, Err: err, Origin: OriginDNS}
}

func withOrigin(a AttemptReport, o Origin, service int) AttemptReport {
	a.Origin, a.Service = o, service
	return a
}

func nodata(f Family) error { return &ResolveError{Host: "example.test", Family: f, Code: EAI_NODATA} }

// Each scripted race's report is exact: phases, states, outcomes, reason.
func TestReportOfScriptedRaces(t *testing.T) {
	notAsked := LookupReport{}
	cases := []struct {
		name string
		cfg  func(*MachineConfig)
		run  func(h *harness)
		want Report
	}{
		{"first to connect: IPv4 wins while IPv6 is still in flight", nil, func(h *harness) {
			h.start()
			h.step(10, answered(IPv6, v6a), answered(IPv4, v4a)) // v6a at 10
			h.step(260)                                          // v4a at 260
			h.step(270, connected(1))
		}, Report{
			Connected: true, Winner: 1, Family: IPv4, Reason: ReasonFirstToConnect, Elapsed: ms(270),
			Resolving: span(0, 10), Connecting: span(10, 270),
			Lookups: [2]LookupReport{lookupRep(IPv6, LookupAnswered, 0, 10, v6a), lookupRep(IPv4, LookupAnswered, 0, 10, v4a)},
			Attempts: []AttemptReport{
				attemptRep(v6a, 10, 270, AttemptLost, nil),
				attemptRep(v4a, 260, 270, AttemptConnected, nil),
			},
		}},
		{"the other family failed: IPv6 refused, IPv4 at once", nil, func(h *harness) {
			h.start()
			h.step(5, answered(IPv6, v6a), answered(IPv4, v4a))
			h.step(20, refused(0)) // v4a starts at once
			h.step(30, connected(1))
		}, Report{
			Connected: true, Winner: 1, Family: IPv4, Reason: ReasonOtherFamilyFailed, Elapsed: ms(30),
			Resolving: span(0, 5), Connecting: span(5, 30),
			Lookups: [2]LookupReport{lookupRep(IPv6, LookupAnswered, 0, 5, v6a), lookupRep(IPv4, LookupAnswered, 0, 5, v4a)},
			Attempts: []AttemptReport{
				attemptRep(v6a, 5, 20, AttemptFailed, syscall.ECONNREFUSED),
				attemptRep(v4a, 20, 30, AttemptConnected, nil),
			},
		}},
		{"only one family resolved: AAAA has no data", nil, func(h *harness) {
			h.start()
			h.step(5, lookupFailed(IPv6, EAI_NODATA))
			h.step(8, answered(IPv4, v4a)) // no Resolution Delay: AAAA is over
			h.step(12, connected(0))
		}, Report{
			Connected: true, Winner: 0, Family: IPv4, Reason: ReasonOnlyFamilyResolved, Elapsed: ms(12),
			Resolving: span(0, 8), Connecting: span(8, 12),
			Lookups: [2]LookupReport{
				{Family: IPv6, State: LookupFailed, End: ms(5), Err: nodata(IPv6)},
				lookupRep(IPv4, LookupAnswered, 0, 8, v4a),
			},
			Attempts: []AttemptReport{attemptRep(v4a, 8, 12, AttemptConnected, nil)},
		}},
		{"only one family resolved: AAAA silent, the Resolution Delay runs out", nil, func(h *harness) {
			h.start()
			h.step(10, answered(IPv4, v4a)) // delay until 60
			h.step(60)                      // v4a
			h.step(70, connected(0))        // AAAA abandoned
		}, Report{
			Connected: true, Winner: 0, Family: IPv4, Reason: ReasonOnlyFamilyResolved, Elapsed: ms(70),
			Resolving: span(0, 70), ResolutionDelay: span(10, 60), ResolutionDelayExpired: true, Connecting: span(60, 70),
			Lookups:  [2]LookupReport{lookupRep(IPv6, LookupAbandoned, 0, 70), lookupRep(IPv4, LookupAnswered, 0, 10, v4a)},
			Attempts: []AttemptReport{attemptRep(v4a, 60, 70, AttemptConnected, nil)},
		}},
		{"the other family not tried: AAAA ends the Resolution Delay and wins", nil, func(h *harness) {
			h.start()
			h.step(0, answered(IPv4, v4a))
			h.step(30, answered(IPv6, v6a)) // v6a at once
			h.step(35, connected(0))
		}, Report{
			Connected: true, Winner: 0, Family: IPv6, Reason: ReasonOtherFamilyNotTried, Elapsed: ms(35),
			Resolving: span(0, 30), ResolutionDelay: span(0, 30), Connecting: span(30, 35),
			Lookups:  [2]LookupReport{lookupRep(IPv6, LookupAnswered, 0, 30, v6a), lookupRep(IPv4, LookupAnswered, 0, 0, v4a)},
			Attempts: []AttemptReport{attemptRep(v6a, 30, 35, AttemptConnected, nil)},
		}},
		{"only one family asked: IPv4 only", func(c *MachineConfig) { c.Queries = []QueryKind{QueryA} }, func(h *harness) {
			h.start()
			h.step(3, answered(IPv4, v4a))
			h.step(4, connected(0))
		}, Report{
			Connected: true, Winner: 0, Family: IPv4, Reason: ReasonOnlyFamilyAsked, Elapsed: ms(4),
			Resolving: span(0, 3), Connecting: span(3, 4),
			Lookups:  [2]LookupReport{notAsked, lookupRep(IPv4, LookupAnswered, 0, 3, v4a)},
			Attempts: []AttemptReport{attemptRep(v4a, 3, 4, AttemptConnected, nil)},
		}},
		{"given addresses: a static list, no lookup", func(c *MachineConfig) { c.Static = []netip.Addr{v6a, v4a} }, func(h *harness) {
			h.start() // v6a at 0
			h.step(1, connected(0))
		}, Report{
			Connected: true, Winner: 0, Family: IPv6, Reason: ReasonGivenAddresses, Elapsed: ms(1),
			Connecting: span(0, 1),
			Attempts:   []AttemptReport{withOrigin(attemptRep(v6a, 0, 1, AttemptConnected, nil), OriginStatic, 0)},
		}},
		{"NAT64: an A-only name is reached at its synthesis, which counts as IPv4", func(c *MachineConfig) {
			c.NAT64 = &NAT64Config{Prefixes: []netip.Prefix{pref96}, Source: "cache"}
		}, func(h *harness) {
			h.start()
			h.step(2, lookupFailed(IPv6, EAI_NODATA))
			h.step(3, answered(IPv4, v4a)) // synth4a at once
			h.step(5, connected(0))
		}, Report{
			Connected: true, Winner: 0, Family: IPv6, Reason: ReasonOnlyFamilyResolved, Elapsed: ms(5),
			Resolving: span(0, 3), Connecting: span(3, 5),
			Lookups: [2]LookupReport{
				{Family: IPv6, State: LookupFailed, End: ms(2), Err: nodata(IPv6)},
				lookupRep(IPv4, LookupAnswered, 0, 3, v4a),
			},
			Attempts: []AttemptReport{{Addr: netip.AddrPortFrom(synth4a, 443), Family: IPv6, SynthesizedFrom: v4a,
				Start: ms(3), End: ms(5), Outcome: AttemptConnected, Origin: OriginSynthesized}},
		}},
		{"resolv_timeout abandons AAAA, IPv4 connects after it", func(c *MachineConfig) { c.ResolvTimeout = ms(100) }, func(h *harness) {
			h.start()
			h.step(10, answered(IPv4, v4a))
			h.step(60)  // v4a
			h.step(100) // AAAA timed out
			h.step(120, connected(0))
		}, Report{
			Connected: true, Winner: 0, Family: IPv4, Reason: ReasonOnlyFamilyResolved, Timeout: TimeoutResolv, Elapsed: ms(120),
			Resolving: span(0, 100), ResolutionDelay: span(10, 60), ResolutionDelayExpired: true, Connecting: span(60, 120),
			Lookups:  [2]LookupReport{lookupRep(IPv6, LookupTimedOut, 0, 100), lookupRep(IPv4, LookupAnswered, 0, 10, v4a)},
			Attempts: []AttemptReport{attemptRep(v4a, 60, 120, AttemptConnected, nil)},
		}},
		{"serial: connect_timeout times IPv6 out, IPv4 connects", func(c *MachineConfig) {
			c.Serial, c.ConnectTimeout = true, ms(100)
		}, func(h *harness) {
			h.start()
			h.step(2, answered(IPv6, v6a))
			h.step(4, answered(IPv4, v4a)) // v6a: serial waits for both
			h.step(104)                    // v6a times out, v4a
			h.step(110, connected(1))
		}, Report{
			Connected: true, Winner: 1, Family: IPv4, Reason: ReasonOtherFamilyFailed, Timeout: TimeoutConnect, Elapsed: ms(110),
			Resolving: span(0, 4), Connecting: span(4, 110),
			Lookups: [2]LookupReport{lookupRep(IPv6, LookupAnswered, 0, 2, v6a), lookupRep(IPv4, LookupAnswered, 0, 4, v4a)},
			Attempts: []AttemptReport{
				attemptRep(v6a, 4, 104, AttemptTimedOut, &TimeoutError{Kind: TimeoutConnect, After: ms(100)}),
				attemptRep(v4a, 104, 110, AttemptConnected, nil),
			},
		}},
		{"failure: open_timeout with two attempts in flight", func(c *MachineConfig) { c.OpenTimeout = ms(300) }, func(h *harness) {
			h.start()
			h.step(10, answered(IPv6, v6a), answered(IPv4, v4a))
			h.step(260)
			h.step(300)
		}, Report{
			Winner: -1, Failure: OutcomeTimeout, Timeout: TimeoutOpen, Elapsed: ms(300),
			Resolving: span(0, 10), Connecting: span(10, 300),
			Lookups: [2]LookupReport{lookupRep(IPv6, LookupAnswered, 0, 10, v6a), lookupRep(IPv4, LookupAnswered, 0, 10, v4a)},
			Attempts: []AttemptReport{
				attemptRep(v6a, 10, 300, AttemptTimedOut, nil),
				attemptRep(v4a, 260, 300, AttemptTimedOut, nil),
			},
		}},
		{"failure: canceled during the Resolution Delay", nil, func(h *harness) {
			h.start()
			h.step(10, answered(IPv4, v4a))
			h.step(40, Event{Kind: EventCancel, Err: context.Canceled})
		}, Report{
			Winner: -1, Failure: OutcomeCanceled, Elapsed: ms(40),
			Resolving: span(0, 40), ResolutionDelay: span(10, 40),
			Lookups: [2]LookupReport{lookupRep(IPv6, LookupAbandoned, 0, 40), lookupRep(IPv4, LookupAnswered, 0, 10, v4a)},
		}},
		{"failure: every attempt refused", nil, func(h *harness) {
			h.start()
			h.step(1, answered(IPv6, v6a), answered(IPv4, v4a))
			h.step(2, refused(0))
			h.step(3, refused(1))
		}, Report{
			Winner: -1, Failure: OutcomeConnect, Elapsed: ms(3),
			Resolving: span(0, 1), Connecting: span(1, 3),
			Lookups: [2]LookupReport{lookupRep(IPv6, LookupAnswered, 0, 1, v6a), lookupRep(IPv4, LookupAnswered, 0, 1, v4a)},
			Attempts: []AttemptReport{
				attemptRep(v6a, 1, 2, AttemptFailed, syscall.ECONNREFUSED),
				attemptRep(v4a, 2, 3, AttemptFailed, syscall.ECONNREFUSED),
			},
		}},
		{"failure: nothing resolved", nil, func(h *harness) {
			h.start()
			h.step(4, lookupFailed(IPv6, EAI_NODATA))
			h.step(6, lookupFailed(IPv4, EAI_NODATA))
		}, Report{
			Winner: -1, Failure: OutcomeResolve, Elapsed: ms(6),
			Resolving: span(0, 6),
			Lookups: [2]LookupReport{
				{Family: IPv6, State: LookupFailed, End: ms(4), Err: nodata(IPv6)},
				{Family: IPv4, State: LookupFailed, End: ms(6), Err: nodata(IPv4)},
			},
		}},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			cfg := testConfig()
			if c.cfg != nil {
				c.cfg(&cfg)
			}
			for i, f := range LookupFamilies {
				c.want.Lookups[i].Family = f // named even when not asked
			}
			h := newHarness(t, cfg)
			c.run(h)
			got, err := NewReport(h.trace)
			if err != nil {
				t.Fatalf("NewReport: %v", err)
			}
			if !reflect.DeepEqual(got, c.want) {
				t.Errorf("report\n got %+v\nwant %+v", got, c.want)
			}
		})
	}
}

// Record keeps the same trace Trace sees, and the outcome carries it.
func TestRecordKeepsTheTraceInTheOutcome(t *testing.T) {
	cfg := testConfig()
	cfg.Record = &Trace{}
	h := newHarness(t, cfg)
	h.start()
	h.step(1, answered(IPv6, v6a), answered(IPv4, v4a))
	h.step(2, refused(0))
	e := h.wantFailure(h.step(3, refused(1)))
	if e.Trace != cfg.Record || !reflect.DeepEqual(e.Trace.Events, h.trace) {
		t.Fatalf("recorded %+v, traced %d events", e.Trace, len(h.trace))
	}
	rep, err := e.Report()
	if err != nil || rep.Failure != OutcomeConnect || len(rep.Attempts) != 2 {
		t.Fatalf("report %+v, %v", rep, err)
	}

	// Off: nothing is kept.
	h = newHarness(t, testConfig())
	h.start()
	e = h.wantFailure(h.step(1, lookupFailed(IPv6, EAI_NONAME), lookupFailed(IPv4, EAI_NONAME)))
	if e.Trace != nil || h.m.Recorded() != nil {
		t.Fatalf("kept a trace without Record: %+v", e.Trace)
	}
	if _, err := e.Report(); !errors.Is(err, ErrNoTrace) {
		t.Fatalf("report without a trace: %v", err)
	}
}

func TestReportRefusesIncompleteTraces(t *testing.T) {
	h := newHarness(t, testConfig())
	h.start()
	h.step(1, answered(IPv6, v6a))
	if _, err := NewReport(h.trace); !errors.Is(err, ErrRaceNotDone) {
		t.Fatalf("running race: %v", err)
	}
	h.step(2, connected(0))
	full := h.trace
	bad := [][]TraceEvent{
		append(append([]TraceEvent(nil), full...), full[0]),                // something after done
		append([]TraceEvent{{Kind: TraceAttemptWon, Attempt: 3}}, full...), // an unknown attempt
		{{Kind: TraceLookupAnswered, Family: IPv4}, {Kind: TraceDone}},     // an answer never asked
	}
	for i, evs := range bad {
		if _, err := NewReport(evs); !errors.Is(err, ErrBadTrace) {
			t.Errorf("bad trace %d: %v", i, err)
		}
	}
	if _, err := NewReport(nil); !errors.Is(err, ErrNoTrace) {
		t.Fatalf("no trace: %v", err)
	}
}

func TestReportNamesAreDistinct(t *testing.T) {
	seen := map[string]bool{}
	for r := ReasonNone; r <= ReasonGivenAddresses; r++ {
		if n := r.String(); n == "unknown" || seen[n] {
			t.Fatalf("reason %d named %q", r, n)
		}
		seen[r.String()] = true
	}
	for s := LookupNotAsked; s <= LookupTimedOut; s++ {
		if s.String() == "unknown" {
			t.Fatalf("lookup state %d unnamed", s)
		}
	}
	for o := AttemptConnected; o <= AttemptCanceled; o++ {
		if o.String() == "unknown" {
			t.Fatalf("attempt outcome %d unnamed", o)
		}
	}
}
