package race

import (
	"net/netip"
	"time"
)

// EventKind names an input of the Machine.
type EventKind uint8

const (
	// EventLookupDone: lookup Query answered (Addrs) or failed (Err).
	EventLookupDone EventKind = iota + 1
	// EventAttemptDone: attempt Attempt connected (Err == nil) or failed.
	EventAttemptDone
	// EventCancel: the caller gave up (Err is the reason).
	EventCancel
	// EventPrefix64: the NAT64 discovery the race awaited ended: Prefixes
	// (empty: none on this network), or Err.
	EventPrefix64
)

// Event is something that happened to a race. Timer expiry needs no event:
// every Step evaluates the deadlines against its "now".
type Event struct {
	Kind  EventKind
	Query QueryKind
	// Lookup numbers a service lookup (Action.Lookup; 0: one of the
	// host's address lookups).
	Lookup  uint8
	Addrs   []netip.Addr
	Attempt int
	Err     error
	// Answer is what a lookup found beyond addresses: the NAT64 prefixes
	// of an EventPrefix64 ([]netip.Prefix), the records of an HTTPS
	// lookup (*ServiceAnswer). One interface rather than a field each,
	// so that an event stays as small as the drivers' buffers of them
	// need it to be.
	Answer any
}

// ActionKind names an output of the Machine.
type ActionKind uint8

const (
	// ActionStartLookup: make lookup Query.
	ActionStartLookup ActionKind = iota + 1
	// ActionCancelLookup: the race no longer needs Query's answer.
	ActionCancelLookup
	// ActionStartAttempt: connect attempt number Attempt to Addr.
	ActionStartAttempt
	// ActionCloseAttempt: close attempt Attempt (a loser, or a late winner).
	ActionCloseAttempt
	// ActionArmTimer: call Step again at At (replaces any earlier timer);
	// At < 0 disarms.
	ActionArmTimer
	// ActionDone: the race is over. Attempt is the winner (Err == nil), or
	// Err is the *Error that explains the failure.
	ActionDone
	// ActionAwaitPrefix64: deliver EventPrefix64 when this network's NAT64
	// discovery ends (MachineConfig.NAT64.Pending).
	ActionAwaitPrefix64
	// ActionCancelPrefix64: the race no longer needs the discovery.
	ActionCancelPrefix64
)

// Action is something the driver must do for the race.
type Action struct {
	Kind  ActionKind
	Query QueryKind
	// Lookup numbers a service lookup (HTTPS, or a service target's
	// addresses) whose name Machine.LookupName gives; 0 is one of the
	// host's address lookups, named by Query alone.
	Lookup  uint8
	Attempt int
	Addr    netip.AddrPort
	At      time.Duration
	Err     error
}

// MachineConfig is a race's fixed parameters. Durations are already
// defaulted and clamped (see Dialer); zero timeouts mean none.
type MachineConfig struct {
	Host string
	Port uint16
	// Serial: resolve every family, then one attempt at a time. (Beside
	// Port, so that the two share a word of the machine.)
	Serial bool
	// Queries are the lookups to make, in query order (AAAA first): both
	// address queries, or one for a race restricted to a family. Ignored
	// if Static is set.
	Queries []QueryKind
	// Static, if non-nil, is the complete address list: no lookup is made
	// (static host entries).
	Static []netip.Addr
	// Literal, when valid, is the host as an IP address: the race's only
	// address, as if Static were [Literal]. A field of its own because a
	// one-address slice made per connect would be an allocation on every
	// connect to a literal; the machine keeps the address in its own memory.
	Literal netip.Addr

	ResolutionDelay         time.Duration
	ConnectionAttemptDelay  time.Duration
	FirstAddressFamilyCount int
	ResolvTimeout           time.Duration
	ConnectTimeout          time.Duration
	OpenTimeout             time.Duration

	// NAT64, when not nil, says the host has IPv6 and no IPv4 route and
	// NAT64 is wanted: IPv4 destinations are synthesized into the network's
	// prefix (RFC 6052), and IPv6 destinations inside it are sorted as
	// IPv4. nil (an IPv4 route, NAT64 turned off) costs nothing.
	NAT64 *NAT64Config

	// Sort orders destinations by RFC 6724 (SortRFC6724NAT64), treating
	// addresses inside the NAT64 prefixes as IPv4; called only with two or
	// more addresses. nil keeps the resolver's order.
	Sort func(addrs []netip.Addr, nat64 []netip.Prefix) []netip.Addr
	// Trace observes each step (nil: no cost).
	Trace func(TraceEvent)
	// Record, if not nil, keeps every step; the outcome (Result.Trace,
	// Error.Trace) points to it. A pointer, so that a race that does not
	// record carries 8 bytes for it, not a slice.
	Record *Trace

	// History is what the network's history decided for this race (the
	// zero value: nothing); ConnectionAttemptDelay already holds the delay
	// it derived from RTT, if any. HistorySink, if not nil, is told each
	// attempt's outcome when the race ends.
	History     HistoryInput
	HistorySink HistorySink

	// HTTPS, when not nil, adds the HTTPS query of Happy Eyeballs v3 (RFC
	// 9460 records: services with ports, ALPN, hints and ECH) to the race;
	// a fresh one per race (the machine keeps its state in it). nil costs
	// a race nothing.
	HTTPS *HTTPSConfig
}

// NAT64Config is a race's view of this network's NAT64 prefix discovery.
type NAT64Config struct {
	// Prefixes already discovered on this network (valid RFC 6052
	// prefixes; the first is used for synthesis). Empty and not Pending:
	// discovery found none (cached negative answer).
	Prefixes []netip.Prefix
	// Pending: discovery is running; the race asks for its end
	// (ActionAwaitPrefix64) and holds IPv4 destinations until then, while
	// IPv6 ones race at once.
	Pending bool
	// Source says where Prefixes came from, for the trace.
	Source string
}

// Lone reports whether the race has a single address known in advance (an
// IP literal, or a static entry of one address): nothing to sort, no history
// to consult.
func (c *MachineConfig) Lone() bool { return c.Literal.IsValid() || len(c.Static) == 1 }
