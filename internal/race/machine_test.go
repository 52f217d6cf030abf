package race

import (
	"errors"
	"net/netip"
	"syscall"
	"testing"
)

func TestLookupsStartTogetherAAAAFirst(t *testing.T) {
	h := newHarness(t, testConfig())
	acts := h.start()
	if len(acts) < 2 || acts[0].Kind != ActionStartLookup || acts[0].Query != QueryAAAA ||
		acts[1].Kind != ActionStartLookup || acts[1].Query != QueryA {
		t.Fatalf("want AAAA then A lookups at 0, got %+v", acts)
	}
	h.wantStarted(acts)
}

func TestAAAAFirstStartsAtOnce(t *testing.T) {
	h := newHarness(t, testConfig())
	h.start()
	acts := h.step(10, answered(IPv6, v6a))
	h.wantStarted(acts, v6a)
}

func TestAFirstWaitsResolutionDelay(t *testing.T) {
	h := newHarness(t, testConfig())
	h.start()
	acts := h.step(0, answered(IPv4, v4a))
	h.wantStarted(acts)
	h.wantTimer(acts, 50)
	acts = h.step(50)
	h.wantStarted(acts, v4a)
}

func TestAAAAWithinResolutionDelayGoesFirst(t *testing.T) {
	h := newHarness(t, testConfig())
	h.start()
	h.step(0, answered(IPv4, v4a))
	acts := h.step(30, answered(IPv6, v6a))
	h.wantStarted(acts, v6a)
	h.wantTimer(acts, 280)
	acts = h.step(280)
	h.wantStarted(acts, v4a)
}

func TestFailedLookupNeverStartsResolutionDelay(t *testing.T) {
	// AAAA fails first: A's answer starts an attempt at once.
	h := newHarness(t, testConfig())
	h.start()
	h.step(5, lookupFailed(IPv6, EAI_NODATA))
	h.wantStarted(h.step(20, answered(IPv4, v4a)), v4a)

	// A fails first: nothing to wait for, AAAA's answer starts at once.
	h = newHarness(t, testConfig())
	h.start()
	acts := h.step(5, lookupFailed(IPv4, EAI_NONAME))
	if _, ok := timerAt(acts); ok {
		t.Fatalf("a failed A lookup armed a timer: %+v", acts)
	}
	h.wantStarted(h.step(20, answered(IPv6, v6a)), v6a)

	// A answers, then AAAA fails inside the delay: start at the failure.
	h = newHarness(t, testConfig())
	h.start()
	h.step(0, answered(IPv4, v4a))
	h.wantStarted(h.step(20, lookupFailed(IPv6, EAI_AGAIN)), v4a)
}

func TestSecondAttemptAfterAttemptDelay(t *testing.T) {
	h := newHarness(t, testConfig())
	h.start()
	acts := h.step(0, answered(IPv6, v6a), answered(IPv4, v4a))
	h.wantStarted(acts, v6a)
	h.wantTimer(acts, 250)
	h.wantStarted(h.step(249))
	h.wantStarted(h.step(250), v4a)
}

func TestFailureStartsNextAtOnceWhileOthersPending(t *testing.T) {
	h := newHarness(t, testConfig())
	h.start()
	h.step(0, answered(IPv6, v6a, v6b), answered(IPv4, v4a))
	h.wantStarted(h.step(250), v4a) // attempt 1, attempt 0 still pending
	acts := h.step(300, refused(0))
	h.wantStarted(acts, v6b)
	h.wantTimer(acts, -1) // every address is tried: no attempt delay left
	// Earlier attempts keep running: attempt 1 can still win.
	acts = h.step(320, connected(1))
	h.wantWinner(acts, 1)
	if c := closed(acts); len(c) != 1 || c[0] != 2 {
		t.Fatalf("closed %v, want [2]", c)
	}
}

func TestLateAddressesJoinInSortedPosition(t *testing.T) {
	h := newHarness(t, testConfig())
	h.start()
	h.step(0, answered(IPv4, v4a, v4b))
	acts := h.step(50)
	h.wantStarted(acts, v4a)
	h.wantTimer(acts, 300)
	// AAAA arrives at 100: IPv6 sorts first, so it goes before v4b.
	h.wantStarted(h.step(100, answered(IPv6, v6a)))
	h.wantStarted(h.step(300), v6a)
	h.wantStarted(h.step(550), v4b)
}

func TestAddressArrivingAt400Joins(t *testing.T) {
	cfg := testConfig()
	h := newHarness(t, cfg)
	h.start()
	h.wantStarted(h.step(0, answered(IPv6, v6a)), v6a)
	h.wantStarted(h.step(250)) // nothing else known yet
	acts := h.step(400, answered(IPv4, v4a))
	h.wantStarted(acts, v4a)
	// Started attempts are never cancelled by new answers.
	if c := closed(acts); len(c) != 0 {
		t.Fatalf("new answer closed attempts %v", c)
	}
}

func TestInterleaveWithFirstAddressFamilyCount(t *testing.T) {
	got := Interleave([]netip.Addr{v6a, v6b, v6c, v4a, v4b}, 2)
	want := []netip.Addr{v6a, v6b, v4a, v6c, v4b}
	for i := range want {
		if got[i] != want[i] {
			t.Fatalf("Interleave = %v, want %v", got, want)
		}
	}
	got = Interleave([]netip.Addr{v6a, v6b, v4a, v4b}, 1)
	want = []netip.Addr{v6a, v4a, v6b, v4b}
	for i := range want {
		if got[i] != want[i] {
			t.Fatalf("Interleave = %v, want %v", got, want)
		}
	}
}

func TestDuplicateAddressesTriedOnce(t *testing.T) {
	h := newHarness(t, testConfig())
	h.start()
	h.wantStarted(h.step(0, answered(IPv6, v6a, v6a)), v6a)
	acts := h.step(10, answered(IPv4, v4a, v4a), refused(0))
	h.wantStarted(acts, v4a)
	e := h.wantFailure(h.step(20, refused(1)))
	if len(e.Attempts) != 2 {
		t.Fatalf("attempts %+v, want 2", e.Attempts)
	}
}

func TestFirstConnectedWinsAndOthersClose(t *testing.T) {
	h := newHarness(t, testConfig())
	h.start()
	h.step(0, answered(IPv6, v6a), answered(IPv4, v4a))
	h.step(250)
	// Both connect in the same turn: the first event wins, the other is
	// closed, and no second winner can come out later.
	acts := h.step(260, connected(1), connected(0))
	h.wantWinner(acts, 1)
	if c := closed(acts); len(c) != 1 || c[0] != 0 {
		t.Fatalf("closed %v, want [0]", c)
	}
	if acts := h.step(270, connected(0)); len(acts) != 0 {
		t.Fatalf("late winner produced %+v", acts)
	}
}

func TestWinnerCancelsPendingLookup(t *testing.T) {
	h := newHarness(t, testConfig())
	h.start()
	h.step(0, answered(IPv6, v6a))
	acts := h.step(5, connected(0))
	h.wantWinner(acts, 0)
	found := false
	for _, a := range acts {
		found = found || a.Kind == ActionCancelLookup && a.Query == QueryA
	}
	if !found {
		t.Fatalf("pending A lookup not cancelled: %+v", acts)
	}
}

func TestStaticSingleAddressIsOnePlainAttempt(t *testing.T) {
	cfg := testConfig()
	cfg.Static = []netip.Addr{v4a}
	h := newHarness(t, cfg)
	acts := h.start()
	h.wantStarted(acts, v4a)
	if _, ok := timerAt(acts); ok {
		t.Fatalf("a single address armed a timer: %+v", acts)
	}
	for _, a := range acts {
		if a.Kind == ActionStartLookup {
			t.Fatalf("a static address was resolved: %+v", acts)
		}
	}
	e := h.wantFailure(h.step(1, refused(0)))
	if !errors.Is(e, syscall.ECONNREFUSED) || e.Cause != syscall.ECONNREFUSED {
		t.Fatalf("error %v, want ECONNREFUSED", e)
	}
}

// A literal is the static list of its one address, kept in the machine's
// own memory: the same actions, the same outcome, and the machine's list
// does not depend on the caller's config once Init returns.
func TestLiteralIsAStaticListOfOne(t *testing.T) {
	for _, tc := range []struct {
		name string
		set  func(*MachineConfig)
	}{
		{"static", func(c *MachineConfig) { c.Static = []netip.Addr{v6a} }},
		{"literal", func(c *MachineConfig) { c.Literal = v6a }},
	} {
		t.Run(tc.name, func(t *testing.T) {
			cfg := testConfig()
			tc.set(&cfg)
			if !cfg.Lone() {
				t.Fatal("a single address is not Lone")
			}
			h := newHarness(t, cfg)
			cfg.Literal, cfg.Static = v4a, nil // the caller's copy changes; the machine's must not
			acts := h.start()
			h.wantStarted(acts, v6a)
			for _, a := range acts {
				if a.Kind == ActionStartLookup {
					t.Fatalf("a static address was resolved: %+v", acts)
				}
			}
			h.wantWinner(h.step(1, connected(0)), 0)
		})
	}
}

func TestTraceRecordsEveryStep(t *testing.T) {
	h := newHarness(t, testConfig())
	h.start()
	h.step(0, answered(IPv4, v4a))
	h.step(30, answered(IPv6, v6a))
	h.step(40, connected(0))
	want := []struct {
		kind      TraceKind
		at, until int
	}{
		{TraceLookupStarted, 0, 0}, {TraceLookupStarted, 0, 0},
		{TraceLookupAnswered, 0, 0}, {TraceResolutionDelay, 0, 50},
		{TraceLookupAnswered, 30, 0}, {TraceAttemptStarted, 30, 0},
		{TraceAttemptDelay, 30, 280},
		{TraceAttemptWon, 40, 0}, {TraceDone, 40, 0},
	}
	if len(h.trace) != len(want) {
		t.Fatalf("trace %+v", h.trace)
	}
	for i, w := range want {
		got := h.trace[i]
		if got.Kind != w.kind || got.At != ms(w.at) || got.Until != ms(w.until) {
			t.Fatalf("trace[%d] = %v at %v until %v, want %v at %v until %v",
				i, got.Kind, got.At, got.Until, w.kind, ms(w.at), ms(w.until))
		}
	}
}
