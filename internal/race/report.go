package race

import (
	"errors"
	"net/netip"
	"strings"
	"time"
)

// Report is the establishment report of one finished race: which family
// won and why, how long each phase took, and what each lookup and each
// attempt did. NewReport builds it from the race's trace, so it costs
// nothing unless someone records the trace and asks for it.
//
// Every time is an offset from the race's start (the moment the lookups,
// or for an IP literal or a static list the first attempt, were started),
// on the clock of the trace's At.
type Report struct {
	// Connected is true when an attempt won. Winner is its index in
	// Attempts (-1 otherwise) and Family its address family.
	Connected bool
	Winner    int
	Family    Family
	// Reason says why Family won (ReasonNone when nothing connected).
	Reason WinReason
	// Failure is what ended a race that did not connect (0 when it did).
	Failure OutcomeKind
	// Timeout is the last of the caller's timeouts that fired, if any. A
	// won race may have seen one: a resolv_timeout that abandoned a slow
	// family while the other connected.
	Timeout TimeoutKind
	// Elapsed is the race's whole duration: from its start to its outcome.
	Elapsed time.Duration

	// The phases overlap (a family races while the other still resolves;
	// the Resolution Delay lies inside Resolving); each is a span of the
	// race, not a share of Elapsed. See Phase for each definition.
	Resolving       Phase
	ResolutionDelay Phase
	Connecting      Phase
	// ResolutionDelayExpired is true when the Resolution Delay ran its
	// whole length: AAAA had not answered when it ended, and the race went
	// on without it.
	ResolutionDelayExpired bool

	// Lookups is indexed AAAA (0) then A (1), as Result.Lookups.
	Lookups [2]LookupReport
	// Attempts in the order they started (the index is the attempt's
	// number in the trace).
	Attempts []AttemptReport

	// HTTPS is the race's HTTPS part (Happy Eyeballs v3): nil when it
	// made no HTTPS query.
	HTTPS *HTTPSReport
}

// HTTPSReport is what the HTTPS part of a race did: every query it made
// (the HTTPS query, those of the aliases, the A/AAAA of the services'
// targets), the services it used and the records it set aside.
type HTTPSReport struct {
	// State is how the HTTPS query ended (HTTPSPending: the race ended
	// before its answer).
	State HTTPSState
	// Lookups in the order they started.
	Lookups []ServiceLookupReport
	// Services are the usable services, in the order they were tried
	// (their Number: 1 is the first).
	Services []ServiceReport
	// Skipped are the ServiceMode records the rules set aside.
	Skipped []SkippedRecord
	// Replaced are the untried hints a target's own answer replaced.
	Replaced []ReplacedHint
}

// ServiceLookupState is how one lookup of the HTTPS part ended. The
// numbers are the C ABI's HEV2_REPORT_SERVICE_LOOKUP_*.
type ServiceLookupState uint8

const (
	ServiceLookupPending  ServiceLookupState = iota // still pending when the race ended
	ServiceLookupAnswered                           // answered: Records (HTTPS) or Addrs (A/AAAA)
	ServiceLookupFailed                             // failed: Err (NODATA, NXDOMAIN ...)
	ServiceLookupCanceled                           // canceled: the race ended, or resolv_timeout
)

var serviceLookupStateNames = [...]string{
	ServiceLookupPending:  "pending",
	ServiceLookupAnswered: "answered",
	ServiceLookupFailed:   "failed",
	ServiceLookupCanceled: "canceled",
}

func (s ServiceLookupState) String() string {
	if int(s) < len(serviceLookupStateNames) {
		return serviceLookupStateNames[s]
	}
	return "unknown"
}

// ServiceLookupReport is one lookup of the HTTPS part: an HTTPS query (of
// the query name or an alias target) or a service target's A or AAAA.
type ServiceLookupReport struct {
	Query QueryKind // QueryHTTPS, QueryA or QueryAAAA
	Name  string    // fully qualified
	State ServiceLookupState
	// Start is when it was asked, End when it answered, failed or was
	// canceled (the race's end while pending).
	Start, End time.Duration
	// Records is the number of ServiceMode records of an answered HTTPS
	// query (0 for an alias); Addrs the answer of an A/AAAA lookup.
	Records int
	Addrs   []netip.Addr
	Err     error // the failure (ServiceLookupFailed)
}

// Duration is End - Start.
func (l ServiceLookupReport) Duration() time.Duration { return l.End - l.Start }

// ServiceReport is one usable service of the race.
type ServiceReport struct {
	Number int // 1 is the first tried; AttemptReport.Service
	Service
	// Hints are the address hints the race tried for it (until its
	// target's answer replaced them).
	Hints []netip.Addr
}

// SkippedRecord is a ServiceMode record the rules set aside.
type SkippedRecord struct {
	At       time.Duration
	Priority uint16
	Target   string // as the record gave it ("." included)
	Port     uint16
	Reason   string // why: an unknown mandatory key, no protocol in common ...
}

// ReplacedHint is an untried hint of a service that its target's answer
// replaced.
type ReplacedHint struct {
	At      time.Duration
	Service int // its number
	Addr    netip.AddrPort
}

// Phase is one span of a race. Happened is false when the race never
// entered the phase (then Start and End are zero).
//
//   - Resolving: from the first lookup's start to the end of the last one
//     (its answer, its failure, or the moment the race stopped waiting for
//     it: a resolv_timeout, or the race's end). It does not happen when no
//     lookup is made (an IP literal, a static list).
//   - ResolutionDelay: from A's answer, when it came while AAAA was still
//     pending and before any attempt (RFC 8305 §3), to the first of: AAAA's
//     answer or failure, the delay's expiry, the race's end.
//   - Connecting: from the first attempt's start to the race's outcome
//     (the winner's connect, or the failure).
type Phase struct {
	Happened   bool
	Start, End time.Duration
}

// Duration is End - Start.
func (p Phase) Duration() time.Duration { return p.End - p.Start }

// WinReason says why the winning family won.
type WinReason uint8

// The reasons, the first that applies, looking at the other family (the
// one that did not win; an address synthesized for NAT64 counts as the
// IPv4 it stands for):
const (
	ReasonNone WinReason = iota // the race did not connect
	// ReasonFirstToConnect: an attempt of the other family was still in
	// flight when the winner connected (it was closed as a loser).
	ReasonFirstToConnect
	// ReasonOtherFamilyFailed: every attempt of the other family (at least
	// one) had failed before the winner connected.
	ReasonOtherFamilyFailed
	// ReasonOnlyFamilyResolved: the other family was looked up but gave no
	// address: its lookup failed (NXDOMAIN, NODATA, SERVFAIL ...), timed
	// out, or had not answered when the winner connected.
	ReasonOnlyFamilyResolved
	// ReasonOtherFamilyNotTried: the other family had answered with
	// addresses, but none had been tried when the winner connected (the
	// winner's family came first in the order).
	ReasonOtherFamilyNotTried
	// ReasonOnlyFamilyAsked: only the winner's family was looked up (a
	// family restriction, a local address of that family).
	ReasonOnlyFamilyAsked
	// ReasonGivenAddresses: no lookup was made (an IP literal, a static
	// list) and no address of the other family was tried before the
	// winner connected.
	ReasonGivenAddresses
)

var reasonNames = [...]string{
	ReasonNone:                "none",
	ReasonFirstToConnect:      "first-to-connect",
	ReasonOtherFamilyFailed:   "other-family-failed",
	ReasonOnlyFamilyResolved:  "only-family-resolved",
	ReasonOtherFamilyNotTried: "other-family-not-tried",
	ReasonOnlyFamilyAsked:     "only-family-asked",
	ReasonGivenAddresses:      "given-addresses",
}

func (r WinReason) String() string {
	if int(r) < len(reasonNames) {
		return reasonNames[r]
	}
	return "unknown"
}

// LookupState is how one family's lookup ended. The numbers are the C
// ABI's HEV2_LOOKUP_*.
type LookupState uint8

const (
	LookupNotAsked  LookupState = iota // never started (literal, static list, family restriction)
	LookupAbandoned                    // still pending when the race ended
	LookupAnswered                     // answered with addresses
	LookupFailed                       // failed: Err says how (NODATA included)
	LookupTimedOut                     // cut short by resolv_timeout
)

var lookupStateNames = [...]string{
	LookupNotAsked:  "not-asked",
	LookupAbandoned: "abandoned",
	LookupAnswered:  "answered",
	LookupFailed:    "failed",
	LookupTimedOut:  "timed-out",
}

func (s LookupState) String() string {
	if int(s) < len(lookupStateNames) {
		return lookupStateNames[s]
	}
	return "unknown"
}

// LookupReport is what one family's lookup did.
type LookupReport struct {
	Family Family // IPv6 (Lookups[0]) or IPv4 (Lookups[1]), asked or not
	State  LookupState
	// Start is when it was asked, End when it answered, failed or was
	// given up (both zero when not asked).
	Start, End time.Duration
	Addrs      []netip.Addr // the answer (LookupAnswered)
	Err        error        // the failure (LookupFailed): a *ResolveError
}

// Duration is the lookup's answer (or failure) time: End - Start.
func (l LookupReport) Duration() time.Duration { return l.End - l.Start }

// AttemptOutcome is how one connection attempt ended. The numbers are the
// C ABI's HEV2_ATTEMPT_*.
type AttemptOutcome uint8

const (
	attemptRunning   AttemptOutcome = iota // only while the report is built
	AttemptConnected                       // it won
	AttemptFailed                          // connect (or bind) failed: Err
	AttemptTimedOut                        // a caller's timeout closed it
	AttemptLost                            // closed as a loser: another attempt won
	AttemptCanceled                        // closed because the caller canceled
)

var attemptOutcomeNames = [...]string{
	attemptRunning:   "running",
	AttemptConnected: "connected",
	AttemptFailed:    "failed",
	AttemptTimedOut:  "timed-out",
	AttemptLost:      "lost",
	AttemptCanceled:  "canceled",
}

func (o AttemptOutcome) String() string {
	if int(o) < len(attemptOutcomeNames) {
		return attemptOutcomeNames[o]
	}
	return "unknown"
}

// AttemptReport is what one connection attempt did.
type AttemptReport struct {
	Addr   netip.AddrPort
	Family Family // of Addr: the socket's
	// SynthesizedFrom is the IPv4 address Addr was synthesized from in the
	// network's NAT64 prefix (RFC 6052); invalid otherwise. Such an
	// attempt counts as IPv4 in the report's Reason: it reaches an IPv4
	// destination.
	SynthesizedFrom netip.Addr
	Start           time.Duration
	End             time.Duration
	Outcome         AttemptOutcome
	// Origin is where the endpoint came from: OriginDNS (the origin's
	// A/AAAA), OriginStatic, OriginSynthesized (NAT64), OriginHint (a
	// service's address hint), OriginService (its target's A/AAAA). 0 in
	// a trace recorded before the attempt events carried it.
	Origin Origin
	// Service is the number of the HTTPS service the endpoint belongs to
	// (HTTPSReport.Services); 0: the origin's own addresses.
	Service int
	// Err is the failure (AttemptFailed: syscall.Errno or *BindError;
	// AttemptTimedOut in serial mode: the *TimeoutError); nil otherwise.
	Err error
}

// Duration is how long the attempt lasted: End - Start.
func (a AttemptReport) Duration() time.Duration { return a.End - a.Start }

// destination is the family of the host the attempt reaches: IPv4 for an
// address synthesized from one.
func (a AttemptReport) destination() Family {
	if a.SynthesizedFrom.IsValid() {
		return IPv4
	}
	return a.Family
}

// Errors of NewReport.
var (
	ErrNoTrace     = errors.New("hev2: no recorded trace (record the race's events to get its report)")
	ErrRaceNotDone = errors.New("hev2: the race is not finished (its trace has no done event)")
	ErrBadTrace    = errors.New("hev2: malformed trace")
)

// NewReport builds the report of a finished race from its whole trace, as
// the race machine emitted it (Dialer.Record, or every event given to
// Dialer.Trace, in order).
func NewReport(events []TraceEvent) (Report, error) {
	r := Report{Winner: -1}
	for i, f := range LookupFamilies {
		r.Lookups[i].Family = f
	}
	if len(events) == 0 {
		return r, ErrNoTrace
	}
	var (
		done          bool
		resolvExpired bool
		rdUntil       time.Duration
		synthesized   map[netip.Addr]netip.Addr // NAT64: IPv6 -> the IPv4 it stands for
		httpsTimedOut bool
	)
	for i := range events {
		ev := &events[i]
		if done {
			return r, ErrBadTrace // nothing follows the outcome
		}
		switch ev.Kind {
		case TraceLookupStarted:
			l := &r.Lookups[FamilyIndex(ev.Family)]
			*l = LookupReport{Family: ev.Family, State: LookupAbandoned, Start: ev.At, End: ev.At}
		case TraceLookupAnswered, TraceLookupFailed, TraceLookupCanceled:
			l := &r.Lookups[FamilyIndex(ev.Family)]
			if l.State != LookupAbandoned {
				return r, ErrBadTrace // an end without a start
			}
			l.End = ev.At
			switch {
			case ev.Kind == TraceLookupAnswered:
				l.State, l.Addrs = LookupAnswered, ev.Addrs
			case ev.Kind == TraceLookupFailed:
				l.State, l.Err = LookupFailed, ev.Err
			case resolvExpired:
				l.State = LookupTimedOut
			default:
				// Given up: abandoned, unless the outcome says otherwise
				// (settle); the mark refuses a second end.
				l.State = lookupCanceledMark
			}
		case TraceResolutionDelay:
			r.ResolutionDelay = Phase{Happened: true, Start: ev.At}
			rdUntil = ev.Until
		case TraceAttemptStarted:
			if ev.Attempt != len(r.Attempts) {
				return r, ErrBadTrace
			}
			r.Attempts = append(r.Attempts, AttemptReport{
				Addr: ev.Addr, Family: FamilyOf(ev.Addr.Addr()), SynthesizedFrom: synthesized[ev.Addr.Addr()],
				Start: ev.At, End: ev.At, Origin: ev.Origin, Service: int(ev.ServiceNum),
			})
		case TraceServiceLookupStarted, TraceServiceLookupAnswered, TraceServiceLookupFailed,
			TraceServiceLookupCanceled, TraceServiceState, TraceServiceAdded, TraceServiceSkipped,
			TraceEndpointRemoved:
			if r.HTTPS == nil {
				r.HTTPS = &HTTPSReport{State: httpsStateUnset}
			}
			if !r.HTTPS.add(ev) {
				return r, ErrBadTrace
			}
			if ev.Kind == TraceServiceLookupCanceled && ev.Query == QueryHTTPS && resolvExpired {
				httpsTimedOut = true // resolv_timeout gave the query up
			}
		case TraceSynthesized:
			if synthesized == nil {
				synthesized = map[netip.Addr]netip.Addr{}
			}
			synthesized[ev.Addr.Addr()] = ev.From
		case TraceAttemptFailed, TraceAttemptWon, TraceAttemptClosed:
			if ev.Attempt < 0 || ev.Attempt >= len(r.Attempts) || r.Attempts[ev.Attempt].Outcome != attemptRunning {
				return r, ErrBadTrace
			}
			a := &r.Attempts[ev.Attempt]
			a.End = ev.At
			switch ev.Kind {
			case TraceAttemptWon:
				a.Outcome = AttemptConnected
				r.Connected, r.Winner, r.Family = true, ev.Attempt, a.Family
			case TraceAttemptFailed:
				a.Outcome, a.Err = AttemptFailed, ev.Err
				var te *TimeoutError
				if errors.As(ev.Err, &te) {
					a.Outcome = AttemptTimedOut
				}
			default:
				a.Outcome = attemptClosedMark
			}
		case TraceTimeout:
			r.Timeout = ev.Timeout
			if ev.Timeout == TimeoutResolv {
				resolvExpired = true
			}
		case TraceDone:
			done = true
			r.Elapsed = ev.At
			if ev.Err != nil {
				var e *Error
				if !errors.As(ev.Err, &e) {
					return r, ErrBadTrace
				}
				r.Failure = e.Outcome
			}
		}
	}
	if !done {
		return r, ErrRaceNotDone
	}
	r.settle()
	if h := r.HTTPS; h != nil && h.State == httpsStateUnset {
		// No service-state event: the query was still pending when the
		// race ended, or when resolv_timeout gave it up.
		h.State = HTTPSPending
		if httpsTimedOut {
			h.State = HTTPSTimeout
		}
	}
	r.phases(rdUntil)
	r.Reason = r.reason()
	return r, nil
}

// httpsStateUnset marks an HTTPS part whose state no event has given yet.
const httpsStateUnset = HTTPSState(255)

// add reads one event of the HTTPS part; false for an event that does
// not fit.
func (h *HTTPSReport) add(ev *TraceEvent) bool {
	switch ev.Kind {
	case TraceServiceLookupStarted:
		h.Lookups = append(h.Lookups, ServiceLookupReport{Query: ev.Query, Name: ev.Detail, Start: ev.At, End: ev.At})
	case TraceServiceLookupAnswered, TraceServiceLookupFailed, TraceServiceLookupCanceled:
		l := h.pending(ev.Query, ev.Detail)
		if l == nil {
			return false // an end without a start
		}
		l.End = ev.At
		switch ev.Kind {
		case TraceServiceLookupAnswered:
			l.State = ServiceLookupAnswered
			if ev.Query == QueryHTTPS {
				l.Records = ev.Attempt
			} else {
				l.Addrs = ev.Addrs
			}
		case TraceServiceLookupFailed:
			l.State, l.Err = ServiceLookupFailed, ev.Err
		default:
			l.State = ServiceLookupCanceled
		}
	case TraceServiceState:
		st, ok := httpsStateNamed(ev.Detail)
		if !ok {
			return false
		}
		h.State = st
	case TraceServiceAdded:
		sr := ServiceReport{Number: ev.Attempt, Hints: ev.Addrs}
		if ev.Service != nil {
			sr.Service = *ev.Service
		}
		h.Services = append(h.Services, sr)
	case TraceServiceSkipped:
		sk := SkippedRecord{At: ev.At, Reason: ev.Detail}
		if ev.Service != nil {
			sk.Priority, sk.Target, sk.Port = ev.Service.Priority, ev.Service.Target, ev.Service.Port
			sk.Reason = strings.TrimPrefix(ev.Detail, strings.TrimSuffix(ev.Service.Target, ".")+": ")
		} else if target, why, ok := strings.Cut(ev.Detail, ": "); ok {
			sk.Target, sk.Reason = target, why
		}
		h.Skipped = append(h.Skipped, sk)
	case TraceEndpointRemoved:
		h.Replaced = append(h.Replaced, ReplacedHint{At: ev.At, Service: ev.Attempt, Addr: ev.Addr})
	}
	return true
}

// pending is the lookup of q and name still pending (the machine never
// asks the same twice; names compare as DNS names do).
func (h *HTTPSReport) pending(q QueryKind, name string) *ServiceLookupReport {
	for i := range h.Lookups {
		l := &h.Lookups[i]
		if l.Query == q && l.State == ServiceLookupPending && sameName(l.Name, name) {
			return l
		}
	}
	return nil
}

func httpsStateNamed(name string) (HTTPSState, bool) {
	for s, n := range httpsStateNames {
		if n == name {
			return HTTPSState(s), true
		}
	}
	return 0, false
}

// Marks used while the trace is read: a lookup the race gave up on (it
// becomes LookupAbandoned) and an attempt the race closed (its outcome
// depends on how the race ended, known only at its end).
const (
	lookupCanceledMark = LookupState(255)
	attemptClosedMark  = AttemptOutcome(255)
)

// settle gives each closed attempt and abandoned lookup its final state,
// now that the race's outcome is known.
func (r *Report) settle() {
	for i := range r.Lookups {
		if r.Lookups[i].State == lookupCanceledMark {
			r.Lookups[i].State = LookupAbandoned
		}
	}
	for i := range r.Attempts {
		a := &r.Attempts[i]
		if a.Outcome != attemptClosedMark && a.Outcome != attemptRunning {
			continue
		}
		// The machine closes every attempt still open when the race ends:
		// because one won, because the caller canceled, or because one of
		// the caller's timeouts ended it.
		a.End = r.Elapsed
		switch {
		case r.Connected:
			a.Outcome = AttemptLost
		case r.Failure == OutcomeTimeout:
			a.Outcome = AttemptTimedOut
		default:
			a.Outcome = AttemptCanceled
		}
	}
}

// phases computes the three spans (see Phase).
func (r *Report) phases(rdUntil time.Duration) {
	for _, l := range r.Lookups {
		if l.State == LookupNotAsked {
			continue
		}
		if !r.Resolving.Happened {
			r.Resolving = Phase{Happened: true, Start: l.Start, End: l.End}
			continue
		}
		r.Resolving.Start = min(r.Resolving.Start, l.Start)
		r.Resolving.End = max(r.Resolving.End, l.End)
	}
	if rd := &r.ResolutionDelay; rd.Happened {
		aaaa := r.Lookups[FamilyIndex(IPv6)]
		rd.End = min(rdUntil, r.Elapsed)
		if aaaa.State != LookupNotAsked && aaaa.End >= rd.Start {
			rd.End = min(rd.End, aaaa.End)
		}
		r.ResolutionDelayExpired = aaaa.End > rdUntil
	}
	if len(r.Attempts) > 0 {
		r.Connecting = Phase{Happened: true, Start: r.Attempts[0].Start, End: r.Elapsed}
	}
}

// reason explains the winner's family (see WinReason).
func (r *Report) reason() WinReason {
	if !r.Connected {
		return ReasonNone
	}
	// The families of the destinations: an address synthesized for NAT64
	// reaches an IPv4 one.
	other := IPv4
	if r.Attempts[r.Winner].destination() == IPv4 {
		other = IPv6
	}
	tried, lost := false, false
	for _, a := range r.Attempts {
		if a.destination() != other {
			continue
		}
		tried = true
		lost = lost || a.Outcome == AttemptLost
	}
	switch {
	case lost:
		return ReasonFirstToConnect
	case tried:
		return ReasonOtherFamilyFailed
	case r.Lookups[0].State == LookupNotAsked && r.Lookups[1].State == LookupNotAsked:
		return ReasonGivenAddresses
	}
	switch r.Lookups[FamilyIndex(other)].State {
	case LookupNotAsked:
		return ReasonOnlyFamilyAsked
	case LookupAnswered:
		return ReasonOtherFamilyNotTried
	}
	return ReasonOnlyFamilyResolved
}
