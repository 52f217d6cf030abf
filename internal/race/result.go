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
	// SynthesizedFrom is the IPv4 address Addr embeds when hev2
	// synthesized Addr through a NAT64 prefix (RFC 6052) from an IPv4
	// literal, static entry or A answer; invalid otherwise.
	SynthesizedFrom netip.Addr
	// Lost: pending for at least the Connection Attempt Delay, then closed
	// because another attempt won (how a blackholed path shows).
	Lost bool
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
	// SynthesizedFrom is the IPv4 address the winner was synthesized from
	// (NAT64; Addr is then the IPv6 address it was tried as, and FD an
	// AF_INET6 socket); invalid otherwise.
	SynthesizedFrom netip.Addr
	// NAT64Prefixes are the prefixes the race used (discovered on this
	// network), nil when NAT64 did not apply.
	NAT64Prefixes []netip.Prefix
	// History is what the network's history decided for this race.
	History HistoryInput
	// HTTPS is what the HTTPS query gave the race (the winner's service:
	// HTTPS.WinnerService), nil when none was made.
	HTTPS *HTTPSOutcome
}

// Family is the winner's address family.
func (r *Result) Family() Family { return FamilyOf(r.Addr.Addr()) }

// Report is the race's establishment report, built now from Trace
// (ErrNoTrace when the race was not recorded).
func (r *Result) Report() (Report, error) { return r.Trace.Report() }
