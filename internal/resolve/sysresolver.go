package resolve

import (
	"context"
	"errors"
	"net/netip"
	"strings"
	"sync"
	"sync/atomic"

	"github.com/hev2/hev2/internal/race"
)

// DefaultMaxInFlight bounds the getaddrinfo calls a SystemResolver runs at
// once when MaxInFlight is 0. Each running call holds one thread, and a
// library inside someone else's process must not let blocked lookups
// multiply threads (Go aborts a process at 10,000).
const DefaultMaxInFlight = 128

// SystemResolver resolves with the C library's getaddrinfo(3), so it honours
// nsswitch.conf, /etc/hosts, resolv.conf and whatever the host has set up.
// A name that the hosts file answers, when nsswitch.conf consults it first,
// is answered from the file without a call (the same addresses, see
// systemFiles; AlwaysGetaddrinfo turns that off).
//
// Each family is one getaddrinfo call (AF_INET6 or AF_INET) on its own
// thread, so a family that never answers cannot hold up the other one. At
// most MaxInFlight calls run at once (including calls whose callers gave up:
// they still hold a thread); further lookups queue and stay cancellable. A
// canceled lookup returns at once; its call finishes on its own thread and
// its answer is freed there. Identical lookups in flight at the same time
// share one call.
//
// Failures are *ResolveError with getaddrinfo's code; for EAI_SYSTEM, Errno
// is the errno read on the calling thread right after the call (or
// pthread_create's, when no thread could be had). AI_ADDRCONFIG is never
// passed to getaddrinfo (it hides localhost on loopback-only hosts, Ruby Bug
// #20048); instead a family the host has no usable address for is skipped
// at once with EAI_ADDRFAMILY, on single-stack hosts only (see
// AddrConfigFamilies).
//
// The zero value is ready to use. A SystemResolver must not be copied after
// its first use.
type SystemResolver struct {
	// MaxInFlight bounds the getaddrinfo calls running at once
	// (0: DefaultMaxInFlight).
	MaxInFlight int
	// NoAddrConfig queries every family, even one this host has no usable
	// address for (by default such a family is skipped at once, see
	// AddrConfigFamilies).
	NoAddrConfig bool
	// AlwaysGetaddrinfo calls getaddrinfo even for a name the hosts file
	// answers (by default such a name is answered from the file when
	// nsswitch.conf consults it first; see systemFiles).
	AlwaysGetaddrinfo bool

	once    sync.Once
	slots   chan struct{}
	mu      sync.Mutex
	flights map[flightKey]*flight
	stats   sysResolverCounters
}

// DefaultSystemResolver is the process-wide system resolver, the default of
// every Dialer.
var DefaultSystemResolver = &SystemResolver{}

// NewSystemResolver returns a system resolver running at most maxInFlight
// getaddrinfo calls at once (0: DefaultMaxInFlight).
func NewSystemResolver(maxInFlight int) *SystemResolver {
	return &SystemResolver{MaxInFlight: maxInFlight}
}

func (r *SystemResolver) init() {
	n := r.MaxInFlight
	if n <= 0 {
		n = DefaultMaxInFlight
	}
	r.slots = make(chan struct{}, n)
	r.flights = make(map[flightKey]*flight)
}

// errFamilyNotConfigured explains a family skipped by the AI_ADDRCONFIG
// policy.
var errFamilyNotConfigured = errors.New("skipped: this host has no usable address of that family")

// LookupFamily implements Resolver.
func (r *SystemResolver) LookupFamily(ctx context.Context, host string, family race.Family) ([]netip.Addr, error) {
	if addrs, err, answered := r.precheck(host, family); answered {
		return addrs, err
	}
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	if dns := r.handOver(host); dns != nil {
		r.stats.handedOver.Add(1)
		return dns.LookupFamily(ctx, host, family)
	}
	return r.join(ctx, flightKey{host, family})
}

// LookupFamilyAsync starts a lookup without a goroutine: done is called
// once with the answer (on the thread that delivers it: the dispatcher,
// a HarvestLookups caller, or this call for an answer known at once),
// unless cancel is called first. w, if not nil, is woken the moment the
// getaddrinfo call finishes, so its owner can HarvestLookups itself.
func (r *SystemResolver) LookupFamilyAsync(host string, family race.Family, w *Waker, done func([]netip.Addr, error)) (cancel func()) {
	if addrs, err, answered := r.precheck(host, family); answered {
		done(addrs, err)
		return func() {}
	}
	if dns := r.handOver(host); dns != nil {
		return r.lookupHandedOver(dns, host, family, done)
	}
	k := flightKey{host, family}
	cb := &asyncWaiter{done: done}
	f := r.enter(context.Background(), k, w, cb)
	return func() {
		r.mu.Lock()
		defer r.mu.Unlock()
		if cb.left || f.state == flightDone {
			return
		}
		cb.left = true
		r.leaveLocked(k, f)
	}
}

// precheck answers what needs no getaddrinfo call: bad input, literals,
// and a family the AI_ADDRCONFIG policy skips.
func (r *SystemResolver) precheck(host string, family race.Family) ([]netip.Addr, error, bool) {
	r.once.Do(r.init)
	if family != race.IPv4 && family != race.IPv6 {
		return nil, &race.ResolveError{Host: host, Family: family, Code: race.EAI_FAMILY}, true
	}
	if host == "" || strings.IndexByte(host, 0) >= 0 {
		return nil, &race.ResolveError{Host: host, Family: family, Code: race.EAI_NONAME}, true
	}
	if addr, err := netip.ParseAddr(host); err == nil {
		// A literal needs no thread: answer as getaddrinfo would.
		if race.FamilyOf(addr) != family {
			return nil, &race.ResolveError{Host: host, Family: family, Code: race.EAI_ADDRFAMILY}, true
		}
		return []netip.Addr{addr}, nil, true
	}
	if !r.NoAddrConfig && !addrConfigWants(family) {
		r.stats.skipped.Add(1)
		return nil, &race.ResolveError{Host: host, Family: family, Code: race.EAI_ADDRFAMILY, Err: errFamilyNotConfigured}, true
	}
	if !r.AlwaysGetaddrinfo {
		if addrs, ok := systemHostsFiles.lookup(host, family); ok {
			r.stats.hostsFile.Add(1)
			return addrs, nil, true
		}
	}
	return nil, nil, false
}

func (res gaiResult) toGo(k flightKey) ([]netip.Addr, error) {
	if res.code != 0 {
		e := &race.ResolveError{Host: k.host, Family: k.family, Code: res.code}
		if res.code == race.EAI_SYSTEM {
			e.Errno = res.errno
		}
		return nil, e
	}
	if len(res.addrs) == 0 {
		return nil, &race.ResolveError{Host: k.host, Family: k.family, Code: race.EAI_NODATA}
	}
	return res.addrs, nil
}

// SystemResolverStats is a snapshot of a SystemResolver's work.
type SystemResolverStats struct {
	InFlight int64 // getaddrinfo calls running now, abandoned ones included
	Queued   int64 // lookups waiting for a free slot (held only by lookups still waited for)
	// Abandoned counts calls every caller left before they returned;
	// AbandonedDone those of them that have since returned and been freed.
	Abandoned     uint64
	AbandonedDone uint64
	Completed     uint64 // calls that returned
	Shared        uint64 // lookups that joined an identical call in flight
	Skipped       uint64 // lookups answered at once by the AI_ADDRCONFIG policy
	ThreadErrors  uint64 // lookups failed with EAI_SYSTEM: no thread could be created
	CapRefused    uint64 // lookups failed at once at the thread cap (MaxThreads)
	HostsFile     uint64 // lookups answered from the hosts file without getaddrinfo
	// HandedOver counts lookups asked of the built-in DNS client because
	// HandOverAt calls were inside getaddrinfo (see DefaultHandOverAt).
	HandedOver uint64
	// HTTPSLookups counts HTTPS lookups asked of the built-in DNS client
	// (LookupHTTPS: getaddrinfo has no HTTPS records to give).
	HTTPSLookups uint64
	// Threads is the process-wide getaddrinfo thread pool.
	Threads GAIThreadStats
}

type sysResolverCounters struct {
	inFlight, queued                            atomic.Int64
	abandoned, abandonedDone, completed, shared atomic.Uint64
	skipped, threadErrors, capRefused           atomic.Uint64
	hostsFile, handedOver, httpsLookups         atomic.Uint64
}

// Stats returns a snapshot of r's counters.
func (r *SystemResolver) Stats() SystemResolverStats {
	c := &r.stats
	return SystemResolverStats{
		InFlight:      c.inFlight.Load(),
		Queued:        c.queued.Load(),
		Abandoned:     c.abandoned.Load(),
		AbandonedDone: c.abandonedDone.Load(),
		Completed:     c.completed.Load(),
		Shared:        c.shared.Load(),
		Skipped:       c.skipped.Load(),
		ThreadErrors:  c.threadErrors.Load(),
		CapRefused:    c.capRefused.Load(),
		HostsFile:     c.hostsFile.Load(),
		HandedOver:    c.handedOver.Load(),
		HTTPSLookups:  c.httpsLookups.Load(),
		Threads:       GAIThreads(),
	}
}
