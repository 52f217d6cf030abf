package history

import (
	"fmt"
	"strings"
	"time"

	"github.com/hev2/hev2/internal/race"
)

// Policy is what one Dialer asks of history. Zero fields take the defaults.
type Policy struct {
	// Lifetime is how long a failure counts against its family: the
	// convergence setting (a demoted family is tried first again once its
	// last failure is this old).
	Lifetime time.Duration
	// MinSamples connects of the first-tried family before its RTT sets
	// the attempt delay.
	MinSamples int
	// MinDelay and MaxDelay clamp the attempt delay derived from RTT
	// (MinDelay is raised to HardMinDelay if below it).
	MinDelay, MaxDelay time.Duration
}

func (p *Policy) lifetime() time.Duration {
	if p.Lifetime <= 0 {
		return DefaultLifetime
	}
	return p.Lifetime
}

// Decide returns what history says about connecting to host on network:
// the family to try first (with its reason) and the attempt delay derived
// from RTT (with where it came from). It changes nothing when it knows
// nothing; network 0 (unknown) is never read.
//
// It allocates only when it reorders (the reason is formatted then).
func (s *Store) Decide(network uint64, host string, families int, p *Policy) race.HistoryInput {
	in := race.HistoryInput{Network: network}
	if network == 0 {
		return in
	}
	now := s.clock()
	life := int64(p.lifetime())
	s.mu.Lock()
	e := s.lookup(key{network, host}, false)
	if e == nil {
		s.mu.Unlock()
		return in
	}
	var bad [2]badCount
	var ok [2]bool
	for i := range e.fam {
		bad[i] = e.fam[i].failuresSinceOK(now, life)
		ok[i] = e.fam[i].lastOK != 0 && now-e.fam[i].lastOK < life
	}
	first := 0 // IPv6
	if families == 2 {
		switch {
		case bad[0].total() > 0 && bad[1].total() == 0 && ok[1]:
			in.First, first = race.IPv4, 1
		case bad[1].total() > 0 && bad[0].total() == 0 && ok[0]:
			// Usually RFC 6724's order already (not for a ULA or
			// IPv4-preferring table), but said all the same.
			in.First = race.IPv6
		}
	}
	f := &e.fam[first]
	if n := minSamples(p); int(f.samples) >= n {
		in.DelayFromRTT, in.SRTT, in.Samples = true, f.srtt, int(f.samples)
	}
	if in.First != race.FamilyUnspec {
		s.stats.Reordered++
	}
	if in.DelayFromRTT {
		s.stats.DelaySet++
	}
	s.mu.Unlock()
	if in.First != race.FamilyUnspec {
		in.Reason = reason(in.First, host, bad[race.FamilyIndex(other(in.First))], time.Duration(life))
	}
	return in
}

// AttemptDelay is the delay Decide's RTT asks for: 2 x SRTT clamped to the
// policy's bounds.
func AttemptDelay(in *race.HistoryInput, p *Policy) time.Duration {
	lo, hi := p.MinDelay, p.MaxDelay
	if lo == 0 {
		lo = DefaultMinDelay
	}
	if lo < HardMinDelay {
		lo = HardMinDelay
	}
	if hi == 0 {
		hi = DefaultMaxDelay
	}
	if hi < lo {
		hi = lo
	}
	return min(max(2*in.SRTT, lo), hi)
}

func minSamples(p *Policy) int {
	if p.MinSamples <= 0 {
		return DefaultMinSamples
	}
	return p.MinSamples
}

// badCount is a family's failures since it last connected, by kind.
type badCount struct{ lost, refused, timedOut, failed int }

func (b badCount) total() int { return b.lost + b.refused + b.timedOut + b.failed }

// failuresSinceOK counts the recorded failures younger than life and newer
// than the family's last success.
func (f *familyState) failuresSinceOK(now, life int64) badCount {
	var b badCount
	for i := 0; i < int(f.n); i++ {
		r := &f.recs[i]
		if r.at <= f.lastOK || now-r.at >= life {
			continue
		}
		switch r.outcome {
		case race.PathLost:
			b.lost++
		case race.PathRefused:
			b.refused++
		case race.PathTimedOut:
			b.timedOut++
		case race.PathFailed:
			b.failed++
		}
	}
	return b
}

// reason is the one line the trace and the result carry, e.g. "IPv4 first:
// IPv6 to example.com lost 3 races without connecting in the last 10m0s on
// this network".
func reason(first race.Family, host string, b badCount, life time.Duration) string {
	var parts []string
	for _, c := range []struct {
		n         int
		verb, obj string
	}{{b.lost, "lost", "race"}, {b.refused, "was refused", "time"}, {b.timedOut, "timed out", "time"}, {b.failed, "failed", "time"}} {
		if c.n == 1 {
			parts = append(parts, fmt.Sprintf("%s 1 %s", c.verb, c.obj))
		} else if c.n > 1 {
			parts = append(parts, fmt.Sprintf("%s %d %ss", c.verb, c.n, c.obj))
		}
	}
	return fmt.Sprintf("%s first: %s to %s %s without connecting in the last %v on this network",
		familyName(first), familyName(other(first)), host, strings.Join(parts, ", "), life)
}

func other(f race.Family) race.Family {
	if f == race.IPv6 {
		return race.IPv4
	}
	return race.IPv6
}

func familyName(f race.Family) string {
	if f == race.IPv6 {
		return "IPv6"
	}
	return "IPv4"
}
