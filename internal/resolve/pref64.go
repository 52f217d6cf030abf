package resolve

import (
	"context"
	"errors"
	"net/netip"
	"sync"
	"sync/atomic"
	"time"

	"github.com/hev2/hev2/internal/netstate"
	"github.com/hev2/hev2/internal/race"
)

// NAT64 prefix discovery (RFC 7050, RFC 8880): the AAAA query for
// ipv4only.arpa, whose answer a DNS64 resolver synthesizes from the
// well-known addresses 192.0.0.170 and 192.0.0.171, so the answer reveals
// the prefix (race.PrefixesFromIPv4Only). No privilege is needed, and any
// resolver can ask: the system resolver, the built-in one (which also
// gives the answer's TTL), or the caller's own.
//
// A PREF64 option of a router advertisement (RFC 8781, pref64_ra.go), when
// the kernel passed one since the process started, is used instead.
//
// When: only on a host with IPv6 and no IPv4 route (netstate), once per
// network and resolver, started by the first connect that needs it and
// run alongside that connect's own lookups. That connect waits for the
// discovery only with its IPv4 destinations (an IPv4 literal, static
// entry or A answer: they cannot be tried before the prefix is known); its
// IPv6 destinations race at once. The discovery gives up after
// Prefix64Timeout; "no prefix" (no DNS64, NXDOMAIN, NODATA, an answer
// without the well-known addresses, a failure, the timeout) is remembered
// for Prefix64NegativeTTL, during which IPv4 destinations are tried as
// they are (and fail at once without an IPv4 route). A found prefix is
// used until its TTL (built-in resolver; clamped to [Prefix64MinTTL,
// Prefix64MaxTTL]) or Prefix64Refresh (other resolvers) runs out; the
// first connect after that still uses it and starts a new discovery in the
// background. A network change announced by netlink (netstate.OnChange: a
// new network identity) forgets every prefix and negative answer. The
// well-known prefix 64:ff9b::/96 is used only when discovery returns it.
const (
	Prefix64Timeout     = 2 * time.Second
	Prefix64NegativeTTL = 30 * time.Second
	Prefix64MinTTL      = 60 * time.Second
	Prefix64MaxTTL      = 24 * time.Hour
	Prefix64Refresh     = 10 * time.Minute
)

// FamilyResolver is what discovery asks of a resolver (core.Resolver).
type FamilyResolver interface {
	LookupFamily(ctx context.Context, host string, family race.Family) ([]netip.Addr, error)
}

// ipv4OnlyAsker is a resolver that can give the answer's TTL.
type ipv4OnlyAsker interface {
	LookupIPv4Only(ctx context.Context) ([]netip.Addr, time.Duration, error)
}

// NAT64Start is a race's view of this network's discovery.
type NAT64Start struct {
	// Prefixes already known (empty with !Pending: none on this network).
	Prefixes []netip.Prefix
	// Pending: discovery runs; Await delivers its outcome.
	Pending bool
	// Source says which resolver discovered (or discovers) the prefixes,
	// and whether the race takes them from the cache.
	Source string
	// Await calls deliver once with the outcome, on the discovery's
	// goroutine (never inside the call), unless the returned func is
	// called first.
	Await func(deliver func([]netip.Prefix, error)) (cancel func())
}

// hostNAT64 is 0 until the first question, then 1 when NAT64 does not
// apply (an IPv4 route, no IPv6, or netlink unknown), 2 on an IPv6-only
// host. It is kept by a netstate listener, so the question costs one
// atomic load.
var hostNAT64 atomic.Uint32

const (
	nat64Unasked uint32 = iota
	nat64Off
	nat64IPv6Only
)

var nat64Listen sync.Once

// NAT64Applies reports whether this host has IPv6 and no IPv4 route, the
// only case where hev2 discovers and synthesizes: one atomic load (the
// first call subscribes to netstate).
func NAT64Applies() bool {
	s := hostNAT64.Load()
	if s == nat64Unasked {
		nat64Listen.Do(func() {
			netstate.OnChange(nat64NetworkChanged)
			hostNAT64.Store(nat64StateOf(netstate.Current()))
			startRAWatch()
		})
		s = hostNAT64.Load()
	}
	return s == nat64IPv6Only
}

func nat64StateOf(s netstate.Snapshot) uint32 {
	if s.Known && s.HaveIPv6 && s.IPv6Route && !s.IPv4Route {
		return nat64IPv6Only
	}
	return nat64Off
}

// nat64NetworkChanged follows netstate: NAT64 applies or not, and a new
// network forgets what discovery learnt on the old one.
func nat64NetworkChanged(old, cur netstate.Snapshot) {
	hostNAT64.Store(nat64StateOf(cur))
	if old.Network != cur.Network {
		pref64s.flush()
		forgetRAPrefixes(time.Now())
	}
}

// pref64Key: one discovery per network and resolver (two resolvers may
// ask different servers). Resolvers that are not comparable share one.
type pref64Key struct {
	network  uint64
	resolver any
}

type pref64Entry struct {
	prefixes []netip.Prefix
	err      error
	source   string
	expires  time.Time     // zero while the first discovery runs
	flight   *pref64Flight // the discovery running now, if any
}

type pref64Cache struct {
	mu      sync.Mutex
	epoch   uint64 // bumped by every flush: a discovery of an older epoch stores nothing
	entries map[pref64Key]*pref64Entry
	// active: on the current network a prefix is known or discovery
	// runs, so an A query is worth making on this IPv6-only host.
	active atomic.Bool
}

var pref64s pref64Cache

func (c *pref64Cache) flush() {
	c.mu.Lock()
	c.epoch++
	c.entries = nil
	c.active.Store(false)
	c.mu.Unlock()
}

// updateActiveLocked: an A query is worth making while some resolver knows
// a prefix on this network or is discovering one (c.mu held).
func (c *pref64Cache) updateActiveLocked() {
	active := false
	for _, e := range c.entries {
		active = active || len(e.prefixes) > 0 || e.flight != nil
	}
	c.active.Store(active)
}

// NAT64Wanted reports whether an A query is worth making on an IPv6-only
// host: NAT64 can use its answer (a prefix is known, or discovery runs).
func NAT64Wanted() bool { return pref64s.active.Load() }

// NAT64 returns the current network's discovery state for a race that
// resolves with res, starting a discovery if none is known or running,
// or a refresh in the background if the known prefixes have expired.
// Call it only when NAT64Applies.
func NAT64(res FamilyResolver) NAT64Start {
	now := time.Now()
	c := &pref64s
	if ra := currentRAPrefixes(now); len(ra) > 0 {
		// The router said it (RFC 8781): no query needed.
		c.active.Store(true)
		return NAT64Start{Prefixes: ra, Source: "router advertisement (RFC 8781 PREF64)"}
	}
	network := netstate.Current().Network
	key := pref64Key{network: network, resolver: resolverKey(res)}
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.entries == nil {
		c.entries = make(map[pref64Key]*pref64Entry)
	}
	e := c.entries[key]
	if e == nil {
		e = &pref64Entry{source: sourceName(res)}
		c.entries[key] = e
	}
	if e.flight == nil && !now.Before(e.expires) {
		e.flight = newPref64Flight()
		go discoverPref64(res, key, e.flight, c.epoch)
	}
	c.updateActiveLocked()
	if !e.expires.IsZero() {
		// Known (possibly expired and being refreshed): use it.
		return NAT64Start{Prefixes: e.prefixes, Source: "cached, " + e.source}
	}
	return NAT64Start{Pending: true, Source: e.source, Await: e.flight.await}
}

func resolverKey(res FamilyResolver) any {
	switch r := res.(type) {
	case *SystemResolver, *DNSResolver:
		return r
	}
	return nil
}

func sourceName(res FamilyResolver) string {
	switch res.(type) {
	case *SystemResolver:
		return "ipv4only.arpa via the system resolver"
	case *DNSResolver:
		return "ipv4only.arpa via the built-in resolver"
	}
	return "ipv4only.arpa via the dialer's resolver"
}

// errNoPrefix64 explains an answer that revealed no prefix.
var errNoPrefix64 = errors.New("the ipv4only.arpa answer holds no well-known address (no DNS64 here)")

// discoverPref64 asks res once and records the outcome for the network of
// key, unless the network changed meanwhile.
func discoverPref64(res FamilyResolver, key pref64Key, f *pref64Flight, epoch uint64) {
	ctx, cancel := context.WithTimeout(context.Background(), Prefix64Timeout)
	var addrs []netip.Addr
	var ttl time.Duration
	var err error
	if a, ok := res.(ipv4OnlyAsker); ok {
		addrs, ttl, err = a.LookupIPv4Only(ctx)
	} else {
		addrs, err = res.LookupFamily(ctx, race.IPv4OnlyName, race.IPv6)
	}
	cancel()
	prefixes := race.PrefixesFromIPv4Only(addrs)
	if len(prefixes) == 0 && err == nil {
		err = errNoPrefix64
	}
	now := time.Now()
	life := Prefix64NegativeTTL
	switch {
	case len(prefixes) > 0 && ttl > 0:
		life = min(max(ttl, Prefix64MinTTL), Prefix64MaxTTL)
	case len(prefixes) > 0:
		life = Prefix64Refresh
	}
	c := &pref64s
	c.mu.Lock()
	if e := c.entries[key]; e != nil && c.epoch == epoch && e.flight == f {
		e.flight = nil
		var failed *race.ResolveError
		transient := errors.As(err, &failed) && failed.Code == race.EAI_AGAIN || errors.Is(err, context.DeadlineExceeded)
		if len(prefixes) == 0 && len(e.prefixes) > 0 && transient {
			// A refresh that could not reach the resolver keeps
			// what the network said last, and tries again soon.
			prefixes, err = e.prefixes, nil
		} else {
			e.prefixes, e.err = prefixes, err
		}
		e.expires = now.Add(life)
		c.updateActiveLocked()
	}
	c.mu.Unlock()
	f.finish(prefixes, err)
}

// pref64Flight is one discovery and the races waiting for it.
type pref64Flight struct {
	mu       sync.Mutex
	done     bool
	prefixes []netip.Prefix
	err      error
	next     uint64
	waiters  map[uint64]func([]netip.Prefix, error)
}

func newPref64Flight() *pref64Flight {
	return &pref64Flight{waiters: make(map[uint64]func([]netip.Prefix, error))}
}

func (f *pref64Flight) await(deliver func([]netip.Prefix, error)) (cancel func()) {
	f.mu.Lock()
	if f.done {
		ps, err := f.prefixes, f.err
		f.mu.Unlock()
		go deliver(ps, err)
		return func() {}
	}
	id := f.next
	f.next++
	f.waiters[id] = deliver
	f.mu.Unlock()
	return func() {
		f.mu.Lock()
		delete(f.waiters, id)
		f.mu.Unlock()
	}
}

func (f *pref64Flight) finish(prefixes []netip.Prefix, err error) {
	f.mu.Lock()
	f.done, f.prefixes, f.err = true, prefixes, err
	waiters := f.waiters
	f.waiters = nil
	f.mu.Unlock()
	for _, deliver := range waiters {
		deliver(prefixes, err)
	}
}
