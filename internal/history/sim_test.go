package history

import (
	"net/netip"
	"testing"
	"time"

	"github.com/hev2/hev2/internal/race"
)

// The tests play whole races: the real race machine, fed by a simulated
// network on a fake clock that the store reads too, so "time" is exact.

type fakeClock struct{ t time.Time }

func (c *fakeClock) now() time.Time          { return c.t }
func (c *fakeClock) advance(d time.Duration) { c.t = c.t.Add(d) }

var (
	v6 = netip.MustParseAddr("2001:db8::20")
	v4 = netip.MustParseAddr("198.18.0.10")
)

// path is how one destination behaves: connects after rtt, or never.
type path struct {
	rtt       time.Duration
	blackhole bool
	refused   bool
}

// world is the simulated network of one test.
type world struct {
	t      *testing.T
	clock  *fakeClock
	store  *Store
	policy Policy
	paths  map[netip.Addr]path
}

func newWorld(t *testing.T) *world {
	c := &fakeClock{t: time.Unix(1_000_000, 0)}
	return &world{t: t, clock: c, store: New(Config{Now: c.now}), paths: map[netip.Addr]path{}}
}

// race is what one simulated connect did.
type raceOutcome struct {
	winner  netip.Addr
	first   netip.Addr // the first attempt's address
	elapsed time.Duration
	in      race.HistoryInput
	delay   time.Duration
}

// connect plays one race to host (AAAA v6 and A v4, both answered at once)
// on network, as core does: Decide, then the machine with the decision as
// input and the store as its sink. The clock moves with the race.
func (w *world) connect(network uint64, host string) raceOutcome {
	w.t.Helper()
	in := w.store.Decide(network, host, 2, &w.policy)
	cfg := race.MachineConfig{
		Host: host, Port: 443, Queries: race.AddressQueries[:],
		ResolutionDelay:         race.DefaultResolutionDelay,
		ConnectionAttemptDelay:  race.DefaultConnectionAttemptDelay,
		FirstAddressFamilyCount: 1,
		History:                 in,
		HistorySink:             w.store,
	}
	if in.DelayFromRTT {
		cfg.ConnectionAttemptDelay = AttemptDelay(&in, &w.policy)
	}
	m := race.NewMachine(cfg)
	base := w.clock.t
	at := time.Duration(0)
	type pending struct {
		id  int
		due time.Duration
		err error
	}
	var inflight []pending
	out := raceOutcome{in: in, delay: cfg.ConnectionAttemptDelay}
	timer := time.Duration(-1)
	acts := m.Start(0)
	events := []race.Event{
		{Kind: race.EventLookupDone, Query: race.QueryAAAA, Addrs: []netip.Addr{v6}},
		{Kind: race.EventLookupDone, Query: race.QueryA, Addrs: []netip.Addr{v4}},
	}
	for steps := 0; ; steps++ {
		if steps > 100 {
			w.t.Fatal("race did not end")
		}
		for _, a := range acts {
			switch a.Kind {
			case race.ActionStartAttempt:
				if !out.first.IsValid() {
					out.first = a.Addr.Addr()
				}
				p := w.paths[a.Addr.Addr()]
				switch {
				case p.refused:
					inflight = append(inflight, pending{a.Attempt, at, errRefused})
				case !p.blackhole:
					inflight = append(inflight, pending{a.Attempt, at + p.rtt, nil})
				}
			case race.ActionArmTimer:
				timer = a.At
			case race.ActionDone:
				if a.Err != nil {
					w.t.Fatalf("race failed: %v", a.Err)
				}
				out.winner = m.Attempts()[a.Attempt].Addr.Addr()
				out.elapsed = at
				return out
			}
		}
		if len(events) == 0 {
			next := timer
			for _, p := range inflight {
				if next < 0 || p.due < next {
					next = p.due
				}
			}
			if next < 0 {
				w.t.Fatal("race waits for nothing")
			}
			at = next
			rest := inflight[:0]
			for _, p := range inflight {
				if p.due <= at {
					events = append(events, race.Event{Kind: race.EventAttemptDone, Attempt: p.id, Err: p.err})
				} else {
					rest = append(rest, p)
				}
			}
			inflight = rest
		}
		w.clock.t = base.Add(at)
		acts = m.Step(at, events...)
		events = nil
	}
}
