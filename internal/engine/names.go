package engine

import (
	"github.com/hev2/hev2/internal/netio"
	"github.com/hev2/hev2/internal/race"
)

// The race machine's types and constants under the names core gives them,
// so that the policy here reads as the API documents it.
type (
	Family       = race.Family
	Result       = race.Result
	Error        = race.Error
	ResolveError = race.ResolveError
	TraceEvent   = race.TraceEvent
	// Resolver is what the drivers ask of a resolver (core.Resolver).
	Resolver = netio.Resolver
)

const (
	FamilyUnspec = race.FamilyUnspec
	IPv4         = race.IPv4
	IPv6         = race.IPv6

	OutcomeResolve  = race.OutcomeResolve
	OutcomeCanceled = race.OutcomeCanceled

	EAI_NODATA     = race.EAI_NODATA
	EAI_ADDRFAMILY = race.EAI_ADDRFAMILY

	DefaultResolutionDelay         = race.DefaultResolutionDelay
	DefaultConnectionAttemptDelay  = race.DefaultConnectionAttemptDelay
	MinConnectionAttemptDelay      = race.MinConnectionAttemptDelay
	MaxConnectionAttemptDelay      = race.MaxConnectionAttemptDelay
	DefaultFirstAddressFamilyCount = race.DefaultFirstAddressFamilyCount
)

// FamilyOf reports the family of a (IPv4-mapped IPv6 addresses count as IPv4).
var FamilyOf = race.FamilyOf
