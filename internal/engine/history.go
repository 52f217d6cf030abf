package engine

import (
	"sync/atomic"

	"github.com/hev2/hev2/internal/history"
	"github.com/hev2/hev2/internal/netstate"
	"github.com/hev2/hev2/internal/race"
)

// History is on by default: the process remembers, per network and host
// name, which family connected and which lost (internal/history), and
// its next races to that name try the family that works first and take
// their attempt delay from the observed RTT. Dialer.DisableHistory turns it
// off for one Dialer, SetHistoryEnabled for the whole process.

var (
	historyStore = history.New(history.Config{})
	historyOff   atomic.Bool
)

// SetHistoryEnabled turns the process-wide history on or off (it is on
// when the process starts). Off, no race reads or records anything; what
// was learned is kept (ClearHistory forgets it).
func SetHistoryEnabled(on bool) { historyOff.Store(!on) }

// HistoryEnabled reports the process-wide switch.
func HistoryEnabled() bool { return !historyOff.Load() }

// ClearHistory forgets everything history learned, on every network.
func ClearHistory() { historyStore.Clear() }

// HistoryStatistics returns the history's counters.
func HistoryStatistics() history.Stats { return historyStore.Stats() }

// applyHistory gives the race history's decision and makes the store its
// sink. History applies to a fast-fallback race to a name (a lone
// address has nothing to order, and costs nothing here), on a network
// netstate knows.
func (o *Options) applyHistory(cfg *race.MachineConfig) {
	if o.DisableHistory || cfg.Serial || historyOff.Load() || cfg.Lone() {
		return
	}
	snap := netstate.Current()
	if !snap.Known {
		return
	}
	p := history.Policy{Lifetime: o.HistoryLifetime}
	in := historyStore.Decide(snap.Network, cfg.Host, familiesOf(cfg), &p)
	if in.DelayFromRTT {
		if o.ConnectionAttemptDelay != 0 {
			// The caller's delay stands.
			in.DelayFromRTT, in.SRTT, in.Samples = false, 0, 0
		} else {
			in.AttemptDelay = history.AttemptDelay(&in, &p)
			cfg.ConnectionAttemptDelay = in.AttemptDelay
		}
	}
	cfg.History = in
	cfg.HistorySink = historyStore
}

// familiesOf counts the families a race may try.
func familiesOf(cfg *race.MachineConfig) int {
	if cfg.Literal.IsValid() {
		return 1
	}
	if cfg.Static == nil {
		return len(cfg.Queries) // each an address query: one family's
	}
	var seen [2]bool
	for _, a := range cfg.Static {
		seen[race.FamilyIndex(race.FamilyOf(a))] = true
	}
	if seen[0] && seen[1] {
		return 2
	}
	return 1
}
