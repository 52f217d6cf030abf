package race

import (
	"errors"
	"net/netip"
	"syscall"
	"time"
)

// HistoryInput is what the history of the attached network decided for one
// race, before it starts (internal/history makes it). The zero value
// decides nothing: RFC 6724's order and the configured attempt delay.
type HistoryInput struct {
	// Network is the identity of the network the decision was read on
	// (netstate.Snapshot.Network); outcomes are recorded under it.
	Network uint64
	// Reason says why First, in one line ("" when First is FamilyUnspec).
	Reason string
	// DelayFromRTT: MachineConfig.ConnectionAttemptDelay is 2 x SRTT of
	// Samples connects of the first-tried family on this network, clamped.
	SRTT         time.Duration
	Samples      int
	AttemptDelay time.Duration // the delay derived (when DelayFromRTT)
	// First is the family tried first; FamilyUnspec keeps RFC 6724's order.
	// (The small fields last, sharing one word.)
	First        Family
	DelayFromRTT bool
}

// Decided reports whether history changed anything for the race.
func (h *HistoryInput) Decided() bool { return h.First != FamilyUnspec || h.DelayFromRTT }

// HistorySink receives the outcome of each attempt of a finished race
// (MachineConfig.HistorySink). It is called on the goroutine that steps the
// race, once per attempt that says something about its path; it must not
// block and must not call back into the race.
type HistorySink interface {
	RecordAttempt(network uint64, host string, addr netip.Addr, o PathOutcome, rtt time.Duration)
}

// PathOutcome is what one attempt says about its path.
type PathOutcome uint8

const (
	// PathConnected: the attempt connected (it won); rtt is its time.
	PathConnected PathOutcome = iota + 1
	// PathRefused: ECONNREFUSED.
	PathRefused
	// PathTimedOut: ETIMEDOUT from the kernel, or still pending (for at
	// least the attempt delay) when a caller's timeout ended the race.
	PathTimedOut
	// PathLost: pending for at least the Connection Attempt Delay, then
	// closed because another attempt won: the signal of a blackholed path,
	// whose attempts never fail on their own.
	PathLost
	// PathFailed: any other connect error (unreachable, ...).
	PathFailed
)

var pathOutcomeNames = [...]string{
	PathConnected: "connected",
	PathRefused:   "refused",
	PathTimedOut:  "timed out",
	PathLost:      "lost",
	PathFailed:    "failed",
}

func (o PathOutcome) String() string {
	if int(o) < len(pathOutcomeNames) && pathOutcomeNames[o] != "" {
		return pathOutcomeNames[o]
	}
	return "unknown"
}

// outcomeOf classifies attempt a of a finished race; 0 means it says
// nothing about its path (closed early as a loser, a local bind failure,
// a race the caller canceled).
func (m *Machine) outcomeOf(a *AttemptInfo) PathOutcome {
	switch {
	case a.Won:
		return PathConnected
	case a.Lost:
		return PathLost
	case a.Err == nil:
		if m.canceled == nil && m.expired != TimeoutNone && a.End-a.Start >= m.cfg.ConnectionAttemptDelay {
			return PathTimedOut
		}
		return 0
	}
	var be *BindError
	var te *TimeoutError
	switch {
	case errors.As(a.Err, &be):
		return 0
	case errors.Is(a.Err, syscall.ECONNREFUSED):
		return PathRefused
	case errors.As(a.Err, &te), errors.Is(a.Err, syscall.ETIMEDOUT):
		return PathTimedOut
	case m.canceled != nil:
		return 0
	}
	return PathFailed
}

// reportHistory hands every attempt's outcome to the history sink.
func (m *Machine) reportHistory() {
	sink := m.cfg.HistorySink
	if sink == nil {
		return
	}
	for id := range m.infos {
		a := &m.infos[id]
		if o := m.outcomeOf(a); o != 0 {
			sink.RecordAttempt(m.cfg.History.Network, m.cfg.Host, a.Addr.Addr(), o, a.End-a.Start)
		}
	}
}

// firstFamily is the family the race tries first when it has a choice:
// history's, or IPv6 (RFC 8305 queries AAAA first, RFC 6724 prefers it).
func (m *Machine) firstFamily() Family {
	if f := m.cfg.History.First; f != FamilyUnspec {
		return f
	}
	return IPv6
}

// preferFamily moves the addresses of family f before the others, keeping
// the order inside each family (RFC 6724's), so that Interleave starts
// with f.
func preferFamily(addrs []netip.Addr, f Family, nat64 []netip.Prefix) []netip.Addr {
	if f == FamilyUnspec || len(addrs) < 2 || familyNAT64(addrs[0], nat64) == f {
		return addrs
	}
	out := make([]netip.Addr, 0, len(addrs))
	for _, a := range addrs {
		if familyNAT64(a, nat64) == f {
			out = append(out, a)
		}
	}
	for _, a := range addrs {
		if familyNAT64(a, nat64) != f {
			out = append(out, a)
		}
	}
	return out
}
