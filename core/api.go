package core

import (
	"net/netip"

	"github.com/hev2/hev2/internal/race"
)

// The types of a race's outcome and account are built by the race machine
// (internal/race) and are the same types here: aliases, so nothing is
// converted or copied on the way out.
type (
	// Family is an address family: IPv6, IPv4, or FamilyUnspec for both.
	Family = race.Family
	// Result describes a won race; its FD belongs to the caller.
	Result = race.Result
	// LookupInfo is what one family's lookup did.
	LookupInfo = race.LookupInfo
	// AttemptInfo is what one connection attempt did.
	AttemptInfo = race.AttemptInfo
	// Error is a failed race: the best single cause and every part.
	Error = race.Error
	// ResolveError is a failed lookup, with its getaddrinfo code.
	ResolveError = race.ResolveError
	// TimeoutError is one of the caller's timeouts that fired.
	TimeoutError = race.TimeoutError
	// TimeoutKind says which of the caller's timeouts fired.
	TimeoutKind = race.TimeoutKind
	// OutcomeKind classifies a failed race (Error.Outcome).
	OutcomeKind = race.OutcomeKind
	// BindError is a failure to bind the local address.
	BindError = race.BindError
	// TraceEvent is one step of a race (Dialer.Trace).
	TraceEvent = race.TraceEvent
	// TraceKind names a step of a race.
	TraceKind = race.TraceKind
	// PathOutcome is what one attempt said about its path, as history
	// records it.
	PathOutcome = race.PathOutcome
)

// Address families.
const (
	FamilyUnspec = race.FamilyUnspec
	IPv4         = race.IPv4
	IPv6         = race.IPv6
)

// FamilyOf reports the family of a (IPv4-mapped IPv6 addresses count as IPv4).
func FamilyOf(a netip.Addr) Family { return race.FamilyOf(a) }

// Timeout kinds (Error.Expired, TimeoutError.Kind).
const (
	TimeoutNone    = race.TimeoutNone
	TimeoutResolv  = race.TimeoutResolv
	TimeoutConnect = race.TimeoutConnect
	TimeoutOpen    = race.TimeoutOpen
)

// What ended a failed race (Error.Outcome), first that applies: cancel,
// timeout, attempt error, lookup error.
const (
	OutcomeConnect  = race.OutcomeConnect
	OutcomeResolve  = race.OutcomeResolve
	OutcomeTimeout  = race.OutcomeTimeout
	OutcomeCanceled = race.OutcomeCanceled
)

// Trace kinds, numbered as the C ABI's HEV2_EV_* are.
const (
	TraceLookupStarted   = race.TraceLookupStarted
	TraceLookupAnswered  = race.TraceLookupAnswered
	TraceLookupFailed    = race.TraceLookupFailed
	TraceLookupCanceled  = race.TraceLookupCanceled
	TraceResolutionDelay = race.TraceResolutionDelay
	TraceAttemptStarted  = race.TraceAttemptStarted
	TraceAttemptFailed   = race.TraceAttemptFailed
	TraceAttemptWon      = race.TraceAttemptWon
	TraceAttemptClosed   = race.TraceAttemptClosed
	TraceTimeout         = race.TraceTimeout
	TraceCanceled        = race.TraceCanceled
	TraceDone            = race.TraceDone
	TraceAttemptDelay    = race.TraceAttemptDelay
	TraceHistory         = race.TraceHistory

	// The HTTPS query (Dialer.HTTPSRR).
	TraceServiceLookupStarted  = race.TraceServiceLookupStarted
	TraceServiceLookupAnswered = race.TraceServiceLookupAnswered
	TraceServiceLookupFailed   = race.TraceServiceLookupFailed
	TraceServiceLookupCanceled = race.TraceServiceLookupCanceled
	TraceServiceState          = race.TraceServiceState
	TraceServiceAdded          = race.TraceServiceAdded
	TraceServiceSkipped        = race.TraceServiceSkipped
	TraceEndpointRemoved       = race.TraceEndpointRemoved
)

// getaddrinfo codes, as glibc numbers them (ResolveError.Code).
const (
	EAI_BADFLAGS   = race.EAI_BADFLAGS
	EAI_NONAME     = race.EAI_NONAME
	EAI_AGAIN      = race.EAI_AGAIN
	EAI_FAIL       = race.EAI_FAIL
	EAI_FAMILY     = race.EAI_FAMILY
	EAI_SOCKTYPE   = race.EAI_SOCKTYPE
	EAI_SERVICE    = race.EAI_SERVICE
	EAI_MEMORY     = race.EAI_MEMORY
	EAI_SYSTEM     = race.EAI_SYSTEM
	EAI_OVERFLOW   = race.EAI_OVERFLOW
	EAI_NODATA     = race.EAI_NODATA
	EAI_ADDRFAMILY = race.EAI_ADDRFAMILY
)

// EAIMessage is glibc's gai_strerror text for code.
func EAIMessage(code int) string { return race.EAIMessage(code) }

// RFC 8305 defaults and the bounds of the Connection Attempt Delay.
const (
	DefaultResolutionDelay         = race.DefaultResolutionDelay
	DefaultConnectionAttemptDelay  = race.DefaultConnectionAttemptDelay
	MinConnectionAttemptDelay      = race.MinConnectionAttemptDelay
	MaxConnectionAttemptDelay      = race.MaxConnectionAttemptDelay
	DefaultFirstAddressFamilyCount = race.DefaultFirstAddressFamilyCount
)
