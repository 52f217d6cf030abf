package core

import (
	"context"
	"net/netip"
	"time"
)

// eventAttemptReady is the poller's internal signal that an attempt's
// socket is ready; the race reads the outcome itself (only the race's own
// goroutine touches its fds, so an fd is never read after it was closed).
const eventAttemptReady EventKind = 0xff

// race drives one Machine with real resolvers, sockets, epoll and a timer.
// It runs on the caller's goroutine; resolvers run on their own.
type race struct {
	d       *Dialer
	m       *Machine
	host    string
	box     *inbox
	start   time.Time
	local   netip.AddrPort
	lookups [2]context.CancelFunc
	fds     []int    // per attempt; -1 once closed or handed over
	tokens  []uint64 // per attempt's poller registration
	timer   *time.Timer
	pending []Event // events produced while performing actions
	sources []sourceEntry
}

type sourceEntry struct {
	dst, src netip.Addr
	ok       bool
}

func (r *race) now() time.Duration { return time.Since(r.start) }

// run plays the race to its end and returns the winner or the error.
func (r *race) run(ctx context.Context) (*Result, error) {
	defer r.cleanup()
	acts := r.m.Start(0)
	canceled := false
	var batch []Event
	for {
		if res, err, done := r.perform(ctx, acts); done {
			return res, err
		}
		batch = append(batch[:0], r.pending...)
		r.pending = r.pending[:0]
		if len(batch) == 0 {
			var timerC <-chan time.Time
			if r.timer != nil {
				timerC = r.timer.C
			}
			var ctxDone <-chan struct{}
			if !canceled {
				ctxDone = ctx.Done()
			}
			select {
			case <-r.box.wake:
			case <-timerC:
			case <-ctxDone:
			}
		}
		batch = r.box.takeInto(batch)
		if !canceled && ctx.Err() != nil {
			canceled = true
			batch = append(batch, Event{Kind: EventCancel, Err: context.Cause(ctx)})
		}
		batch = r.resolveReadiness(batch)
		acts = r.m.Step(r.now(), batch...)
	}
}

// perform carries out the machine's actions. It reports done with the
// outcome once the machine has decided.
func (r *race) perform(ctx context.Context, acts []Action) (*Result, error, bool) {
	for _, a := range acts {
		switch a.Kind {
		case ActionStartLookup:
			r.startLookup(ctx, a.Family)
		case ActionCancelLookup:
			if cancel := r.lookups[familyIndex(a.Family)]; cancel != nil {
				cancel()
			}
		case ActionStartAttempt:
			r.startAttempt(a.Attempt, a.Addr)
		case ActionCloseAttempt:
			r.closeAttempt(a.Attempt)
		case ActionArmTimer:
			r.armTimer(a.At)
		case ActionDone:
			if a.Err != nil {
				return nil, a.Err, true
			}
			res, err := r.handOver(a.Attempt)
			return res, err, true
		}
	}
	return nil, nil, false
}

func (r *race) startLookup(ctx context.Context, f Family) {
	lctx, cancel := context.WithCancel(ctx)
	r.lookups[familyIndex(f)] = cancel
	res, host, box := r.d.resolver(), r.host, r.box
	go func() {
		addrs, err := res.LookupFamily(lctx, host, f)
		box.push(Event{Kind: EventLookupDone, Family: f, Addrs: addrs, Err: err})
	}()
}

func (r *race) startAttempt(id int, addr netip.AddrPort) {
	for len(r.fds) <= id {
		r.fds = append(r.fds, -1)
		r.tokens = append(r.tokens, 0)
	}
	fd, connected, err := startConnect(addr, r.local)
	if err != nil {
		r.pending = append(r.pending, Event{Kind: EventAttemptDone, Attempt: id, Err: err})
		return
	}
	r.fds[id] = fd
	if connected {
		r.pending = append(r.pending, Event{Kind: EventAttemptDone, Attempt: id})
		return
	}
	box := r.box
	token, err := sharedPoller.register(fd, func() {
		box.push(Event{Kind: eventAttemptReady, Attempt: id})
	})
	if err != nil {
		r.pending = append(r.pending, Event{Kind: EventAttemptDone, Attempt: id, Err: err})
		return
	}
	r.tokens[id] = token
}

// resolveReadiness turns the poller's readiness signals into outcomes, read
// with one getsockopt(SO_ERROR) each; signals for closed attempts are
// dropped.
func (r *race) resolveReadiness(batch []Event) []Event {
	out := batch[:0]
	for _, ev := range batch {
		if ev.Kind == eventAttemptReady {
			fd := r.fds[ev.Attempt]
			if fd < 0 {
				continue
			}
			r.tokens[ev.Attempt] = 0
			ev = Event{Kind: EventAttemptDone, Attempt: ev.Attempt, Err: connectResult(fd)}
		}
		out = append(out, ev)
	}
	return out
}

func (r *race) closeAttempt(id int) {
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

func (r *race) armTimer(at time.Duration) {
	if at < 0 {
		if r.timer != nil {
			r.timer.Stop()
		}
		return
	}
	d := max(at-r.now(), 0)
	if r.timer == nil {
		r.timer = time.NewTimer(d)
	} else {
		r.timer.Reset(d)
	}
}

// handOver gives the winner to the caller: from here on hev2 never touches
// the fd again.
func (r *race) handOver(id int) (*Result, error) {
	fd := r.fds[id]
	if r.tokens[id] != 0 {
		sharedPoller.forget(r.tokens[id])
		r.tokens[id] = 0
	}
	r.fds[id] = -1
	if err := applySocketOptions(fd, r.d); err != nil {
		closeFD(fd)
		return nil, err
	}
	attempts := r.m.Attempts()
	return &Result{
		FD:       fd,
		Addr:     attempts[id].Addr,
		Elapsed:  r.now(),
		Lookups:  r.m.Lookups(),
		Attempts: attempts,
	}, nil
}

// cleanup releases whatever the race still holds; after a decided race
// there is nothing left, so this is a safety net.
func (r *race) cleanup() {
	for id := range r.fds {
		r.closeAttempt(id)
	}
	for _, cancel := range r.lookups {
		if cancel != nil {
			cancel()
		}
	}
	if r.timer != nil {
		r.timer.Stop()
	}
}

// sortRFC6724 sorts with source addresses asked of the kernel, once per
// destination per race.
func (r *race) sortRFC6724(addrs []netip.Addr) []netip.Addr {
	return SortRFC6724(addrs, func(dst netip.Addr) (netip.Addr, bool) {
		for _, e := range r.sources {
			if e.dst == dst {
				return e.src, e.ok
			}
		}
		src, ok := kernelSource(dst)
		r.sources = append(r.sources, sourceEntry{dst, src, ok})
		return src, ok
	})
}
