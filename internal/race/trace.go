package race

import (
	"net/netip"
	"time"
)

// TraceKind names one step of a race.
type TraceKind uint8

const (
	TraceLookupStarted   TraceKind = iota + 1 // Family
	TraceLookupAnswered                       // Family, Addrs
	TraceLookupFailed                         // Family, Err
	TraceLookupCanceled                       // Family (the race no longer needs it)
	TraceResolutionDelay                      // A answered first: waiting for AAAA until Until
	TraceAttemptStarted                       // Attempt, Addr
	TraceAttemptFailed                        // Attempt, Addr, Err
	TraceAttemptWon                           // Attempt, Addr
	TraceAttemptClosed                        // Attempt, Addr (a loser, closed)
	TraceTimeout                              // Timeout
	TraceCanceled                             // Err (the caller's cancellation)
	TraceDone                                 // Err (nil on success)
	// Numbered after the first twelve, which the C ABI's HEV2_EV_* mirror.
	TraceAttemptDelay // the next attempt is due at Until, unless one fails first
	// NAT64 (the host has IPv6 and no IPv4 route):
	TraceNAT64Discovery // the race waits for this network's PREF64 discovery (ipv4only.arpa)
	TraceNAT64Prefix    // Prefixes in use (none: no NAT64 here), Detail their source, Err a failed discovery
	TraceSynthesized    // Addr (IPv6) synthesized from From (IPv4)
	// History decided something (sent first): Family is tried first
	// (FamilyUnspec: RFC 6724's order), Until is the attempt delay, Reason
	// says why.
	TraceHistory
	// The HTTPS query (MachineConfig.HTTPS): a lookup of the HTTPS part
	// (Query, Detail its name; answered: Addrs, or Attempt the number of
	// ServiceMode records), the query's state (Detail, Attempt the number
	// of usable services), a usable service (Attempt its number, Detail
	// its account, Service the service, Addrs the hints it races), a
	// record skipped (Detail "target: why", Service the record), and an
	// untried hint replaced by its target's answer (Addr, Attempt the
	// service).
	TraceServiceLookupStarted
	TraceServiceLookupAnswered
	TraceServiceLookupFailed
	TraceServiceLookupCanceled
	TraceServiceState
	TraceServiceAdded
	TraceServiceSkipped
	TraceEndpointRemoved
)

var traceNames = [...]string{
	TraceLookupStarted:   "lookup-started",
	TraceLookupAnswered:  "lookup-answered",
	TraceLookupFailed:    "lookup-failed",
	TraceLookupCanceled:  "lookup-canceled",
	TraceResolutionDelay: "resolution-delay",
	TraceAttemptStarted:  "attempt-started",
	TraceAttemptFailed:   "attempt-failed",
	TraceAttemptWon:      "attempt-won",
	TraceAttemptClosed:   "attempt-closed",
	TraceTimeout:         "timeout",
	TraceCanceled:        "canceled",
	TraceDone:            "done",
	TraceAttemptDelay:    "attempt-delay",
	TraceNAT64Discovery:  "nat64-discovery",
	TraceNAT64Prefix:     "nat64-prefix",
	TraceSynthesized:     "synthesized",
	TraceHistory:         "history",

	TraceServiceLookupStarted:  "service-lookup-started",
	TraceServiceLookupAnswered: "service-lookup-answered",
	TraceServiceLookupFailed:   "service-lookup-failed",
	TraceServiceLookupCanceled: "service-lookup-canceled",
	TraceServiceState:          "service-state",
	TraceServiceAdded:          "service-added",
	TraceServiceSkipped:        "service-skipped",
	TraceEndpointRemoved:       "endpoint-removed",
}

func (k TraceKind) String() string {
	if int(k) < len(traceNames) && traceNames[k] != "" {
		return traceNames[k]
	}
	return "unknown"
}

// Trace is a race's steps, kept in order (MachineConfig.Record).
type Trace struct {
	Events []TraceEvent
}

// Report builds the establishment report from the trace (ErrNoTrace for a
// nil Trace: the race was not recorded).
func (t *Trace) Report() (Report, error) {
	if t == nil {
		return NewReport(nil)
	}
	return NewReport(t.Events)
}

// TraceEvent is one step of a race. At is the time since the race started,
// read from a monotonic clock.
type TraceEvent struct {
	At      time.Duration
	Kind    TraceKind
	Family  Family
	Addrs   []netip.Addr
	Attempt int
	Addr    netip.AddrPort
	Timeout TimeoutKind
	// Until is when a delay ends (resolution-delay, attempt-delay), on
	// the same clock as At.
	Until time.Duration
	Err   error
	// Prefixes are the NAT64 prefixes of nat64-prefix; From the IPv4
	// address a synthesized destination embeds (synthesized, and the
	// attempt events of such a destination); Detail a word of context
	// (where the prefixes came from).
	Prefixes []netip.Prefix
	From     netip.Addr
	Detail   string
	// Query is the record type of a service lookup's event.
	Query QueryKind
	// Origin and ServiceNum are where an attempt-started event's endpoint
	// came from, and the HTTPS service it belongs to (1 is the first
	// usable service; 0: the origin's own addresses).
	Origin     Origin
	ServiceNum uint8
	// Service is the service of service-added (shared with the race's
	// outcome: read it, never modify it), and of service-skipped the
	// record set aside (its Priority, Port and Target as the record gave
	// it). Nil on every other event.
	Service *Service
}
