package netio

import (
	"context"
	"net/netip"
	"time"

	"github.com/hev2/hev2/core/internal/race"
)

// eventAttemptReady is the poller's internal signal that an attempt's
// socket is ready; the race reads the outcome itself (only the race's own
// goroutine touches its fds, so an fd is never read after it was closed).
const eventAttemptReady race.EventKind = 0xff

// Resolver is what a driver asks of a resolver; core.Resolver is the same
// interface.
type Resolver interface {
	LookupFamily(ctx context.Context, host string, family race.Family) ([]netip.Addr, error)
}

// Params are a connection's inputs besides the machine's configuration.
type Params struct {
	Resolver Resolver
	// Local is bound before connecting when its address is valid or its
	// port is not 0.
	Local  netip.AddrPort
	Socket SocketOptions
}

// Dial plays one race to its end on the calling goroutine: attempts are
// watched by the shared poller, lookups run on goroutines of their own.
func Dial(ctx context.Context, cfg race.MachineConfig, p *Params) (*race.Result, error) {
	r := &asyncRace{p: p, host: cfg.Host, box: newInbox(), start: time.Now()}
	cfg.Sort = r.sources.sortRFC6724
	r.m = race.NewMachine(cfg)
	return r.run(ctx)
}

// asyncRace drives one Machine with real resolvers, sockets, epoll and a
// timer. It runs on the caller's goroutine; resolvers run on their own.
type asyncRace struct {
	p       *Params
	m       *race.Machine
	host    string
	box     *inbox
	start   time.Time
	lookups [2]context.CancelFunc
	fds     []int    // per attempt; -1 once closed or handed over
	tokens  []uint64 // per attempt's poller registration
	timer   *time.Timer
	pending []race.Event // events produced while performing actions
	sources sourceCache
}

func (r *asyncRace) now() time.Duration { return time.Since(r.start) }

// run plays the race to its end and returns the winner or the error.
func (r *asyncRace) run(ctx context.Context) (*race.Result, error) {
	defer r.cleanup()
	acts := r.m.Start(0)
	canceled := false
	var batch []race.Event
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
			batch = append(batch, race.Event{Kind: race.EventCancel, Err: context.Cause(ctx)})
		}
		batch = r.resolveReadiness(batch)
		acts = r.m.Step(r.now(), batch...)
	}
}

// perform carries out the machine's actions. It reports done with the
// outcome once the machine has decided.
func (r *asyncRace) perform(ctx context.Context, acts []race.Action) (*race.Result, error, bool) {
	for _, a := range acts {
		switch a.Kind {
		case race.ActionStartLookup:
			r.startLookup(ctx, a.Family)
		case race.ActionCancelLookup:
			if cancel := r.lookups[race.FamilyIndex(a.Family)]; cancel != nil {
				cancel()
			}
		case race.ActionStartAttempt:
			r.startAttempt(a.Attempt, a.Addr)
		case race.ActionCloseAttempt:
			r.closeAttempt(a.Attempt)
		case race.ActionArmTimer:
			r.armTimer(a.At)
		case race.ActionDone:
			if a.Err != nil {
				return nil, a.Err, true
			}
			res, err := r.handOver(a.Attempt)
			return res, err, true
		}
	}
	return nil, nil, false
}

func (r *asyncRace) startLookup(ctx context.Context, f race.Family) {
	lctx, cancel := context.WithCancel(ctx)
	r.lookups[race.FamilyIndex(f)] = cancel
	res, host, box := r.p.Resolver, r.host, r.box
	go func() {
		addrs, err := res.LookupFamily(lctx, host, f)
		box.push(race.Event{Kind: race.EventLookupDone, Family: f, Addrs: addrs, Err: err})
	}()
}

func (r *asyncRace) startAttempt(id int, addr netip.AddrPort) {
	for len(r.fds) <= id {
		r.fds = append(r.fds, -1)
		r.tokens = append(r.tokens, 0)
	}
	fd, connected, err := startConnect(addr, r.p.Local)
	if err != nil {
		r.pending = append(r.pending, race.Event{Kind: race.EventAttemptDone, Attempt: id, Err: err})
		return
	}
	r.fds[id] = fd
	if connected {
		r.pending = append(r.pending, race.Event{Kind: race.EventAttemptDone, Attempt: id})
		return
	}
	box := r.box
	token, err := sharedPoller.register(fd, func() {
		box.push(race.Event{Kind: eventAttemptReady, Attempt: id})
	})
	if err != nil {
		r.pending = append(r.pending, race.Event{Kind: race.EventAttemptDone, Attempt: id, Err: err})
		return
	}
	r.tokens[id] = token
}

// resolveReadiness turns the poller's readiness signals into outcomes, read
// with one getsockopt(SO_ERROR) each; signals for closed attempts are
// dropped.
func (r *asyncRace) resolveReadiness(batch []race.Event) []race.Event {
	out := batch[:0]
	for _, ev := range batch {
		if ev.Kind == eventAttemptReady {
			fd := r.fds[ev.Attempt]
			if fd < 0 {
				continue
			}
			r.tokens[ev.Attempt] = 0
			ev = race.Event{Kind: race.EventAttemptDone, Attempt: ev.Attempt, Err: connectResult(fd)}
		}
		out = append(out, ev)
	}
	return out
}

func (r *asyncRace) closeAttempt(id int) {
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

func (r *asyncRace) armTimer(at time.Duration) {
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
func (r *asyncRace) handOver(id int) (*race.Result, error) {
	fd := r.fds[id]
	if r.tokens[id] != 0 {
		sharedPoller.forget(r.tokens[id])
		r.tokens[id] = 0
	}
	r.fds[id] = -1
	if err := applySocketOptions(fd, &r.p.Socket); err != nil {
		closeFD(fd)
		return nil, err
	}
	return newResult(r.m, id, fd, r.now()), nil
}

// cleanup releases whatever the race still holds; after a decided race
// there is nothing left, so this is a safety net.
func (r *asyncRace) cleanup() {
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
