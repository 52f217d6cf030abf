package core

import (
	"net/netip"

	"github.com/hev2/hev2/internal/race"
	"github.com/hev2/hev2/internal/resolve"
)

// NAT64 (Dialer.DisableNAT64) is the engine's (internal/engine/nat64.go,
// which says what a connect does on an IPv6-only host); here are its
// figures and arithmetic for programs and tests that need the same.

// Discovery's timing (see internal/resolve/pref64.go).
const (
	Prefix64Timeout     = resolve.Prefix64Timeout
	Prefix64NegativeTTL = resolve.Prefix64NegativeTTL
	Prefix64Refresh     = resolve.Prefix64Refresh
)

// Trace kinds of NAT64 (after TraceAttemptDelay), spelt as the C ABI's
// generated mirror check (capi/abi_check.go) names HEV2_EV_NAT64_*.
const (
	TraceNat64Discovery = race.TraceNAT64Discovery
	TraceNat64Prefix    = race.TraceNAT64Prefix
	TraceSynthesized    = race.TraceSynthesized
)

// The NAT64 arithmetic core uses, for programs and tests that need the
// same: RFC 6052 embedding and the RFC 7050 names.

// IPv4OnlyName is the name whose AAAA answer reveals the NAT64 prefix
// (RFC 7050), and IPv4OnlyAddrs its two well-known IPv4 addresses
// (192.0.0.170 and 192.0.0.171, RFC 8880).
var (
	IPv4OnlyName  = race.IPv4OnlyName
	IPv4OnlyAddrs = [2]netip.Addr{race.WKA1, race.WKA2}
)

// ValidNAT64Prefix reports whether p can be a NAT64 prefix: IPv6, one of
// RFC 6052's lengths (/32, /40, /48, /56, /64, /96), host bits and bits
// 64-71 clear.
func ValidNAT64Prefix(p netip.Prefix) bool { return race.ValidPrefix64(p) }

// NAT64Synthesize returns v4 embedded in the NAT64 prefix p (RFC 6052
// §2.2); p must be a ValidNAT64Prefix.
func NAT64Synthesize(p netip.Prefix, v4 netip.Addr) netip.Addr { return race.Embed(p, v4) }
