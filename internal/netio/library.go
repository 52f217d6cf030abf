package netio

import (
	"context"
	"net/netip"
	"sync"
	"sync/atomic"
	"time"

	"golang.org/x/sys/unix"

	"github.com/hev2/hev2/internal/race"
	"github.com/hev2/hev2/internal/resolve"
)

// LibraryDriven is a race with no thread and no goroutine of its own: it is
// stepped by whoever brings it news, under its lock. The shared poller's
// goroutine steps it when an attempt's socket is ready (reading SO_ERROR
// right there, no hand-off), a timer's goroutine when a deadline passes,
// the resolver's delivery when an answer comes, and the caller of Cancel.
// A pending race therefore costs memory only (no goroutine stack), and a
// connect's outcome reaches onDone without a hop between threads.
type LibraryDriven struct {
	raceRoom
	params Params
	mu     sync.Mutex
	m      *race.Machine // &machine
	start  time.Duration // monoNow at the start
	fds    []int         // per attempt; -1 once closed or handed over
	tokens []uint64      // per attempt's poller registration, 0 if none
	waits
	timer   *time.Timer
	pending []race.Event
	sources sourceCache
	done    bool
	onDone  func(*race.Result, error)
	// escaped: the race handed itself to another goroutine (the poller,
	// a timer, a lookup's delivery, the NAT64 discovery), which may still
	// reach it after it is decided; such a race is never recycled.
	escaped bool

	// Room for the slices above in a race of one or two attempts: a
	// pending race costs one allocation fewer for each (about the bytes
	// they add), and its cancel none for the event it steps.
	fdBuf      [2]int
	tokenBuf   [2]uint64
	pendingBuf [1]race.Event
}

// libraryPool keeps the memory of races that ended without any goroutine
// of the library holding them (Recycle), as waiterPool does for WaiterDriven.
var libraryPool = sync.Pool{New: func() any { return new(LibraryDriven) }}

// Recycle gives the memory of a decided race back for a later race, and
// reports whether it did. The caller vouches that nothing of its own still
// holds r or its outcome (the Result points into r); r itself refuses if
// it was ever shared with another goroutine (registered with the poller,
// a timer, a lookup, the NAT64 discovery), or is still running. In
// practice: a loopback connect settled as it started. The caller must not
// touch r, nor its Result, afterwards.
func (r *LibraryDriven) Recycle() bool {
	r.mu.Lock()
	ok := r.done && !r.escaped
	r.mu.Unlock()
	if !ok {
		return false
	}
	*r = LibraryDriven{}
	libraryPool.Put(r)
	return true
}

// StartLibrary begins a race: its first actions are performed before it
// returns. onDone is called exactly once with the outcome, on the goroutine
// that decided it (possibly inside StartLibrary or Cancel), outside the
// race's lock; it must not block for long, since that goroutine may be the
// poller that serves every race.
func StartLibrary(cfg race.MachineConfig, p Params, onDone func(*race.Result, error)) *LibraryDriven {
	r := libraryPool.Get().(*LibraryDriven)
	r.params, r.start, r.onDone = p, monoNow(), onDone
	r.fds, r.tokens, r.pending = r.fdBuf[:0], r.tokenBuf[:0], r.pendingBuf[:0]
	if !cfg.Lone() {
		// Only several addresses are sorted (a method value costs an
		// allocation).
		cfg.Sort = r.sources.sortRFC6724
	}
	r.m = &r.machine
	r.m.Init(cfg)
	r.mu.Lock()
	r.settle(r.m.Start(0))
	return r
}

// Dial plays one race to its end and waits for it on the calling
// goroutine; ctx cancels it.
func Dial(ctx context.Context, cfg race.MachineConfig, p Params) (*race.Result, error) {
	type outcome struct {
		res *race.Result
		err error
	}
	ch := make(chan outcome, 1)
	r := StartLibrary(cfg, p, func(res *race.Result, err error) { ch <- outcome{res, err} })
	r.Look()
	select {
	case o := <-ch:
		return o.res, o.err
	case <-ctx.Done():
		r.Cancel(context.Cause(ctx))
		o := <-ch // decided by now: Cancel steps the race itself
		return o.res, o.err
	}
}

// Look gives the race one look at its attempt sockets without waiting,
// on the calling goroutine, and steps it with what is ready; it reports
// whether the race is decided (onDone has then been called, possibly by
// this call). A waiter about to block calls it first: a connect that
// finished by then (a near one, or one whose readiness the poller has not
// delivered yet) is decided here instead of through the shared poller's
// goroutine and two hand-offs between threads. (A loopback connect is
// settled as it starts: see startAttempt.) What Look takes, the poller
// never reports: the socket's registration is dropped first.
func (r *LibraryDriven) Look() bool {
	r.mu.Lock()
	if r.done {
		r.mu.Unlock()
		return true
	}
	// At most four sockets, on the stack: a race rarely has more in
	// flight, and the poller reports the others.
	var fds [4]unix.PollFd
	var ids [4]int
	n := 0
	for id, fd := range r.fds {
		if fd >= 0 && r.tokens[id] != 0 && n < len(fds) {
			fds[n] = unix.PollFd{Fd: int32(fd), Events: unix.POLLOUT}
			ids[n] = id
			n++
		}
	}
	if n == 0 {
		r.mu.Unlock()
		return false
	}
	if k, err := rawPollNow(fds[:n]); err != nil || k == 0 {
		r.mu.Unlock()
		return false
	}
	for i, pfd := range fds[:n] {
		if pfd.Revents == 0 {
			continue
		}
		id := ids[i]
		sharedPoller.forget(r.tokens[id])
		r.tokens[id] = 0
		r.pending = append(r.pending, race.Event{Kind: race.EventAttemptDone, Attempt: id, Err: readyResult(r.fds[id], pfd.Revents)})
	}
	r.settle(nil)
	r.mu.Lock()
	done := r.done
	r.mu.Unlock()
	return done
}

// Cancel ends the race with cause unless it is decided already.
func (r *LibraryDriven) Cancel(cause error) {
	r.step(race.Event{Kind: race.EventCancel, Err: cause})
}

func (r *LibraryDriven) now() time.Duration { return monoNow() - r.start }

// step feeds one event in, from any goroutine.
func (r *LibraryDriven) step(ev race.Event) {
	r.mu.Lock()
	if r.done {
		r.mu.Unlock()
		return
	}
	r.pending = append(r.pending, ev)
	r.settle(nil)
}

// settle performs acts, then steps the machine with what performing them
// produced until nothing is left; it is entered with r.mu held and leaves
// it unlocked, calling onDone if the race was decided.
func (r *LibraryDriven) settle(acts []race.Action) {
	res, err, finished := r.play(acts)
	if finished {
		r.done = true
		r.release()
	}
	r.mu.Unlock()
	if finished {
		r.onDone(res, err)
	}
}

// play runs the machine until it waits for news. A panic (a bug) ends the
// race with an InternalError instead of killing the host from a goroutine
// that no caller's recover can reach.
func (r *LibraryDriven) play(acts []race.Action) (res *race.Result, err error, finished bool) {
	defer func() {
		if p := recover(); p != nil {
			res, err, finished = nil, newInternalError(p), true
		}
	}()
	for {
		if res, err, finished = r.perform(acts); finished || len(r.pending) == 0 {
			return res, err, finished
		}
		// The machine is done with the events when Step returns: what
		// performing its actions produces reuses their room.
		batch := r.pending
		r.pending = r.pending[:0]
		acts = r.m.Step(r.now(), batch...)
	}
}

func (r *LibraryDriven) perform(acts []race.Action) (*race.Result, error, bool) {
	a, decided := perform(r, acts)
	switch {
	case !decided:
		return nil, nil, false
	case a.Err != nil:
		return nil, a.Err, true
	}
	res, err := r.handOver(a.Attempt)
	return res, err, true
}

func (r *LibraryDriven) awaitPrefix64() {
	r.escaped = true // the discovery's delivery holds r
	r.prefixCancel = awaitPrefix64(&r.params, r.step)
}

func (r *LibraryDriven) startLookup(q race.QueryKind) {
	r.escaped = true // the lookup's delivery holds r
	if sys, ok := r.params.Resolver.(*resolve.SystemResolver); ok {
		// No goroutine per lookup: the resolver's delivery steps the race.
		// An answer known at once (a literal, a skipped family) comes
		// inside the call, while this race's lock is held: it is queued
		// instead of stepped.
		var call struct {
			sync.Mutex
			inside bool
			early  []race.Event
		}
		call.inside = true
		cancel := sys.LookupFamilyAsync(r.m.Host(), q.Family(), nil, func(addrs []netip.Addr, err error) {
			ev := race.Event{Kind: race.EventLookupDone, Query: q, Addrs: addrs, Err: err}
			call.Lock()
			if call.inside {
				call.early = append(call.early, ev)
				call.Unlock()
				return
			}
			call.Unlock()
			r.step(ev)
		})
		call.Lock()
		call.inside = false
		r.pending = append(r.pending, call.early...)
		call.Unlock()
		r.lookups[q.Index()] = cancel
		return
	}
	r.lookups[q.Index()] = lookupOnGoroutine(r.params.Resolver, r.m.Host(), q, r.step)
}

func (r *LibraryDriven) startServiceLookup(q race.QueryKind, n uint8) {
	r.escaped = true // the lookup's delivery holds r
	r.addServiceLookup(n, serviceLookupOnGoroutine(r.params.Resolver, r.m, q, n, r.step))
}

func (r *LibraryDriven) startAttempt(id int, addr netip.AddrPort) {
	for len(r.fds) <= id {
		r.fds = append(r.fds, -1)
		r.tokens = append(r.tokens, 0)
	}
	fd, connected, err := startConnect(addr, r.params.Local)
	if err != nil {
		r.pending = append(r.pending, race.Event{Kind: race.EventAttemptDone, Attempt: id, Err: err})
		return
	}
	r.fds[id] = fd
	if connected {
		r.pending = append(r.pending, race.Event{Kind: race.EventAttemptDone, Attempt: id})
		return
	}
	if addr.Addr().IsLoopback() && !noLoopbackLook.Load() {
		// A loopback connect is decided inside connect(2) (the whole
		// handshake, or the refusal, runs in the kernel before it
		// returns): one look now settles it without registering with
		// the poller, whose thread would otherwise wake for it and
		// hand the race over. Other destinations are not looked at:
		// their answer is a round trip away. A connected socket is
		// told by getpeername, cheaper than a poll; the poll tells a
		// refusal from a connect still in flight.
		if rawConnected(fd) {
			r.pending = append(r.pending, race.Event{Kind: race.EventAttemptDone, Attempt: id})
			return
		}
		pfd := [1]unix.PollFd{{Fd: int32(fd), Events: unix.POLLOUT}}
		if n, err := rawPollNow(pfd[:]); err == nil && n > 0 {
			r.pending = append(r.pending, race.Event{Kind: race.EventAttemptDone, Attempt: id, Err: readyResult(fd, pfd[0].Revents)})
			return
		}
	}
	r.escaped = true // the poller holds r until the registration is gone, and later
	token, err := sharedPoller.register(fd, r, id)
	if err != nil {
		r.pending = append(r.pending, race.Event{Kind: race.EventAttemptDone, Attempt: id, Err: err})
		return
	}
	r.tokens[id] = token
}

// noLoopbackLook turns the look at a loopback connect off (tests: the
// poller's path, with loopback listeners).
var noLoopbackLook atomic.Bool

// SetLoopbackLook turns the look at a loopback connect in startAttempt on
// (the default) or off, and returns what it was. For tests that need the
// shared poller to see loopback connects.
func SetLoopbackLook(on bool) bool { return !noLoopbackLook.Swap(!on) }

// ready runs on the poller's goroutine: attempt id's connect has finished.
// Its registration is one-shot and already gone from the poller.
func (r *LibraryDriven) ready(id int, events uint32) {
	r.mu.Lock()
	if r.done || r.fds[id] < 0 || r.tokens[id] == 0 {
		// Decided, closed, or taken by Look while this event was on
		// its way.
		r.mu.Unlock()
		return
	}
	r.tokens[id] = 0
	r.pending = append(r.pending, race.Event{Kind: race.EventAttemptDone, Attempt: id, Err: readyResult(r.fds[id], int16(events))})
	r.settle(nil)
}

func (r *LibraryDriven) closeAttempt(id int) {
	if id >= len(r.fds) || r.fds[id] < 0 {
		return
	}
	if r.tokens[id] != 0 {
		sharedPoller.forget(r.tokens[id])
		r.tokens[id] = 0
	}
	closeFD(r.fds[id])
	r.fds[id] = -1
}

func (r *LibraryDriven) armTimer(at time.Duration) {
	if at < 0 {
		if r.timer != nil {
			r.timer.Stop()
		}
		return
	}
	d := max(at-r.now(), 0)
	if r.timer == nil {
		r.escaped = true // the timer holds r
		r.timer = time.AfterFunc(d, r.timerFired)
	} else {
		r.timer.Reset(d)
	}
}

// timerFired steps the race at "now": the machine looks at its deadlines.
func (r *LibraryDriven) timerFired() {
	r.mu.Lock()
	if r.done {
		r.mu.Unlock()
		return
	}
	acts := r.m.Step(r.now())
	r.settle(acts)
}

// handOver gives the winner to the caller: from here on hev2 never touches
// the fd again.
func (r *LibraryDriven) handOver(id int) (*race.Result, error) {
	fd := r.fds[id]
	if r.tokens[id] != 0 {
		sharedPoller.forget(r.tokens[id])
		r.tokens[id] = 0
	}
	r.fds[id] = -1
	if err := applySocketOptions(fd, &r.params.Socket); err != nil {
		closeFD(fd)
		return nil, err
	}
	return r.newResult(id, fd, r.now()), nil
}

// release drops whatever the decided race still holds; the machine has
// already asked for all of it, so this is a safety net.
func (r *LibraryDriven) release() {
	for id := range r.fds {
		r.closeAttempt(id)
	}
	r.cancelAll()
	if r.timer != nil {
		r.timer.Stop()
	}
}
