package netio

import (
	"context"
	"errors"
	"net"
	"net/netip"
	"os"
	"slices"
	"sync"
	"syscall"
	"time"

	"github.com/hev2/hev2/internal/race"
)

// DialConn plays one race with its attempts made through Go's own network
// stack (net.Dialer, the runtime's netpoller): the third driver of the same
// Machine, the one behind the Go API's DialContext. The winner comes back
// as the *net.TCPConn that net.Dialer made, so nothing is wrapped: a
// connect costs what net.Dialer's costs, plus the machine's few hundred
// nanoseconds.
//
// The machine runs on the calling goroutine (so the trace is called
// there); lookups run on goroutines of their own. An attempt runs on the
// calling goroutine itself when nothing else can happen while it connects
// (no lookup in flight, no timer armed, no other attempt: an IP literal or
// a single static address without timeouts); otherwise each attempt is a
// goroutine whose outcome is sent back to the race. Losers are canceled
// through their contexts, and DialConn returns only once every attempt's
// goroutine is gone and every socket but the winner's is closed.
//
// The connection is what net.Dialer would return: TCP_NODELAY on (Go sets
// it on every TCPConn), keep-alive on with Go's default period, or with
// idle time and interval p.Socket.KeepAlive when that is > 0. The race's
// account (a Result whose FD is -1: the connection owns the socket) is
// built only when account is true.
func DialConn(ctx context.Context, cfg race.MachineConfig, p Params, account bool) (*net.TCPConn, *race.Result, error) {
	r := netpollPool.Get().(*netpollerDriven)
	r.p, r.start, r.timerAt, r.account = p, monoNow(), -1, account
	r.attempts = r.attemptsBuf[:0]
	r.queued = r.queuedBuf[:0]
	r.pending = r.pendingBuf[:0]
	r.dialer.KeepAlive = 0 // Go's default: on, 15 s
	if ka := p.Socket.KeepAlive; ka > 0 {
		r.dialer.KeepAliveConfig = net.KeepAliveConfig{Enable: true, Idle: ka, Interval: ka}
	}
	if p.Local.Addr().IsValid() || p.Local.Port() != 0 {
		local := &net.TCPAddr{Port: int(p.Local.Port())}
		if a := p.Local.Addr(); a.IsValid() {
			local.IP = a.Unmap().AsSlice()
			local.Zone = a.Zone()
		}
		r.dialer.LocalAddr = local
	}
	if !cfg.Lone() {
		// Only several addresses are sorted (a method value costs an
		// allocation).
		src := new(sourceCache)
		cfg.Sort = src.sortRFC6724
	}
	r.m = &r.machine
	r.m.Init(cfg)
	conn, res, err := r.run(ctx)
	if err == nil {
		// A failed race is left to the garbage collector: its Error, and
		// the Trace's account of it, live in the machine.
		r.recycle()
	}
	return conn, res, err
}

// netpollPool keeps the races' memory (2 KiB, most of it the machine)
// from one DialConn to the next. A race can always go back when DialConn
// returns: its goroutines (attempts, lookups) were given copies of what
// they need, never the race, and every attempt goroutine is gone by then
// (cleanup); what DialConn returns for a won race (the connection, a
// Result) points to none of its memory. A failed race is not reused: its
// *Error lives in the machine (Machine.failure), and the caller keeps it.
var netpollPool = sync.Pool{New: func() any { return new(netpollerDriven) }}

func (r *netpollerDriven) recycle() {
	*r = netpollerDriven{}
	netpollPool.Put(r)
}

// netpollerDriven drives one Machine with net.Dialer attempts. Everything but
// the lookups' and attempts' goroutines runs on the caller's goroutine.
type netpollerDriven struct {
	// The machine lives in the race; its result is made only when asked
	// for (account): DialContext does not carry one.
	machine race.Machine
	p       Params
	m       *race.Machine
	start   time.Duration // monoNow at the start
	dialer  net.Dialer    // shared by the race's attempts (read only)

	ctx context.Context // DialConn's, while it runs
	waits
	lookupOut [race.NumQueryKinds]bool // a lookup whose answer the race still waits for
	// serviceOut counts the service lookups (HTTPS part) still out.
	serviceOut int
	prefixOut  bool   // the NAT64 discovery's outcome is still awaited
	box        *inbox // lookup answers; made with the first lookup
	results    chan attemptOutcome
	attempts   []npAttempt
	queued     []int // attempts the machine started this turn, not yet dialing
	live       int   // attempt goroutines that have not reported back
	timer      *time.Timer
	timerAt    time.Duration // -1: no timer armed
	pending    []race.Event  // outcomes known on this goroutine
	canceled   bool
	account    bool
	shared     *attemptDialer // the attempt goroutines' copy of the dialer

	// Room for the common case without allocating: one or two attempts,
	// a few events per turn.
	attemptsBuf [2]npAttempt
	queuedBuf   [2]int
	batchBuf    [4]race.Event
	pendingBuf  [2]race.Event
}

type npAttempt struct {
	addr   netip.AddrPort
	cancel context.CancelFunc // nil unless a goroutine dials it
	conn   *net.TCPConn       // the connected socket, until handed over or closed
	closed bool               // the machine closed it: a late conn is closed at once
}

type attemptDialer struct {
	d     net.Dialer
	local netip.AddrPort
}

type attemptOutcome struct {
	id   int
	conn *net.TCPConn
	err  error
}

func (r *netpollerDriven) now() time.Duration { return monoNow() - r.start }

func (r *netpollerDriven) run(ctx context.Context) (*net.TCPConn, *race.Result, error) {
	r.ctx = ctx
	defer r.cleanup()
	acts := r.m.Start(0)
	batch := r.batchBuf[:0]
	for {
		if conn, res, err, done := r.perform(acts); done {
			return conn, res, err
		}
		r.launch(ctx)
		batch = append(batch[:0], r.pending...)
		r.pending = r.pending[:0]
		if len(batch) == 0 {
			var timerC <-chan time.Time
			if r.timer != nil && r.timerAt >= 0 {
				timerC = r.timer.C
			}
			var ctxDone, boxWake <-chan struct{}
			if !r.canceled {
				ctxDone = ctx.Done()
			}
			if r.box != nil {
				boxWake = r.box.wake
			}
			select {
			case <-boxWake:
			case o := <-r.results:
				batch = r.received(batch, o)
			case <-timerC:
				r.timerAt = -1
			case <-ctxDone:
			}
		}
		// Take whatever else is ready, so that things that happened
		// together are one turn.
		for more := true; more && r.live > 0; {
			select {
			case o := <-r.results:
				batch = r.received(batch, o)
			default:
				more = false
			}
		}
		if r.box != nil {
			batch = r.box.takeInto(batch)
			for _, ev := range batch {
				switch ev.Kind {
				case race.EventLookupDone:
					if ev.Lookup > 0 {
						if _, ok := r.services[ev.Lookup]; ok {
							delete(r.services, ev.Lookup)
							r.serviceOut--
						}
						continue
					}
					r.lookupOut[ev.Query.Index()] = false
				case race.EventPrefix64:
					r.prefixOut = false
				}
			}
		}
		if !r.canceled && ctx.Err() != nil {
			// The cancel goes first: the attempts' own failures that it
			// caused (their contexts derive from ctx) are not failures of
			// the network.
			r.canceled = true
			batch = append(batch, race.Event{})
			copy(batch[1:], batch)
			batch[0] = race.Event{Kind: race.EventCancel, Err: context.Cause(ctx)}
		}
		acts = r.m.Step(r.now(), batch...)
	}
}

// received turns an attempt goroutine's outcome into an event for the
// machine; the outcome of an attempt the machine closed meanwhile is
// dropped (its socket closed).
func (r *netpollerDriven) received(batch []race.Event, o attemptOutcome) []race.Event {
	r.live--
	a := &r.attempts[o.id]
	if a.closed {
		if o.conn != nil {
			o.conn.Close()
		}
		return batch
	}
	a.conn = o.conn
	return append(batch, race.Event{Kind: race.EventAttemptDone, Attempt: o.id, Err: o.err})
}

// perform carries out the machine's actions; attempts are queued and
// started by launch once the whole turn is known.
func (r *netpollerDriven) perform(acts []race.Action) (*net.TCPConn, *race.Result, error, bool) {
	a, decided := perform(r, acts)
	switch {
	case !decided:
		return nil, nil, nil, false
	case a.Err != nil:
		return nil, nil, a.Err, true
	}
	w := &r.attempts[a.Attempt]
	conn := w.conn
	w.conn = nil
	var res *race.Result
	if r.account {
		res = new(resultRoom).newResult(r.m, a.Attempt, -1, r.now())
	}
	return conn, res, nil, true
}

// startAttempt queues the attempt: launch starts the turn's attempts
// together, once the whole turn is known.
func (r *netpollerDriven) startAttempt(id int, addr netip.AddrPort) {
	for len(r.attempts) <= id {
		r.attempts = append(r.attempts, npAttempt{})
	}
	r.attempts[id].addr = addr
	r.queued = append(r.queued, id)
}

func (r *netpollerDriven) cancelLookup(q race.QueryKind) {
	r.lookupOut[q.Index()] = false
	r.waits.cancelLookup(q)
}

func (r *netpollerDriven) awaitPrefix64() {
	if r.box == nil {
		r.box = newInbox()
	}
	r.prefixOut = true
	r.prefixCancel = awaitPrefix64(&r.p, r.box.push)
}

func (r *netpollerDriven) cancelPrefix() {
	r.prefixOut = false
	r.waits.cancelPrefix()
}

// launch starts the attempts queued this turn. A lone attempt with nothing
// else to wait for is dialed right here, on the caller's goroutine: no
// goroutine, no hand-off, exactly net.Dialer's own path.
func (r *netpollerDriven) launch(ctx context.Context) {
	if len(r.queued) == 0 {
		return
	}
	if len(r.queued) == 1 && r.quiet() {
		id := r.queued[0]
		r.queued = r.queued[:0]
		conn, err := dialAttempt(ctx, &r.dialer, r.p.Local, r.attempts[id].addr)
		if err != nil && ctx.Err() != nil {
			// The caller gave up while it connected: that is the
			// cancel, not a failure of the attempt. The machine will
			// ask for the attempt to be closed; it is closed already.
			r.canceled = true
			r.pending = append(r.pending, race.Event{Kind: race.EventCancel, Err: context.Cause(ctx)})
			return
		}
		r.attempts[id].conn = conn
		r.pending = append(r.pending, race.Event{Kind: race.EventAttemptDone, Attempt: id, Err: err})
		return
	}
	if r.results == nil {
		r.results = make(chan attemptOutcome, 4)
	}
	if r.shared == nil {
		// The goroutines get a copy of their own, so that the race
		// itself can stay on the caller's stack.
		r.shared = &attemptDialer{r.dialer, r.p.Local}
	}
	for _, id := range r.queued {
		actx, cancel := context.WithCancel(ctx)
		r.attempts[id].cancel = cancel
		r.live++
		addr, results, ad := r.attempts[id].addr, r.results, r.shared
		go func() {
			conn, err := dialAttempt(actx, &ad.d, ad.local, addr)
			results <- attemptOutcome{id: id, conn: conn, err: err}
		}()
	}
	r.queued = r.queued[:0]
}

// quiet reports whether nothing but an attempt could move the race on: no
// lookup answer awaited, no timer, no attempt in flight.
func (r *netpollerDriven) quiet() bool {
	if r.live > 0 || r.timerAt >= 0 || slices.Contains(r.lookupOut[:], true) || r.serviceOut > 0 || r.prefixOut || len(r.pending) > 0 {
		return false
	}
	for i := range r.attempts {
		if r.attempts[i].conn != nil {
			return false
		}
	}
	return true
}

// dialAttempt makes one attempt with net.Dialer (safe for concurrent
// use: the race's attempts share one) and reduces its error to what the
// other drivers report: the errno of the failed system call, or a
// *race.BindError.
func dialAttempt(ctx context.Context, d *net.Dialer, local, addr netip.AddrPort) (*net.TCPConn, error) {
	c, err := d.DialContext(ctx, "tcp", netip.AddrPortFrom(addr.Addr().Unmap(), addr.Port()).String())
	if err != nil {
		return nil, attemptError(err, local)
	}
	return c.(*net.TCPConn), nil
}

func attemptError(err error, local netip.AddrPort) error {
	var se *os.SyscallError
	if errors.As(err, &se) {
		if errno, ok := se.Err.(syscall.Errno); ok {
			if se.Syscall == "bind" {
				return &race.BindError{Local: local, Err: errno}
			}
			return errno
		}
	}
	var errno syscall.Errno
	if errors.As(err, &errno) {
		return errno
	}
	var oe *net.OpError
	if errors.As(err, &oe) && oe.Err != nil {
		return oe.Err
	}
	return err
}

func (r *netpollerDriven) startLookup(q race.QueryKind) {
	if r.box == nil {
		r.box = newInbox()
	}
	lctx, cancel := context.WithCancel(r.ctx)
	i := q.Index()
	r.lookups[i] = cancel
	r.lookupOut[i] = true
	res, host, box := r.p.Resolver, r.m.Host(), r.box
	go func() {
		addrs, err := res.LookupFamily(lctx, host, q.Family())
		box.push(race.Event{Kind: race.EventLookupDone, Query: q, Addrs: addrs, Err: err})
	}()
}

// closeAttempt closes a loser: its connection if it has one, or its dial
// (canceled; the goroutine reports back and its late socket is closed).
func (r *netpollerDriven) startServiceLookup(q race.QueryKind, n uint8) {
	if r.box == nil {
		r.box = newInbox()
	}
	r.serviceOut++
	r.addServiceLookup(n, serviceLookupOnGoroutine(r.p.Resolver, r.m, q, n, r.box.push))
}

func (r *netpollerDriven) cancelServiceLookup(n uint8) {
	if _, ok := r.services[n]; ok {
		r.serviceOut--
	}
	r.waits.cancelServiceLookup(n)
}

func (r *netpollerDriven) closeAttempt(id int) {
	if id >= len(r.attempts) {
		return
	}
	a := &r.attempts[id]
	a.closed = true
	if a.conn != nil {
		a.conn.Close()
		a.conn = nil
	}
	if a.cancel != nil {
		a.cancel()
	}
}

func (r *netpollerDriven) armTimer(at time.Duration) {
	r.timerAt = at
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

// cleanup cancels what is left and waits for every attempt goroutine, so
// that no socket of the race outlives DialConn but the winner's.
func (r *netpollerDriven) cleanup() {
	for id := range r.attempts {
		r.closeAttempt(id)
	}
	r.cancelAll()
	if r.timer != nil {
		r.timer.Stop()
	}
	for r.live > 0 {
		o := <-r.results
		r.live--
		if o.conn != nil {
			o.conn.Close()
		}
		if c := r.attempts[o.id].cancel; c != nil {
			c()
		}
	}
	for i := range r.attempts {
		if c := r.attempts[i].cancel; c != nil {
			c()
		}
	}
}
