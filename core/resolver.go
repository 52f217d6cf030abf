package core

import (
	"context"
	"net/netip"
)

// Resolver looks up the addresses of a host for one address family.
//
// The engine calls LookupFamily once per family, concurrently, and feeds each
// answer into the race the moment it arrives, so the Resolution Delay works.
// Implementations must return promptly once ctx is done (an implementation
// that cannot interrupt its work abandons it and returns ctx's error).
// Failures should be *ResolveError so that callers see getaddrinfo-style codes;
// an empty answer without an error is treated as EAI_NODATA.
type Resolver interface {
	LookupFamily(ctx context.Context, host string, family Family) ([]netip.Addr, error)
}

// ResolverFunc adapts a function to the Resolver interface.
type ResolverFunc func(ctx context.Context, host string, family Family) ([]netip.Addr, error)

func (f ResolverFunc) LookupFamily(ctx context.Context, host string, family Family) ([]netip.Addr, error) {
	return f(ctx, host, family)
}
