package race

import (
	"context"
	"testing"
)

// Every front end takes a failed race's class from Error.Outcome: a cancel
// beats a timeout, which beats an attempt's error, which beats a lookup's.
func TestOutcomeClassification(t *testing.T) {
	cases := []struct {
		name string
		cfg  func(*MachineConfig)
		run  func(h *harness) []Action
		want OutcomeKind
	}{
		{"every lookup failed", nil, func(h *harness) []Action {
			h.start()
			h.step(0, lookupFailed(IPv6, EAI_NONAME))
			return h.step(1, lookupFailed(IPv4, EAI_NONAME))
		}, OutcomeResolve},
		{"every attempt refused, a lookup failed too", nil, func(h *harness) []Action {
			h.start()
			h.step(0, lookupFailed(IPv6, EAI_NODATA))
			h.step(1, answered(IPv4, v4a))
			return h.step(2, refused(0))
		}, OutcomeConnect},
		{"resolv_timeout, then the one address refused", func(c *MachineConfig) { c.ResolvTimeout = ms(30) }, func(h *harness) []Action {
			h.start()
			h.step(0, answered(IPv4, v4a))
			h.step(30)
			return h.step(31, refused(0))
		}, OutcomeTimeout},
		{"canceled while attempts are refused", nil, func(h *harness) []Action {
			h.start()
			h.step(0, answered(IPv6, v6a))
			return h.step(1, refused(0), Event{Kind: EventCancel, Err: context.Canceled})
		}, OutcomeCanceled},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			cfg := testConfig()
			if c.cfg != nil {
				c.cfg(&cfg)
			}
			h := newHarness(t, cfg)
			e := h.wantFailure(c.run(h))
			if e.Outcome != c.want {
				t.Fatalf("outcome %v, want %v (%v)", e.Outcome, c.want, e)
			}
		})
	}
}

// A failed race's Error lives in the machine and its Attempts are the
// machine's own account (no copy, no allocation), which never changes once
// the race is decided; an append by whoever holds the Error copies instead
// of writing into the machine.
func TestErrorAttemptsAreTheMachinesOwnAndAppendCopies(t *testing.T) {
	h := newHarness(t, testConfig())
	h.start()
	h.step(0, answered(IPv6, v6a))
	e := h.wantFailure(h.step(1, refused(0), Event{Kind: EventCancel, Err: context.Canceled}))
	own := h.m.DecidedAttempts()
	if len(e.Attempts) != 1 || &e.Attempts[0] != &own[0] {
		t.Fatalf("Error.Attempts %v is not the machine's account %v", e.Attempts, own)
	}
	grown := append(e.Attempts, AttemptInfo{Won: true})
	if &grown[0] == &own[0] || len(h.m.DecidedAttempts()) != 1 {
		t.Fatal("an append to Error.Attempts wrote into the machine's memory")
	}
	if _, again := done(h.step(2, Event{Kind: EventCancel, Err: context.Canceled})); again {
		t.Fatal("a decided race was decided again (its Error would be rebuilt in place)")
	}
}
