package core

import (
	"context"
	"net/netip"
	"slices"
)

// Identical lookups in flight at the same time share one getaddrinfo call.
// Unlike x/sync/singleflight, the shared call is canceled when the last
// caller waiting for it leaves (so a queued call gives up its place), and a
// caller that leaves never cancels the others.

type flightKey struct {
	host   string
	family Family
}

type flight struct {
	done    chan struct{}
	addrs   []netip.Addr
	err     error
	waiters int // guarded by SystemResolver.mu
	cancel  context.CancelFunc
}

func (r *SystemResolver) join(ctx context.Context, k flightKey) ([]netip.Addr, error) {
	r.mu.Lock()
	f := r.flights[k]
	if f == nil {
		callCtx, cancel := context.WithCancel(context.WithoutCancel(ctx))
		f = &flight{done: make(chan struct{}), cancel: cancel}
		r.flights[k] = f
		go r.fly(callCtx, k, f)
	} else {
		r.stats.shared.Add(1)
	}
	f.waiters++
	r.mu.Unlock()

	select {
	case <-f.done:
		// Each caller gets its own slice: callers sort and trim answers.
		return slices.Clone(f.addrs), f.err
	case <-ctx.Done():
		r.mu.Lock()
		f.waiters--
		if f.waiters == 0 {
			f.cancel()
			r.forget(k, f)
		}
		r.mu.Unlock()
		return nil, ctx.Err()
	}
}

func (r *SystemResolver) fly(ctx context.Context, k flightKey, f *flight) {
	addrs, err := r.call(ctx, k)
	r.mu.Lock()
	r.forget(k, f)
	f.addrs, f.err = addrs, err
	r.mu.Unlock()
	f.cancel()
	close(f.done)
}

// forget drops f so that later callers start a fresh call. r.mu is held.
func (r *SystemResolver) forget(k flightKey, f *flight) {
	if r.flights[k] == f {
		delete(r.flights, k)
	}
}
