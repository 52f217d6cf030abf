package resolve

import (
	"context"
	"errors"
	"net/netip"
	"slices"
	"syscall"

	"github.com/hev2/hev2/internal/race"
)

// Identical lookups in flight at the same time share one getaddrinfo call
// (a flight). Unlike x/sync/singleflight, a caller that leaves never
// cancels the others, and when the last caller leaves, a queued flight gives
// up its place and a running one is abandoned (its answer is freed when it
// comes).
//
// A flight is completed by the getaddrinfo dispatcher itself, so a lookup
// that finds a free slot costs no goroutine of its own; only a queued
// flight has a goroutine waiting for a slot.

// errNoThread marks an EAI_SYSTEM that came from pthread_create (or the
// pool's eventfd), not from getaddrinfo.
var errNoThread = errors.New("no thread for getaddrinfo")

type flightKey struct {
	host   string
	family race.Family
}

type flightState uint8

const (
	flightQueued    flightState = iota // waiting for a slot
	flightRunning                      // getaddrinfo running
	flightAbandoned                    // running, every caller gone
	flightDone                         // answered (addrs, err set)
)

type flight struct {
	done    chan struct{}
	addrs   []netip.Addr
	err     error
	waiters int         // guarded by SystemResolver.mu
	state   flightState // guarded by SystemResolver.mu
	cancel  context.CancelFunc
	// callbacks of the waiters that did not block (LookupFamilyAsync);
	// guarded by SystemResolver.mu until the flight is done.
	callbacks []*asyncWaiter
	// ctxs of the blocking waiters (join), guarded by SystemResolver.mu:
	// a queued flight whose every caller is already canceled is not
	// started when a slot frees (see queue).
	ctxs []context.Context
}

// asyncWaiter is a LookupFamilyAsync caller: answered by a call, not by
// waiting on done.
type asyncWaiter struct {
	done func([]netip.Addr, error)
	left bool // guarded by SystemResolver.mu
}

// enter joins the flight for k, starting one if there is none: a blocking
// caller (cb nil) waiting under ctx, or an asynchronous one answered by cb
// (ctx unused). w, if not nil, is woken when a new call finishes.
func (r *SystemResolver) enter(ctx context.Context, k flightKey, w *Waker, cb *asyncWaiter) *flight {
	r.mu.Lock()
	f := r.flights[k]
	start := false
	if f == nil && atThreadCap() {
		// Fail fast rather than queue behind calls that may never return.
		r.stats.capRefused.Add(1)
		r.mu.Unlock()
		f = &flight{done: make(chan struct{}), err: threadCapError(k), state: flightDone}
		close(f.done)
		if cb != nil {
			cb.done(nil, f.err)
		}
		return f
	}
	if f == nil {
		f = &flight{done: make(chan struct{})}
		r.flights[k] = f
		select {
		case r.slots <- struct{}{}:
			f.state, start = flightRunning, true
		default:
			var queueCtx context.Context
			queueCtx, f.cancel = context.WithCancel(context.Background())
			r.stats.queued.Add(1)
			go r.queue(queueCtx, k, f)
		}
	} else {
		r.stats.shared.Add(1)
	}
	f.waiters++
	if cb != nil {
		f.callbacks = append(f.callbacks, cb)
	} else {
		f.ctxs = append(f.ctxs, ctx)
	}
	r.mu.Unlock()
	if start {
		r.submit(k, f, w)
	}
	return f
}

func (r *SystemResolver) join(ctx context.Context, k flightKey) ([]netip.Addr, error) {
	f := r.enter(ctx, k, nil, nil)
	select {
	case <-f.done:
		// Each caller gets its own slice: callers sort and trim answers.
		return slices.Clone(f.addrs), f.err
	case <-ctx.Done():
		r.leave(k, f)
		return nil, ctx.Err()
	}
}

// anyCallerWaiting reports whether some caller of f still waits for it
// (its context not canceled); r.mu is held.
func (f *flight) anyCallerWaiting() bool {
	for _, cb := range f.callbacks {
		if !cb.left {
			return true
		}
	}
	for _, ctx := range f.ctxs {
		if ctx.Err() == nil {
			return true
		}
	}
	return false
}

// leave drops a caller that gave up.
func (r *SystemResolver) leave(k flightKey, f *flight) {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.leaveLocked(k, f)
}

func (r *SystemResolver) leaveLocked(k flightKey, f *flight) {
	f.waiters--
	if f.waiters > 0 || f.state == flightDone {
		return
	}
	r.forget(k, f)
	switch f.state {
	case flightQueued:
		f.cancel()
	case flightRunning:
		// The call goes on in glibc, but nobody waits for it: its slot
		// goes to the next lookup at once (a burst of silent names must
		// not hold up a healthy one), and the call counts only against
		// the process's thread cap until it returns.
		f.state = flightAbandoned
		r.stats.abandoned.Add(1)
		<-r.slots
	}
}

// queue waits for a slot for f, until every caller has left.
func (r *SystemResolver) queue(ctx context.Context, k flightKey, f *flight) {
	defer f.cancel()
	select {
	case r.slots <- struct{}{}:
	case <-ctx.Done():
		r.stats.queued.Add(-1)
		return
	}
	r.mu.Lock()
	r.stats.queued.Add(-1)
	if f.waiters == 0 || !f.anyCallerWaiting() {
		// Everyone left, or is leaving (canceled, on its way out), just
		// as the slot came: a burst of lookups released at once must not
		// start the queued ones in the slots the running ones gave up.
		// A caller that comes now starts a flight of its own.
		r.forget(k, f)
		r.mu.Unlock()
		<-r.slots
		return
	}
	f.state = flightRunning
	r.mu.Unlock()
	if atThreadCap() {
		r.stats.capRefused.Add(1)
		r.settle(k, f, nil, threadCapError(k))
		return
	}
	r.submit(k, f, nil)
}

// submit hands f's call to a getaddrinfo thread; f holds a slot.
func (r *SystemResolver) submit(k flightKey, f *flight, w *Waker) {
	busyCalls.Add(1)
	r.stats.inFlight.Add(1)
	err := gaiSubmit(k.host, k.family, w, func(res gaiResult) { r.finish(k, f, res) })
	if err != nil {
		busyCalls.Add(-1)
		r.stats.inFlight.Add(-1)
		r.stats.threadErrors.Add(1)
		errno, _ := err.(syscall.Errno)
		r.settle(k, f, nil, &race.ResolveError{Host: k.host, Family: k.family, Code: race.EAI_SYSTEM, Errno: errno, Err: errNoThread})
	}
}

// finish runs once getaddrinfo has returned and its addrinfo list has been
// freed (on the dispatcher goroutine, or a HarvestLookups caller).
func (r *SystemResolver) finish(k flightKey, f *flight, res gaiResult) {
	busyCalls.Add(-1)
	r.stats.inFlight.Add(-1)
	r.stats.completed.Add(1)
	addrs, err := res.toGo(k)
	r.settle(k, f, addrs, err)
}

// settle ends f: its slot is given back (an abandoned flight gave it back
// when it was abandoned, and its answer is dropped and counted), and every
// caller still there gets the answer.
func (r *SystemResolver) settle(k flightKey, f *flight, addrs []netip.Addr, err error) {
	r.mu.Lock()
	if f.state == flightAbandoned {
		r.mu.Unlock()
		r.stats.abandonedDone.Add(1)
		return
	}
	<-r.slots
	r.forget(k, f)
	f.addrs, f.err, f.state = addrs, err, flightDone
	var answer []*asyncWaiter
	for _, cb := range f.callbacks {
		if !cb.left {
			answer = append(answer, cb)
		}
	}
	r.mu.Unlock()
	close(f.done)
	for _, cb := range answer {
		// Each caller gets its own slice: callers sort and trim answers.
		cb.done(slices.Clone(addrs), err)
	}
}

// forget drops f so that later callers start a fresh call. r.mu is held.
func (r *SystemResolver) forget(k flightKey, f *flight) {
	if r.flights[k] == f {
		delete(r.flights, k)
	}
}
