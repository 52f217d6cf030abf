package core

import (
	"github.com/hev2/hev2/internal/engine"
	"github.com/hev2/hev2/internal/history"
	"github.com/hev2/hev2/internal/race"
)

// History is on by default: the process remembers, per network and host
// name, which family connected and which lost (internal/history), and its
// next races to that name try the family that works first and take their
// attempt delay from the observed RTT. Dialer.DisableHistory turns it off
// for one Dialer, SetHistoryEnabled for the whole process.

// HistoryInput is what history decided for a race (Result.History,
// Error.History; the zero value: nothing).
type HistoryInput = race.HistoryInput

// HistoryStats are the history's counters (HistoryStatistics).
type HistoryStats = history.Stats

// Bounds of the history (see internal/history).
const (
	DefaultHistoryLifetime = history.DefaultLifetime
	HistoryCapacity        = history.DefaultCapacity
	HistoryEntryBytes      = history.EntryBytes
)

// SetHistoryEnabled turns the process-wide history on or off (it is on
// when the process starts). Off, no race reads or records anything; what
// was learned is kept (ClearHistory forgets it).
func SetHistoryEnabled(on bool) { engine.SetHistoryEnabled(on) }

// HistoryEnabled reports the process-wide switch.
func HistoryEnabled() bool { return engine.HistoryEnabled() }

// ClearHistory forgets everything history learned, on every network.
func ClearHistory() { engine.ClearHistory() }

// HistoryStatistics returns the history's counters.
func HistoryStatistics() HistoryStats { return engine.HistoryStatistics() }
