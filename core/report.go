package core

import "github.com/hev2/hev2/internal/race"

// The establishment report of a finished race (see race.Report for every
// field): which family won and why, the phases (resolving, the Resolution
// Delay, connecting: spans that overlap), each lookup's answer time and
// each attempt's outcome. It is built from the race's trace only when
// asked for: record the race (Dialer.Record) and call Result.Report or
// Error.Report, or pass every event a Dialer.Trace received to NewReport.
type (
	// Trace is a race's recorded steps (Result.Trace, Error.Trace).
	Trace = race.Trace
	// Report is one race's establishment report.
	Report = race.Report
	// Phase is one span of a race (Start, End since its start).
	Phase = race.Phase
	// WinReason says why the winning family won.
	WinReason = race.WinReason
	// LookupReport is what one family's lookup did.
	LookupReport = race.LookupReport
	// LookupState is how a lookup ended.
	LookupState = race.LookupState
	// AttemptReport is what one connection attempt did.
	AttemptReport = race.AttemptReport
	// AttemptOutcome is how an attempt ended.
	AttemptOutcome = race.AttemptOutcome
	// HTTPSReport is the race's HTTPS part (Report.HTTPS, nil without
	// Dialer.HTTPSRR): the state, every lookup, the services, the records
	// set aside and the replaced hints.
	HTTPSReport = race.HTTPSReport
	// ServiceLookupReport is one lookup of the HTTPS part.
	ServiceLookupReport = race.ServiceLookupReport
	// ServiceLookupState is how it ended.
	ServiceLookupState = race.ServiceLookupState
	// ServiceReport is one usable service.
	ServiceReport = race.ServiceReport
	// SkippedRecord is a ServiceMode record set aside.
	SkippedRecord = race.SkippedRecord
	// ReplacedHint is an untried hint its target's answer replaced.
	ReplacedHint = race.ReplacedHint
	// Origin says where an attempt's endpoint came from
	// (AttemptReport.Origin).
	Origin = race.Origin
)

// How a lookup of the HTTPS part ended (ServiceLookupReport.State).
const (
	ServiceLookupPending  = race.ServiceLookupPending
	ServiceLookupAnswered = race.ServiceLookupAnswered
	ServiceLookupFailed   = race.ServiceLookupFailed
	ServiceLookupCanceled = race.ServiceLookupCanceled
)

// Where an attempt's endpoint came from (AttemptReport.Origin).
const (
	OriginDNS         = race.OriginDNS
	OriginStatic      = race.OriginStatic
	OriginSynthesized = race.OriginSynthesized
	OriginHint        = race.OriginHint
	OriginService     = race.OriginService
)

// Why the winning family won (Report.Reason); race.WinReason documents
// each.
const (
	ReasonNone                = race.ReasonNone
	ReasonFirstToConnect      = race.ReasonFirstToConnect
	ReasonOtherFamilyFailed   = race.ReasonOtherFamilyFailed
	ReasonOnlyFamilyResolved  = race.ReasonOnlyFamilyResolved
	ReasonOtherFamilyNotTried = race.ReasonOtherFamilyNotTried
	ReasonOnlyFamilyAsked     = race.ReasonOnlyFamilyAsked
	ReasonGivenAddresses      = race.ReasonGivenAddresses
)

// How a lookup ended (LookupReport.State).
const (
	LookupNotAsked  = race.LookupNotAsked
	LookupAbandoned = race.LookupAbandoned
	LookupAnswered  = race.LookupAnswered
	LookupFailed    = race.LookupFailed
	LookupTimedOut  = race.LookupTimedOut
)

// How an attempt ended (AttemptReport.Outcome).
const (
	AttemptConnected = race.AttemptConnected
	AttemptFailed    = race.AttemptFailed
	AttemptTimedOut  = race.AttemptTimedOut
	AttemptLost      = race.AttemptLost
	AttemptCanceled  = race.AttemptCanceled
)

// Why a report cannot be built.
var (
	// ErrNoTrace: the race was not recorded (Dialer.Record), or it ended
	// before it started (an invalid input, a context already canceled).
	ErrNoTrace = race.ErrNoTrace
	// ErrRaceNotDone: the trace stops before the race's outcome.
	ErrRaceNotDone = race.ErrRaceNotDone
	// ErrBadTrace: the events are not a race machine's trace.
	ErrBadTrace = race.ErrBadTrace
)

// NewReport builds the report of a finished race from every event its
// Dialer.Trace received, in order.
func NewReport(events []TraceEvent) (Report, error) { return race.NewReport(events) }
