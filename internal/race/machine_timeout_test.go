package race

import (
	"context"
	"errors"
	"syscall"
	"testing"
)

func TestConnectTimeoutWaitsForEveryAddress(t *testing.T) {
	cfg := testConfig()
	cfg.ConnectTimeout = ms(100)
	h := newHarness(t, cfg)
	h.start()
	h.step(0, answered(IPv6, v6a), answered(IPv4, v4a))
	// At 100 v4a has not been tried yet: connect_timeout must not fire
	// during the attempt delay.
	h.wantNotDone(h.step(100))
	acts := h.step(250)
	h.wantStarted(acts, v4a)
	h.wantTimer(acts, 350)
	h.wantNotDone(h.step(349))
	e := h.wantFailure(h.step(350))
	if e.Expired != TimeoutConnect || !errors.Is(e, syscall.ETIMEDOUT) {
		t.Fatalf("error %v (expired %v), want connect_timeout", e, e.Expired)
	}
	if c := closed(h.step(350)); len(c) != 0 {
		t.Fatalf("closed after done: %v", c)
	}
}

func TestConnectTimeoutNotCutByResolutionDelay(t *testing.T) {
	cfg := testConfig()
	cfg.ConnectTimeout = ms(10)
	h := newHarness(t, cfg)
	h.start()
	h.step(0, answered(IPv4, v4a))
	h.wantNotDone(h.step(10))
	acts := h.step(50)
	h.wantStarted(acts, v4a)
	h.wantTimer(acts, 60)
	e := h.wantFailure(h.step(60))
	if e.Expired != TimeoutConnect {
		t.Fatalf("expired %v", e.Expired)
	}
	if c := e.Attempts; len(c) != 1 || c[0].End != ms(60) {
		t.Fatalf("attempts %+v", c)
	}
}

func TestConnectTimeoutRearmedByLateAddresses(t *testing.T) {
	cfg := testConfig()
	cfg.ConnectTimeout = ms(100)
	h := newHarness(t, cfg)
	h.start()
	h.step(0, answered(IPv6, v6a)) // armed for 100
	h.wantStarted(h.step(80, answered(IPv4, v4a)))
	h.wantNotDone(h.step(100)) // v4a still untried
	h.wantStarted(h.step(250), v4a)
	h.wantFailure(h.step(350))
}

func TestResolvTimeoutWithNothingResolved(t *testing.T) {
	cfg := testConfig()
	cfg.ResolvTimeout = ms(100)
	h := newHarness(t, cfg)
	h.wantTimer(h.start(), 100)
	h.wantNotDone(h.step(99))
	acts := h.step(100)
	e := h.wantFailure(acts)
	var te *TimeoutError
	if e.Expired != TimeoutResolv || !errors.As(e.Cause, &te) || te.Kind != TimeoutResolv {
		t.Fatalf("error %v, want resolv_timeout", e)
	}
	cancels := 0
	for _, a := range acts {
		if a.Kind == ActionCancelLookup {
			cancels++
		}
	}
	if cancels != 2 {
		t.Fatalf("want both lookups cancelled: %+v", acts)
	}
}

func TestResolvTimeoutLetsResolvedAddressesRace(t *testing.T) {
	cfg := testConfig()
	cfg.ResolvTimeout = ms(30)
	h := newHarness(t, cfg)
	h.start()
	h.step(0, answered(IPv4, v4a))
	// AAAA is abandoned at 30: waiting for it any longer is pointless, so
	// the Resolution Delay ends there too.
	acts := h.step(30)
	h.wantNotDone(acts)
	h.wantStarted(acts, v4a)
	h.wantWinner(h.step(60, connected(0)), 0)
}

func TestOpenTimeoutBoundsEverything(t *testing.T) {
	cfg := testConfig()
	cfg.OpenTimeout = ms(300)
	h := newHarness(t, cfg)
	h.wantTimer(h.start(), 300)
	h.step(0, answered(IPv6, v6a), answered(IPv4, v4a))
	h.step(250)
	acts := h.step(300)
	e := h.wantFailure(acts)
	if e.Expired != TimeoutOpen || !errors.Is(e.Cause, syscall.ETIMEDOUT) {
		t.Fatalf("error %v, want open_timeout", e)
	}
	if c := closed(acts); len(c) != 2 {
		t.Fatalf("closed %v, want both attempts", c)
	}
}

func TestConnectionErrorNotReplacedByLaterResolutionError(t *testing.T) {
	h := newHarness(t, testConfig())
	h.start()
	h.step(0, answered(IPv6, v6a))
	h.wantNotDone(h.step(5, refused(0)))
	e := h.wantFailure(h.step(20, lookupFailed(IPv4, EAI_NONAME)))
	if e.Cause != syscall.ECONNREFUSED {
		t.Fatalf("cause %v, want ECONNREFUSED", e.Cause)
	}
	var re *ResolveError
	if !errors.As(e, &re) || re.Code != EAI_NONAME {
		t.Fatalf("the A failure is lost: %v", e)
	}
}

func TestEveryResolutionFailsLastErrorWins(t *testing.T) {
	h := newHarness(t, testConfig())
	h.start()
	h.step(5, lookupFailed(IPv6, EAI_NODATA))
	e := h.wantFailure(h.step(10, lookupFailed(IPv4, EAI_NONAME)))
	re, ok := e.Cause.(*ResolveError)
	if !ok || re.Code != EAI_NONAME || re.Family != IPv4 {
		t.Fatalf("cause %v, want the A lookup's EAI_NONAME", e.Cause)
	}
	if l := e.Lookups[0].Err.(*ResolveError); l.Code != EAI_NODATA {
		t.Fatalf("AAAA part lost: %v", e.Lookups[0].Err)
	}
}

func TestEmptyAnswerIsNoData(t *testing.T) {
	h := newHarness(t, testConfig())
	h.start()
	h.step(1, answered(IPv6))
	e := h.wantFailure(h.step(2, answered(IPv4)))
	if re := e.Cause.(*ResolveError); re.Code != EAI_NODATA {
		t.Fatalf("cause %v", e.Cause)
	}
}

func TestCancellationAtEveryStage(t *testing.T) {
	cancel := Event{Kind: EventCancel, Err: context.Canceled}
	stages := map[string]func(h *harness) int{
		"resolving":        func(h *harness) int { return 0 },
		"resolution delay": func(h *harness) int { h.step(0, answered(IPv4, v4a)); return 0 },
		"first attempt":    func(h *harness) int { h.step(0, answered(IPv6, v6a)); return 1 },
		"two attempts": func(h *harness) int {
			h.step(0, answered(IPv6, v6a), answered(IPv4, v4a))
			h.step(250)
			return 2
		},
	}
	for name, setup := range stages {
		t.Run(name, func(t *testing.T) {
			h := newHarness(t, testConfig())
			h.start()
			open := setup(h)
			acts := h.step(260, cancel)
			e := h.wantFailure(acts)
			if !errors.Is(e, context.Canceled) || e.Canceled == nil {
				t.Fatalf("error %v, want context.Canceled", e)
			}
			if c := closed(acts); len(c) != open {
				t.Fatalf("closed %v, want %d attempts", c, open)
			}
			if len(h.step(300, connected(0))) != 0 {
				t.Fatal("actions after cancellation")
			}
		})
	}
}

func TestSerialModeResolvesThenTriesInTurn(t *testing.T) {
	cfg := testConfig()
	cfg.Serial = true
	cfg.ConnectTimeout = ms(100)
	h := newHarness(t, cfg)
	h.start()
	// No attempt until every lookup is done, and no Resolution Delay.
	h.wantStarted(h.step(0, answered(IPv4, v4a)))
	h.wantStarted(h.step(500, answered(IPv6, v6a)), v6a)
	// One at a time: no stagger; connect_timeout bounds each attempt.
	acts := h.step(550)
	h.wantStarted(acts)
	acts = h.step(600)
	h.wantStarted(acts, v4a)
	if c := closed(acts); len(c) != 1 || c[0] != 0 {
		t.Fatalf("timed-out attempt not closed: %+v", acts)
	}
	e := h.wantFailure(h.step(610, refused(1)))
	if e.Cause != syscall.ECONNREFUSED {
		t.Fatalf("cause %v", e.Cause)
	}
	if !errors.Is(e.Attempts[0].Err, syscall.ETIMEDOUT) {
		t.Fatalf("first attempt %v, want timeout", e.Attempts[0].Err)
	}
}
