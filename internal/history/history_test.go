package history

import (
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/hev2/hev2/internal/race"
)

var errRefused error = syscall.ECONNREFUSED

const (
	netA = 0xa
	netB = 0xb
	host = "dual.example"
)

func TestBlackholePaidOnceThenIPv4First(t *testing.T) {
	w := newWorld(t)
	w.paths[v6] = path{blackhole: true}
	w.paths[v4] = path{rtt: 20 * time.Millisecond}

	r := w.connect(netA, host)
	if r.first != v6 || r.winner != v4 || r.elapsed != 270*time.Millisecond {
		t.Fatalf("first connect: first attempt %v, winner %v after %v; want IPv6 first, IPv4 after 250+20 ms", r.first, r.winner, r.elapsed)
	}
	for i := 2; i <= 10; i++ {
		w.clock.advance(time.Second)
		r = w.connect(netA, host)
		if r.first != v4 || r.winner != v4 {
			t.Fatalf("connect %d: first attempt %v, winner %v; want IPv4 first and winning", i, r.first, r.winner)
		}
		if limit := 24 * time.Millisecond; r.elapsed > limit { // 1.2 x IPv4's RTT
			t.Fatalf("connect %d took %v, beyond 1.2 x IPv4's RTT (%v)", i, r.elapsed, limit)
		}
		want := "IPv4 first: IPv6 to dual.example lost 1 race without connecting in the last 10m0s on this network"
		if r.in.First != race.IPv4 || r.in.Reason != want {
			t.Fatalf("connect %d: decision %v %q, want IPv4 %q", i, r.in.First, r.in.Reason, want)
		}
	}
	// IPv4 now has samples: its RTT sets the attempt delay (2 x 20 ms,
	// raised to the 100 ms floor).
	if !r.in.DelayFromRTT || r.in.SRTT != 20*time.Millisecond || r.delay != 100*time.Millisecond {
		t.Fatalf("attempt delay %v (from RTT %v, SRTT %v); want 100 ms from 20 ms", r.delay, r.in.DelayFromRTT, r.in.SRTT)
	}
	st := w.store.Stats()
	if st.Reordered != 9 || st.Entries != 1 || st.Recorded != 11 {
		t.Fatalf("stats %+v: want 9 reordered, 1 entry, 11 outcomes (IPv6 lost once, IPv4 connected 10 times)", st)
	}
}

func TestHealedPathConvergesWithinLifetime(t *testing.T) {
	w := newWorld(t)
	w.policy.Lifetime = time.Minute
	w.paths[v6] = path{blackhole: true}
	w.paths[v4] = path{rtt: 20 * time.Millisecond}
	w.connect(netA, host) // IPv6 lost at t=270 ms
	w.paths[v6] = path{rtt: 10 * time.Millisecond}

	// Until the loss is a Lifetime old, IPv4 stays first (the healed path
	// is not tried: no connect pays for finding out)...
	w.clock.advance(time.Minute - 300*time.Millisecond)
	if r := w.connect(netA, host); r.first != v4 {
		t.Fatalf("before Lifetime: first attempt %v, want IPv4", r.first)
	}
	// ...then the RFC 6724 order is back, and the healed IPv6 wins.
	w.clock.advance(300 * time.Millisecond)
	r := w.connect(netA, host)
	if r.first != v6 || r.winner != v6 || r.in.First != race.FamilyUnspec {
		t.Fatalf("after Lifetime: first %v, winner %v, decision %v; want IPv6 first and winning, no decision", r.first, r.winner, r.in.First)
	}
	if r := w.connect(netA, host); r.first != v6 {
		t.Fatalf("IPv6 connected: first attempt %v, want IPv6", r.first)
	}
}

func TestStillBrokenPathPaidOncePerLifetime(t *testing.T) {
	w := newWorld(t)
	w.policy.Lifetime = time.Minute
	w.paths[v6] = path{blackhole: true}
	w.paths[v4] = path{rtt: 20 * time.Millisecond}
	paid := 0
	// Ten minutes of a connect every 10 s: 61 connects, ten Lifetimes.
	for i := 0; i <= 60; i++ {
		if r := w.connect(netA, host); r.first == v6 {
			paid++
			if r.elapsed < 250*time.Millisecond {
				t.Fatalf("connect %d: IPv6 first but only %v: the blackhole was not paid?", i, r.elapsed)
			}
		}
		w.clock.advance(10 * time.Second)
	}
	// The first connect, then one per Lifetime once the last loss ages out.
	if paid > 11 || paid < 10 {
		t.Fatalf("blackhole paid %d times in 10 lifetimes; want 10 or 11", paid)
	}
}

func TestNetworkChangeRestoresIPv6First(t *testing.T) {
	w := newWorld(t)
	w.paths[v6] = path{blackhole: true}
	w.paths[v4] = path{rtt: 20 * time.Millisecond}
	w.connect(netA, host)
	if r := w.connect(netA, host); r.first != v4 {
		t.Fatalf("network A: first attempt %v, want IPv4", r.first)
	}
	// A new network: nothing of A is read; RFC 8305's order at once.
	w.paths[v6] = path{rtt: 10 * time.Millisecond}
	if r := w.connect(netB, host); r.first != v6 || r.winner != v6 || r.in.Decided() {
		t.Fatalf("network B: first %v, winner %v, decided %v; want IPv6 first, nothing decided", r.first, r.winner, r.in.Decided())
	}
	// Back on A, A's history holds.
	if r := w.connect(netA, host); r.first != v4 {
		t.Fatalf("back on A: first attempt %v, want IPv4", r.first)
	}
	// An unknown network (0) is never read nor written.
	w.paths[v6] = path{blackhole: true}
	w.connect(0, host)
	if r := w.connect(0, host); r.first != v6 || r.in.Decided() {
		t.Fatalf("unknown network: first %v decided %v; want IPv6, nothing", r.first, r.in.Decided())
	}
}

func TestRefusedAndIPv4Demotion(t *testing.T) {
	w := newWorld(t)
	w.paths[v6] = path{rtt: 10 * time.Millisecond}
	w.paths[v4] = path{refused: true}
	w.connect(netA, host) // IPv6 wins at once; IPv4 never tried
	if r := w.connect(netA, host); r.in.Decided() {
		t.Fatalf("nothing failed yet: decided %+v", r.in)
	}
	w.paths[v6] = path{refused: true}
	w.paths[v4] = path{rtt: 10 * time.Millisecond}
	r := w.connect(netA, host) // IPv6 refused, IPv4 wins
	if r.winner != v4 {
		t.Fatalf("winner %v, want IPv4", r.winner)
	}
	r = w.connect(netA, host)
	if r.first != v4 || !strings.Contains(r.in.Reason, "IPv6 to dual.example was refused 1 time") {
		t.Fatalf("first %v, reason %q: want IPv4 first after a refusal", r.first, r.in.Reason)
	}
	// IPv4 breaks, IPv6 heals: IPv4 fails at once, IPv6 wins, and the
	// order flips back (a success clears its family's failures).
	w.paths[v6] = path{rtt: 10 * time.Millisecond}
	w.paths[v4] = path{refused: true}
	if r := w.connect(netA, host); r.winner != v6 {
		t.Fatalf("winner %v, want IPv6", r.winner)
	}
	if r := w.connect(netA, host); r.in.First != race.IPv6 || !strings.Contains(r.in.Reason, "IPv4 to dual.example was refused") {
		t.Fatalf("decision %v %q: want IPv6 first, IPv4 refused", r.in.First, r.in.Reason)
	}
}

func TestAttemptDelayFromRTT(t *testing.T) {
	w := newWorld(t)
	w.paths[v6] = path{rtt: 300 * time.Millisecond}
	w.paths[v4] = path{blackhole: true}
	w.policy.MinDelay, w.policy.MaxDelay = time.Millisecond, 2*time.Second
	// 300 ms > the default 250 ms delay: IPv4 is started and loses
	// without connecting (it is blackholed), but is pending only 50 ms:
	// no evidence, no demotion.
	for i := 0; i < DefaultMinSamples; i++ {
		if r := w.connect(netA, host); r.delay != race.DefaultConnectionAttemptDelay || r.winner != v6 {
			t.Fatalf("connect %d: delay %v winner %v; want the default until %d samples", i, r.delay, r.winner, DefaultMinSamples)
		}
	}
	r := w.connect(netA, host)
	if !r.in.DelayFromRTT || r.delay != 600*time.Millisecond || r.first != v6 || r.in.First != race.FamilyUnspec {
		t.Fatalf("after %d samples: delay %v from RTT %v, first %v; want 600 ms (2 x 300 ms), IPv6 first", DefaultMinSamples, r.delay, r.in.DelayFromRTT, r.first)
	}
	// The hard floor holds whatever the policy says.
	w.policy.MinDelay = time.Microsecond
	if d := AttemptDelay(&race.HistoryInput{SRTT: time.Microsecond}, &w.policy); d != HardMinDelay {
		t.Fatalf("delay %v below the hard floor %v", d, HardMinDelay)
	}
	if d := AttemptDelay(&race.HistoryInput{SRTT: time.Hour}, &Policy{}); d != DefaultMaxDelay {
		t.Fatalf("delay %v, want clamped to %v", d, DefaultMaxDelay)
	}
}
