package engine

import (
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

// attachNAT64 gives the race this network's NAT64 state, and the driver
// the way to wait for a discovery that is still running.
func (o *Options) attachNAT64(cfg *race.MachineConfig, p *netio.Params) {
	if o.wantedFamily() != FamilyUnspec {
		return
	}
	st := resolve.NAT64(o.resolver())
	cfg.NAT64 = &race.NAT64Config{Prefixes: st.Prefixes, Pending: st.Pending, Source: st.Source}
	if st.Pending {
		p.AwaitPrefix64 = st.Await
	}
}
