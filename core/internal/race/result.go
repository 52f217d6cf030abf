package race

import (
	"net/netip"
	"time"
)

// LookupInfo is what one family's lookup did.
type LookupInfo struct {
	Family  Family
	Started bool
	Done    bool // answered or failed (false: still pending, or canceled)
	Addrs   []netip.Addr
	Err     error // *ResolveError, or the TimeoutError that cut it short
	Elapsed time.Duration
}

// AttemptInfo is what one connection attempt did.
type AttemptInfo struct {
	Addr  netip.AddrPort
	Start time.Duration
	End   time.Duration // zero while running
	Err   error         // syscall.Errno, *BindError or *TimeoutError; nil for the winner or a closed loser
	Won   bool
}

// Result describes a won race.
type Result struct {
	// FD is the connected socket. It belongs to the caller: hev2 never
	// touches it again.
	FD      int
	Addr    netip.AddrPort
	Elapsed time.Duration
	// Lookups is indexed AAAA (0) then A (1).
	Lookups  [2]LookupInfo
	Attempts []AttemptInfo
	// Trace is every step of the race, kept only when it was asked for
	// (MachineConfig.Record; core's Dialer.Record): nil otherwise.
	Trace *Trace
}

// Family is the winner's address family.
func (r *Result) Family() Family { return FamilyOf(r.Addr.Addr()) }

// Report is the race's establishment report, built now from Trace
// (ErrNoTrace when the race was not recorded).
func (r *Result) Report() (Report, error) { return r.Trace.Report() }
