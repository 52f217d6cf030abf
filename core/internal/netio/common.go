package netio

import (
	"context"
	"net/netip"
	"time"

	"github.com/hev2/hev2/core/internal/race"
)

// sourceCache remembers, for one race, the source address the kernel
// would use for each destination: RFC 6724 sorting asks once per
// destination, not once per comparison.
type sourceCache []sourceEntry

type sourceEntry struct {
	dst, src netip.Addr
	ok       bool
}

func (c *sourceCache) sortRFC6724(addrs []netip.Addr) []netip.Addr {
	return race.SortRFC6724(addrs, func(dst netip.Addr) (netip.Addr, bool) {
		for _, e := range *c {
			if e.dst == dst {
				return e.src, e.ok
			}
		}
		src, ok := kernelSource(dst)
		*c = append(*c, sourceEntry{dst, src, ok})
		return src, ok
	})
}

// newResult is the account of a race won by attempt id with socket fd.
func newResult(m *race.Machine, id, fd int, elapsed time.Duration) *race.Result {
	attempts := m.Attempts()
	return &race.Result{
		FD:       fd,
		Addr:     attempts[id].Addr,
		Elapsed:  elapsed,
		Lookups:  m.Lookups(),
		Attempts: attempts,
		Trace:    m.Recorded(),
	}
}

// cancelLookups cancels every lookup a race still has (nil: none started).
func cancelLookups[F ~func()](cancels []F) {
	for _, cancel := range cancels {
		if cancel != nil {
			cancel()
		}
	}
}

// lookupOnGoroutine runs a resolver that may block (any but the system
// resolver's asynchronous path) on a goroutine of its own and hands its
// answer to deliver; the returned func cancels it.
func lookupOnGoroutine(res Resolver, host string, f race.Family, deliver func(race.Event)) func() {
	ctx, cancel := context.WithCancel(context.Background())
	go func() {
		addrs, err := res.LookupFamily(ctx, host, f)
		deliver(race.Event{Kind: race.EventLookupDone, Family: f, Addrs: addrs, Err: err})
	}()
	return cancel
}
