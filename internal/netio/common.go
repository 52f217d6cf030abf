package netio

import (
	"context"
	"net/netip"
	"strings"
	"time"

	"github.com/hev2/hev2/internal/race"
	"github.com/hev2/hev2/internal/resolve"
)

// sourceCache remembers, for one race, the source address the kernel
// would use for each destination: RFC 6724 sorting asks once per
// destination, not once per comparison.
type sourceCache []sourceEntry

type sourceEntry struct {
	dst, src netip.Addr
	ok       bool
}

func (c *sourceCache) sortRFC6724(addrs []netip.Addr, nat64 []netip.Prefix) []netip.Addr {
	return race.SortRFC6724NAT64(addrs, func(dst netip.Addr) (netip.Addr, bool) {
		for _, e := range *c {
			if e.dst == dst {
				return e.src, e.ok
			}
		}
		src, ok := kernelSources.source(dst)
		*c = append(*c, sourceEntry{dst, src, ok})
		return src, ok
	}, nat64)
}

// raceRoom is what the fd drivers (WaiterDriven, LibraryDriven) embed in their
// per-race object: the machine, and room for the result, so that a connect
// costs one allocation for all three. The result's attempts are the
// machine's own (race.Machine.DecidedAttempts), as a failed race's Error's
// are: the drivers reuse a race's memory only once nothing holds its
// outcome (Recycle).
type raceRoom struct {
	machine race.Machine
	result  race.Result
}

func (room *raceRoom) newResult(id, fd int, elapsed time.Duration) *race.Result {
	room.result = resultOf(&room.machine, room.machine.DecidedAttempts(), id, fd, elapsed)
	return &room.result
}

// resultRoom is a result in memory of its own, with room for the attempts
// of a small race, for a driver that reuses its machine at once (the
// netpoll driver's pool). The result handed out points into it.
type resultRoom struct {
	result   race.Result
	attempts [2]race.AttemptInfo
}

func (room *resultRoom) newResult(m *race.Machine, id, fd int, elapsed time.Duration) *race.Result {
	room.result = resultOf(m, m.AppendAttempts(room.attempts[:0]), id, fd, elapsed)
	return &room.result
}

// resultOf is the account of a race won by attempt id with socket fd.
func resultOf(m *race.Machine, attempts []race.AttemptInfo, id, fd int, elapsed time.Duration) race.Result {
	return race.Result{
		FD:              fd,
		Addr:            attempts[id].Addr,
		Elapsed:         elapsed,
		Lookups:         m.Lookups(),
		Attempts:        attempts,
		Trace:           m.Recorded(),
		SynthesizedFrom: attempts[id].SynthesizedFrom,
		NAT64Prefixes:   m.NAT64Prefixes(),
		History:         m.History(),
		HTTPS:           m.HTTPS(),
	}
}

// awaitPrefix64 asks the network's NAT64 discovery for its outcome
// (race.ActionAwaitPrefix64) and hands it to deliver as an event, never
// inside this call; the returned func stops the delivery.
func awaitPrefix64(p *Params, deliver func(race.Event)) func() {
	if p.AwaitPrefix64 == nil {
		// A machine configured by hand with a pending discovery and no
		// discovery behind it: end the wait with no prefix.
		go deliver(race.Event{Kind: race.EventPrefix64})
		return func() {}
	}
	return p.AwaitPrefix64(func(prefixes []netip.Prefix, err error) {
		deliver(race.Event{Kind: race.EventPrefix64, Answer: prefixes, Err: err})
	})
}

// cancelLookups cancels every lookup a race still has (nil: none started).
func cancelLookups[F ~func()](cancels []F) {
	for _, cancel := range cancels {
		if cancel != nil {
			cancel()
		}
	}
}

// httpsResolverOf is the resolver a race's HTTPS queries go to: the race's
// own, when it answers them (both of hev2's do), or else the system
// resolver's DNS client (resolv.conf's servers), so that a caller's A/AAAA
// resolver does not turn HTTPS records off.
func httpsResolverOf(res Resolver) resolve.HTTPSResolver {
	if h, ok := res.(resolve.HTTPSResolver); ok {
		return h
	}
	return resolve.DefaultSystemResolver
}

// serviceLookupOnGoroutine makes service lookup n of machine m (an HTTPS
// query, or a service target's addresses) on a goroutine of its own and
// hands its answer to deliver; the returned func cancels it.
func serviceLookupOnGoroutine(res Resolver, m *race.Machine, q race.QueryKind, n uint8, deliver func(race.Event)) func() {
	name := m.LookupName(n)
	ctx, cancel := context.WithCancel(context.Background())
	go func() {
		ev := race.Event{Kind: race.EventLookupDone, Query: q, Lookup: n}
		if q == race.QueryHTTPS {
			ans, err := httpsResolverOf(res).LookupHTTPS(ctx, name)
			ev.Answer, ev.Err = ans, err
		} else {
			ev.Addrs, ev.Err = res.LookupFamily(ctx, strings.TrimSuffix(name, "."), q.Family())
		}
		deliver(ev)
	}()
	return cancel
}

// lookupOnGoroutine runs a resolver that may block (any but the system
// resolver's asynchronous path) on a goroutine of its own and hands its
// answer to deliver; the returned func cancels it.
func lookupOnGoroutine(res Resolver, host string, q race.QueryKind, deliver func(race.Event)) func() {
	ctx, cancel := context.WithCancel(context.Background())
	go func() {
		addrs, err := res.LookupFamily(ctx, host, q.Family())
		deliver(race.Event{Kind: race.EventLookupDone, Query: q, Addrs: addrs, Err: err})
	}()
	return cancel
}
