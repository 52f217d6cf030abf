package core

import (
	"net/netip"
	"time"

	"github.com/hev2/hev2/internal/engine"
)

// Dialer holds the options of a Happy Eyeballs connection. Its zero value is
// ready to use with the RFC 8305 defaults, like net.Dialer's.
type Dialer struct {
	// ResolutionDelay is how long to wait for AAAA once A has answered first
	// (0: 50 ms). A failed lookup never starts it.
	ResolutionDelay time.Duration
	// ConnectionAttemptDelay is the stagger between attempts (0: 250 ms),
	// clamped to [10 ms, 2 s]. A failed attempt starts the next one at once.
	ConnectionAttemptDelay time.Duration
	// FirstAddressFamilyCount is how many addresses of the preferred family
	// are tried before the other family is interleaved (0: 1).
	FirstAddressFamilyCount int

	// ResolvTimeout bounds name resolution; ConnectTimeout bounds the wait
	// once every resolved address has been tried (in serial mode: each
	// attempt); OpenTimeout bounds the whole call and excludes the other two.
	// Zero means no timeout, as in Ruby's Socket.tcp.
	ResolvTimeout  time.Duration
	ConnectTimeout time.Duration
	OpenTimeout    time.Duration

	// DisableFastFallback resolves both families, then tries each address in
	// turn (Ruby's fast_fallback: false).
	DisableFastFallback bool
	// Family restricts the destinations to IPv4 or IPv6 (FamilyUnspec: both).
	Family Family
	// LocalAddr and LocalPort are bound before connecting. A local address
	// restricts the destinations to its family.
	LocalAddr netip.Addr
	LocalPort uint16

	// Resolver answers per-family lookups (nil: DefaultResolver).
	Resolver Resolver
	// Hosts maps names to static addresses, consulted before the resolver
	// (like curl's --resolve). Keys are matched exactly.
	Hosts map[string][]netip.Addr

	// NoDelay sets TCP_NODELAY on the returned socket; KeepAlive > 0 turns
	// keep-alive on with that idle time. Both cost a syscall, so both are off
	// unless asked for.
	NoDelay   bool
	KeepAlive time.Duration
	// BlockingFD returns the socket in blocking mode (it is non-blocking
	// otherwise). Only Connect honours it; DialContext needs non-blocking.
	BlockingFD bool

	// DisableNAT64 turns NAT64 off. By default, on a host with IPv6 and no
	// IPv4 route, hev2 discovers the network's NAT64 prefix (RFC 7050:
	// ipv4only.arpa through Resolver) and, when there is one, reaches IPv4
	// literals, static entries and A answers through it (RFC 6052
	// synthesis: the socket is then AF_INET6, and Result.SynthesizedFrom
	// names the IPv4 address), and sorts DNS64 answers as IPv4. With an
	// IPv4 route nothing of this happens. See nat64.go.
	DisableNAT64 bool
	// DisableHistory: this Dialer's races neither read nor feed the
	// process's history of this network (see SetHistoryEnabled). With
	// history, a family that failed or lost a race to a name recently
	// (refused, timed out, or pending for the whole attempt delay while the
	// other family won) is tried second for that name, and, when
	// ConnectionAttemptDelay is 0, the attempt delay is 2 x the smoothed
	// connect RTT of the family tried first, clamped to [100 ms, 2 s], once
	// 3 connects are on record. Result.History says what was decided.
	DisableHistory bool
	// HistoryLifetime is the convergence setting: how long a failure keeps
	// its family second (0: 10 min). When it has passed, the next connect
	// tries the RFC 6724 order again: a healed path is used again, a
	// still-broken one is paid once more (one attempt delay) and demoted
	// again; so per name and network at most one connect per HistoryLifetime
	// pays a broken path, and a healed one is back within HistoryLifetime.
	HistoryLifetime time.Duration

	// Trace, when set, receives every step of the race, one at a time, on
	// whichever goroutine steps the race (the caller's, the shared poller's,
	// a timer's or a resolver's), so it must not block.
	Trace func(TraceEvent)
	// Record keeps every step of the race in Result.Trace (Error.Trace on
	// failure), from which Result.Report and Error.Report build the
	// establishment report. It costs an allocation now and then as the
	// trace grows; off (the default), nothing is kept or computed.
	Record bool

	// HTTPSRR adds the HTTPS query of Happy Eyeballs v3 (RFC 9460 records)
	// to a connect to a name: its services' endpoints are tried first, by
	// priority, on their own ports (Result.HTTPS says which won), the
	// origin's A/AAAA last. Off by default: a TCP connector asks nothing
	// nobody asked for. Never for IP literals, Hosts entries or names in
	// the hosts file. The query goes to the Resolver when it answers HTTPS
	// queries (both of hev2's do; the system resolver asks resolv.conf's
	// servers), otherwise to resolv.conf's servers.
	HTTPSRR bool
	// ALPN is the protocols the caller's TLS will offer, in its order (nil:
	// h2, http/1.1): a service with none of them is skipped, so that an
	// h3-only record is never used over TCP.
	ALPN []string
	// ECH: the caller's TLS uses ECH. No connection is handed over before
	// the HTTPS answer is final (waiting at most ECHWait once the
	// addresses are in; 0: DefaultECHWait), and when every service
	// carries an ECH configuration the origin's own addresses are not
	// tried (RFC 9848).
	ECH     bool
	ECHWait time.Duration
}

// DefaultResolver is used when Dialer.Resolver is nil.
var DefaultResolver Resolver = DefaultSystemResolver

func init() { engine.DefaultResolver = func() Resolver { return DefaultResolver } }

// options is the Dialer as the engine reads it: the same fields, so the
// conversion copies nothing (engine.Options).
func (d *Dialer) options() *engine.Options { return (*engine.Options)(d) }
