package core

import (
	"net/netip"

	"github.com/hev2/hev2/internal/netio"
	"github.com/hev2/hev2/internal/race"
	"github.com/hev2/hev2/internal/resolve"
)

// NAT64 (Dialer.DisableNAT64): what a connect does on a host with IPv6 and
// no IPv4 route (known from netlink, one atomic load per connect; a host
// with an IPv4 route pays nothing else).
//
//   - The network's prefix is discovered once per network and resolver
//     (the ipv4only.arpa AAAA query of RFC 7050, through the Dialer's
//     resolver; a router advertisement's PREF64 option, RFC 8781, is used
//     instead when the kernel passed one), started by the first connect
//     and run beside its own lookups. That connect waits for discovery only with its IPv4
//     destinations (at most Prefix64Timeout, 2 s; bounded by resolv_timeout
//     and open_timeout too); its IPv6 destinations race at once. Later
//     connects use the cached prefix; "no prefix" is cached for 30 s.
//   - IPv4 literals, static entries and A answers are synthesized into
//     the prefix (RFC 6052) and tried as IPv6; the A query is made on the
//     IPv6-only host once NAT64 is known or being discovered. 127/8, 0/8,
//     169.254/16 and multicast are never synthesized, nor non-global IPv4
//     with the well-known prefix 64:ff9b::/96, which is never assumed.
//   - An IPv6 destination inside the prefix (a DNS64 answer) is sorted and
//     interleaved as IPv4.
//
// NAT64 applies only when the destinations are not restricted to one
// family (Family, LocalAddr): a caller who asked for IPv4 sockets gets them.

// Discovery's timing (see core/internal/resolve/pref64.go).
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

// attachNAT64 gives the race this network's NAT64 state, and the driver
// the way to wait for a discovery that is still running.
func (d *Dialer) attachNAT64(cfg *race.MachineConfig, p *netio.Params) {
	if d.wantedFamily() != FamilyUnspec {
		return
	}
	st := resolve.NAT64(d.resolver())
	cfg.NAT64 = &race.NAT64Config{Prefixes: st.Prefixes, Pending: st.Pending, Source: st.Source}
	if st.Pending {
		p.AwaitPrefix64 = st.Await
	}
}

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
