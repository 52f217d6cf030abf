package core

import (
	"context"
	"net/netip"

	"github.com/hev2/hev2/internal/engine"
	"github.com/hev2/hev2/internal/resolve"
)

// Resolver looks up the addresses of a host for one address family.
//
// The engine calls LookupFamily once per family, concurrently, and feeds each
// answer into the race the moment it arrives, so the Resolution Delay works.
// Implementations must return promptly once ctx is done (an implementation
// that cannot interrupt its work abandons it and returns ctx's error).
// Failures should be *ResolveError so that callers see getaddrinfo-style codes;
// an empty answer without an error is treated as EAI_NODATA. Its method:
//
//	LookupFamily(ctx context.Context, host string, family Family) ([]netip.Addr, error)
type Resolver = engine.Resolver

// ResolverFunc adapts a function to the Resolver interface.
type ResolverFunc func(ctx context.Context, host string, family Family) ([]netip.Addr, error)

func (f ResolverFunc) LookupFamily(ctx context.Context, host string, family Family) ([]netip.Addr, error) {
	return f(ctx, host, family)
}

// The two resolvers hev2 ships (internal/resolve), named here.
type (
	// SystemResolver resolves with getaddrinfo(3), one call per family on
	// a thread of a bounded pool; a canceled call is abandoned.
	SystemResolver = resolve.SystemResolver
	// SystemResolverStats counts what a SystemResolver is doing.
	SystemResolverStats = resolve.SystemResolverStats
	// DNSResolver is the built-in DNS client: truly cancellable, pointed
	// at resolv.conf's name servers or the caller's.
	DNSResolver = resolve.DNSResolver
	// DNSConfig configures a DNSResolver.
	DNSConfig = resolve.DNSConfig
)

// DefaultMaxInFlight bounds the getaddrinfo calls of a SystemResolver
// whose MaxInFlight is 0.
const DefaultMaxInFlight = resolve.DefaultMaxInFlight

// MaxResolverThreads is the process's cap on getaddrinfo calls in flight,
// abandoned ones included (resolve.DefaultMaxThreads unless changed): at
// the cap, a system lookup fails at once with EAI_SYSTEM and EAGAIN.
func MaxResolverThreads() int { return resolve.MaxThreads() }

// ResolverHandOverAt is the number of getaddrinfo calls in flight,
// abandoned ones included, from which a system lookup of a name that goes
// to DNS anyway (nsswitch.conf: files, then dns) is asked of the built-in
// DNS client instead, which holds no thread (resolve.DefaultHandOverAt).
func ResolverHandOverAt() int { return resolve.HandOverAt() }

// DefaultSystemResolver is the process-wide system resolver.
var DefaultSystemResolver = resolve.DefaultSystemResolver

// NewSystemResolver returns a system resolver with its own bound on calls
// in flight (0: DefaultMaxInFlight).
func NewSystemResolver(maxInFlight int) *SystemResolver {
	return resolve.NewSystemResolver(maxInFlight)
}

// NewDNSResolver returns a built-in resolver, or the error in cfg.
func NewDNSResolver(cfg DNSConfig) (*DNSResolver, error) { return resolve.NewDNSResolver(cfg) }
