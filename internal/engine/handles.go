package engine

import (
	"time"

	"github.com/hev2/hev2/internal/netio"
)

// WaiterRace is a race driven by its waiter (HEV2_DRIVE_WAITER): Wait
// plays it on the calling thread (ppoll over its own sockets; no
// goroutine, no hand-off), so a blocking connect costs what a plain one
// does.
//
// A WaiterRace makes progress only while some goroutine is inside Wait: it
// suits a caller that blocks until the outcome (in slices if it likes).
// A Go program that wants many connections at once should use Connect or
// DialContext, whose waits cost no thread.
type WaiterRace struct {
	r *netio.WaiterDriven
}

// StartWaiter validates its inputs like Connect, then begins the race on the
// calling thread: the first connect (or the lookups) starts before StartWaiter
// returns. onDone, if not nil, is called once, on the thread that decides
// the race, right after the outcome is known; it must not block.
func (o *Options) StartWaiter(host string, port uint16, onDone func()) (*WaiterRace, error) {
	r, err := o.startWaiter(host, port, onDone)
	if err != nil {
		return nil, err
	}
	return &WaiterRace{r}, nil
}

func (o *Options) startWaiter(host string, port uint16, onDone func()) (*netio.WaiterDriven, error) {
	cfg, err := o.raceConfig(host, port)
	if err != nil {
		return nil, err
	}
	return netio.StartWaiter(cfg, o.params(&cfg), onDone), nil
}

// ConnectNow is StartWaiter without onDone, plus one look at the race without
// blocking, on the calling thread: a loopback or LAN connect is decided by
// then. Won at once, it returns the winner's fd (the caller's) and a nil
// race, and the race's memory serves a later connect (a connect to an IP
// literal makes its race only when it is not won at once: lone.go); a
// caller that needs the race's account (trace, report) uses StartWaiter instead.
// Otherwise fd is -1 and race is what StartWaiter would have returned, decided
// (a failure) or still running: the caller sets its onDone (SetOnDone)
// before another goroutine can reach it, and looks at Done. err is
// StartWaiter's.
func (o *Options) ConnectNow(host string, port uint16) (fd int, race *WaiterRace, err error) {
	// The race is wrapped in a WaiterRace only when it is handed back: a connect
	// won here costs no allocation for it.
	var r *netio.WaiterDriven
	if addr, ok := o.loneLiteral(host, port); ok {
		// One address, nothing to decide before its connect: the
		// connect comes first, and a race only if it is not won at once
		// (lone.go).
		sock := o.socketOptions()
		fd, first := netio.TryLone(addr, &sock)
		if fd >= 0 {
			return fd, nil, nil
		}
		r, err = o.startWaiterWith(host, port, &first)
	} else {
		r, err = o.startWaiter(host, port, nil)
	}
	if err != nil {
		return -1, nil, err
	}
	if !r.Look() {
		return -1, &WaiterRace{r}, nil
	}
	res, failure := r.Outcome()
	if failure != nil {
		return -1, &WaiterRace{r}, nil
	}
	fd = res.FD
	r.Recycle()
	return fd, nil, nil
}

// Recycle gives the memory of a decided race back for later races, and
// reports whether it did (a race still running, or one a lookup or the
// NAT64 discovery may still reach, is left to the garbage collector). The
// caller vouches that nothing else holds the race or its Result or Error
// any more (no goroutine in Wait, Cancel or Result); afterwards neither it
// nor its Result may be used.
func (r *WaiterRace) Recycle() bool { return r.r.Recycle() }

// SetOnDone sets the function called once the race is decided, on the
// thread that decides it; it must not block. Only for a race that no other
// goroutine can reach yet (from ConnectNow): if it is decided already, f is
// not called.
func (r *WaiterRace) SetOnDone(f func()) { r.r.SetOnDone(f) }

// Wait plays the race on the calling thread until it is decided (true) or
// deadline passes (false; the zero Time waits for the outcome). Returning
// early loses nothing: the next Wait resumes. Several goroutines may wait;
// one drives and the others wait for it.
func (r *WaiterRace) Wait(deadline time.Time) bool { return r.r.Drive(deadline) }

// Done reports whether the outcome is known.
func (r *WaiterRace) Done() bool { return r.r.Done() }

// Cancel ends the race with cause unless it is decided already; any
// goroutine, any moment, idempotent. A connection that wins concurrently
// may still be the outcome: check Result.
func (r *WaiterRace) Cancel(cause error) { r.r.Cancel(cause) }

// Result is the outcome once Done: the winner (its fd is the caller's), or
// the *Error that explains the failure.
func (r *WaiterRace) Result() (*Result, error) { return r.r.Outcome() }

// LibraryRace is a race driven by the library (HEV2_DRIVE_LIBRARY, the
// default): the shared poller, timers and the resolver's answers step it;
// StartLibrary starts one.
type LibraryRace struct {
	r *netio.LibraryDriven
}

// StartLibrary validates its inputs like Connect, then starts a race that
// holds no goroutine while it waits: it is stepped by the shared poller
// when a socket is ready, by a timer, by the resolver's answers or by
// Cancel. onDone is called exactly once with the outcome, on whichever
// goroutine decided it (possibly inside StartLibrary or Cancel); it must
// not block, since that may be the poller every race shares.
func (o *Options) StartLibrary(host string, port uint16, onDone func(*Result, error)) (*LibraryRace, error) {
	cfg, err := o.raceConfig(host, port)
	if err != nil {
		return nil, err
	}
	return &LibraryRace{netio.StartLibrary(cfg, o.params(&cfg), onDone)}, nil
}

// Cancel ends the race with cause unless it is decided already; any
// goroutine, any moment, idempotent.
func (p *LibraryRace) Cancel(cause error) { p.r.Cancel(cause) }

// Recycle gives the memory of a decided race back for later races, and
// reports whether it did: only a race no goroutine of the library ever
// held (a loopback connect settled as it started; not one that waited on
// the poller, a timer, a lookup or the NAT64 discovery). The caller
// vouches that nothing else holds the race or its Result any more;
// afterwards neither may be used.
func (p *LibraryRace) Recycle() bool { return p.r.Recycle() }

// Look gives the race one look at its sockets without waiting, on the
// calling goroutine, and steps it with what is ready; it reports whether
// the race is decided (onDone has then been called, possibly inside this
// call). A caller about to wait for the outcome calls it first: a connect
// that finished by then (a near one: a LAN's round trip is ~0.1-1 ms) is
// decided here instead of by the shared poller, two thread hand-offs
// later. (A loopback connect is settled as it starts.)
func (p *LibraryRace) Look() bool { return p.r.Look() }
