package netio

import (
	"net/netip"
	"sync"
	"sync/atomic"
	"time"

	"golang.org/x/sys/unix"

	"github.com/hev2/hev2/internal/race"
	"github.com/hev2/hev2/internal/resolve"
)

// WaiterDriven is a race played on the thread of whoever waits for it: Drive
// watches the race's attempt sockets and a wake fd with ppoll(2) on the
// calling thread and steps the machine there. No goroutine, no shared
// poller, no hand-off between threads: on a healthy network a connect costs
// what a plain non-blocking connect and poll cost.
//
// Lookups still run on goroutines of their own (a resolver may block for
// seconds); their answers, like Cancel, reach the driving thread through
// its wake fd. A race makes progress only while some thread is inside
// Drive; one thread drives at a time and other callers of Drive just wait
// for the outcome (taking over if the driver leaves first).
//
// Only the driving thread touches the race's sockets: Cancel from another
// thread marks the race and wakes the driver, which closes them. When no
// thread is driving, Cancel drives the cancellation itself.
type WaiterDriven struct {
	raceRoom
	params Params
	m      *race.Machine // &machine
	start  time.Duration // monoNow at StartWaiter

	// Shared with other threads (Cancel, lookup goroutines), under mu.
	mu       sync.Mutex
	wakeFD   int          // the driving thread's wake fd while it polls, else -1
	posted   []race.Event // lookup answers not yet stepped
	canceled error        // the cause given to Cancel, once
	doneCh   chan struct{}

	// The driver's own: touched only while holding drive.
	drive sync.Mutex
	fds   []int // per attempt; -1 once closed or handed over
	waits
	timerAt time.Duration // -1: no timer armed
	// stepAt is the clock reading the machine was last stepped with: a
	// winner handed over in that step won then (no second reading).
	stepAt time.Duration
	// first is the attempt made before the race (StartWaiterWith), adopted by
	// the machine's first StartAttempt while adopting is set.
	first      FirstAttempt
	adopting   bool
	cancelSeen bool         // the cancel posted under mu was taken in
	pending    []race.Event // outcomes found while performing actions
	batch      []race.Event
	pollFDs    []unix.PollFd // the wake fd (if any), then the open attempts' sockets
	sources    sourceCache
	// gai is set while the system resolver has lookups of this race in
	// flight: its threads then wake the driver directly (resolve.Waker).
	gai *resolve.Waker

	finished atomic.Bool
	// escaped: the race handed itself to another goroutine (a lookup's
	// delivery, the NAT64 discovery), which may still reach it after it
	// is decided; such a race is never recycled. (Beside finished: the
	// bools share a word, and a pending race's size class is part of its
	// cost.)
	escaped bool
	res     *race.Result
	err     error
	onDone  func()

	// Room for the slices above in a race of one or two attempts.
	fdBuf      [2]int
	pollFDBuf  [3]unix.PollFd
	pendingBuf [2]race.Event
	batchBuf   [2]race.Event
}

// StartWaiter begins a race on the calling thread: its first actions (the first
// connect, or the lookups) are performed before StartWaiter returns; the machine
// takes their outcome at the first Drive. onDone, if not nil, is called
// once on the thread that decides the race, after the outcome is
// published; it must not block.
func StartWaiter(cfg race.MachineConfig, p Params, onDone func()) *WaiterDriven {
	return start(cfg, p, onDone, nil)
}

// StartWaiterWith is StartWaiter for a race whose first attempt was made already
// (TryLone): the machine's first attempt adopts first instead of
// connecting, and the race counts its time from first's start.
func StartWaiterWith(cfg race.MachineConfig, p Params, first *FirstAttempt, onDone func()) *WaiterDriven {
	return start(cfg, p, onDone, first)
}

func start(cfg race.MachineConfig, p Params, onDone func(), first *FirstAttempt) *WaiterDriven {
	r := waiterPool.Get().(*WaiterDriven)
	r.params, r.start, r.wakeFD, r.timerAt, r.onDone = p, monoNow(), -1, -1, onDone
	if first != nil {
		r.first, r.start = *first, first.Start
		r.adopting = true
	}
	r.fds = r.fdBuf[:0]
	r.pollFDs = r.pollFDBuf[:0]
	r.pending = r.pendingBuf[:0]
	r.batch = r.batchBuf[:0]
	if !cfg.Lone() {
		// Only several addresses are sorted (a method value costs an
		// allocation).
		cfg.Sort = r.sources.sortRFC6724
	}
	r.m = &r.machine
	r.m.Init(cfg)
	r.drive.Lock()
	r.perform(r.m.Start(0))
	r.drive.Unlock()
	if r.adopting {
		// The machine of a race of one address starts its attempt at
		// once: an attempt it did not take is a bug, not a leak.
		r.first.Close()
		panic("netio: the race did not adopt the attempt made before it")
	}
	return r
}

// waiterPool keeps the memory of races that ended without anyone else
// holding them (Recycle): a connect then reuses a warm 2.5 KiB instead of
// having the allocator zero fresh memory, which after an idle spell has
// been given back to the kernel and faults in page by page.
var waiterPool = sync.Pool{New: func() any { return new(WaiterDriven) }}

// Recycle gives the memory of a decided race back for a later race, and
// reports whether it did. The caller vouches that nothing of its own still
// holds r or its outcome (the Result points into r); r itself refuses if
// it was shared with another goroutine (a lookup, the NAT64 discovery) or
// waited for by a second thread, or is still running. The caller must not
// touch r, nor its Result, afterwards.
func (r *WaiterDriven) Recycle() bool {
	if !r.finished.Load() || r.escaped || r.doneCh != nil {
		return false
	}
	*r = WaiterDriven{}
	waiterPool.Put(r)
	return true
}

// SetOnDone sets the function called once the race is decided, on the
// thread that decides it. Only for a race no other goroutine can reach yet
// (StartWaiter with a nil onDone, not yet shared); if the race is decided
// already, f is not called: the caller looks at Done.
func (r *WaiterDriven) SetOnDone(f func()) { r.onDone = f }

// Done reports whether the outcome is known.
func (r *WaiterDriven) Done() bool { return r.finished.Load() }

// Outcome is the race's result or error; valid once Done.
func (r *WaiterDriven) Outcome() (*race.Result, error) { return r.res, r.err }

// Cancel ends the race with cause (any thread, idempotent; a no-op once
// the race is decided).
func (r *WaiterDriven) Cancel(cause error) {
	r.mu.Lock()
	if r.canceled == nil && !r.finished.Load() {
		r.canceled = cause
		r.wakeLocked()
	}
	r.mu.Unlock()
	r.stepIfIdle()
}

// post hands an event from another goroutine to the driver.
func (r *WaiterDriven) post(ev race.Event) {
	r.mu.Lock()
	r.posted = append(r.posted, ev)
	r.wakeLocked()
	r.mu.Unlock()
}

// wakeLocked makes the driving thread's ppoll return. The fd is written
// under mu, and the driver withdraws it under mu before giving it back to
// the pool, so a write never lands on an fd this race no longer owns.
func (r *WaiterDriven) wakeLocked() {
	if r.wakeFD >= 0 {
		signalEventfd(r.wakeFD)
	}
}

// stepIfIdle processes a cancellation when no thread is driving: the
// caller asked for an outcome now, not at the next Drive.
func (r *WaiterDriven) stepIfIdle() {
	if r.finished.Load() || !r.drive.TryLock() {
		return
	}
	if !r.finished.Load() {
		r.mu.Lock()
		cancel := r.canceled != nil && !r.cancelSeen
		r.mu.Unlock()
		if cancel {
			r.stepShared()
		}
	}
	r.drive.Unlock()
}

// Drive plays the race on the calling thread until it is decided (true) or
// until deadline passes (false; the zero Time means no deadline). Nothing
// is lost when it returns early: the next Drive resumes where it stopped.
// A signal (EINTR) is retried within the deadline.
func (r *WaiterDriven) Drive(deadline time.Time) bool {
	for !r.finished.Load() {
		if r.drive.TryLock() {
			r.driveLocked(deadline)
			r.drive.Unlock()
			// A Cancel that found the driver busy, just as it left,
			// is handled here: one of the two sides always sees it.
			r.stepIfIdle()
			break
		}
		if !r.waitForDriver(deadline) {
			break
		}
	}
	return r.finished.Load()
}

// Look is Drive with a deadline of now: one look at the race without
// blocking (a connect that finished by now is decided), unless another
// thread drives it. It reads no clock for the deadline.
func (r *WaiterDriven) Look() bool {
	if !r.finished.Load() && r.drive.TryLock() {
		r.driveFor(0)
		r.drive.Unlock()
		r.stepIfIdle()
	}
	return r.finished.Load()
}

// waitForDriver waits while another thread drives: until the outcome,
// the deadline (false), or a moment later to see whether the driver left
// (this path is for several waiters on one handle, not the common case).
func (r *WaiterDriven) waitForDriver(deadline time.Time) bool {
	r.mu.Lock()
	if r.doneCh == nil {
		r.doneCh = make(chan struct{})
		if r.finished.Load() {
			close(r.doneCh)
		}
	}
	ch := r.doneCh
	r.mu.Unlock()
	wait := time.Millisecond
	if !deadline.IsZero() {
		left := time.Until(deadline)
		if left <= 0 {
			return false
		}
		wait = min(wait, left)
	}
	t := time.NewTimer(wait)
	defer t.Stop()
	select {
	case <-ch:
	case <-t.C:
	}
	return true
}

func (r *WaiterDriven) driveLocked(deadline time.Time) {
	limit := time.Duration(-1)
	if !deadline.IsZero() {
		limit = monoOf(deadline) - r.start
	}
	r.driveFor(limit)
}

// driveFor plays the race until it is decided or until limit (time since
// the start; -1: none) has passed.
func (r *WaiterDriven) driveFor(limit time.Duration) {
	wake := -1
	// Before taking a wake fd, one look at the attempt sockets without
	// waiting: a loopback connect is done by now (the kernel completes it
	// inside connect(2)), and the race ends without the wake fd's
	// bookkeeping. A zero timeout (deadline now) gets this look too: "what
	// progress is possible without blocking". A look that found nothing
	// spares the next poll its own first look (justLooked).
	looked, justLooked := false, false
	defer func() {
		if wake >= 0 {
			r.gai.Set(-1)
			r.mu.Lock()
			r.wakeFD = -1
			r.mu.Unlock()
			wakePool.put(wake)
		}
	}()
	for !r.finished.Load() {
		if r.stepShared() {
			justLooked = false
			continue
		}
		if !looked {
			// Before the clock is read: a socket found ready here is
			// stepped with the clock read once, in stepShared. A timer
			// that fell due meanwhile is stepped after it, so a connect
			// that finished by now wins even at its deadline.
			looked = true
			if r.pollNow() {
				continue
			}
			justLooked = true
		}
		now := r.now()
		if r.timerAt >= 0 && now >= r.timerAt {
			r.stepAt = now
			r.perform(r.m.Step(now))
			justLooked = false
			continue
		}
		if limit >= 0 && now >= limit {
			return
		}
		if wake < 0 {
			fd, err := wakePool.get()
			if err != nil {
				// No fd for the wake-up: still drive, in short slices
				// so that a cancel or a lookup is seen soon.
				fd = -1
			}
			wake = fd
			r.mu.Lock()
			r.wakeFD = wake
			r.mu.Unlock()
			if r.gai != nil {
				r.gai.Set(wake)
				resolve.HarvestLookups() // answers that came before the waker was set
			}
			continue // an event may have been posted before wakeFD was set
		}
		r.poll(now, limit, wake, !justLooked)
		justLooked = false
	}
}

// stepShared takes what other threads posted (lookup answers, a cancel)
// and what actions produced, and steps the machine with it; it reports
// whether there was anything. The clock is read only when there is.
func (r *WaiterDriven) stepShared() bool {
	// The two buffers trade places instead of copying: what the actions
	// of this step produce goes to the other one.
	batch := r.pending
	r.pending = r.batch[:0]
	r.mu.Lock()
	batch = append(batch, r.posted...)
	r.posted = r.posted[:0]
	if r.canceled != nil && !r.cancelSeen {
		r.cancelSeen = true
		batch = append(batch, race.Event{Kind: race.EventCancel, Err: r.canceled})
	}
	r.mu.Unlock()
	r.batch = batch
	if len(batch) == 0 {
		return false
	}
	now := r.now()
	r.stepAt = now
	r.perform(r.m.Step(now, batch...))
	return true
}

// poll waits for an attempt's socket, the wake fd, the machine's timer or
// the caller's limit, whichever comes first, and turns ready sockets into
// outcomes (a getsockopt only for one in error). lookFirst: a raw
// zero-timeout poll before the blocking one (false right after pollNow).
func (r *WaiterDriven) poll(now, limit time.Duration, wake int, lookFirst bool) {
	r.pollSet(wake)
	until := r.timerAt
	if limit >= 0 && (until < 0 || limit < until) {
		until = limit
	}
	if wake < 0 && (until < 0 || until > now+10*time.Millisecond) {
		until = now + 10*time.Millisecond
	}
	// First without waiting, as a raw system call: on a fast path (a
	// loopback connect) the socket is ready by now, and this costs no
	// scheduler work. Only if nothing is ready does the thread block.
	var n int
	var err error
	if lookFirst {
		n, err = rawPollNow(r.pollFDs)
	}
	if err == nil && n == 0 && (until < 0 || until > now) {
		var ts *unix.Timespec
		if until >= 0 {
			t := unix.NsecToTimespec(int64(until - now))
			ts = &t
		}
		n, err = unix.Ppoll(r.pollFDs, ts, nil)
	}
	if err != nil || n == 0 {
		return // EINTR or timeout: the loop looks at the clock again
	}
	r.takeReady(wake)
}

// pollNow looks at the attempt sockets without waiting (no wake fd) and
// reports whether any was ready.
func (r *WaiterDriven) pollNow() bool {
	r.pollSet(-1)
	switch len(r.pollFDs) {
	case 0:
		return false
	case 1:
		// One socket (a lone address: the common case) is asked for its
		// peer, which costs less than a poll; only one not connected
		// (still connecting, or failed) goes on to the poll.
		if fd := int(r.pollFDs[0].Fd); rawConnected(fd) {
			r.pending = append(r.pending, race.Event{Kind: race.EventAttemptDone, Attempt: r.attemptOf(fd)})
			return true
		}
	}
	if n, err := rawPollNow(r.pollFDs); err != nil || n == 0 {
		return false
	}
	r.takeReady(-1)
	return true
}

// pollSet makes the poll set: the wake fd (if >= 0), then every attempt
// socket still open.
func (r *WaiterDriven) pollSet(wake int) {
	r.pollFDs = r.pollFDs[:0]
	if wake >= 0 {
		r.pollFDs = append(r.pollFDs, unix.PollFd{Fd: int32(wake), Events: unix.POLLIN})
	}
	for _, fd := range r.fds {
		if fd >= 0 {
			r.pollFDs = append(r.pollFDs, unix.PollFd{Fd: int32(fd), Events: unix.POLLOUT})
		}
	}
}

// attemptOf is the attempt whose open socket is fd (-1 if none): a search
// of the race's few sockets, instead of an id kept beside each poll entry.
func (r *WaiterDriven) attemptOf(fd int) int {
	for id, open := range r.fds {
		if open == fd {
			return id
		}
	}
	return -1
}

// takeReady turns what the last poll found into outcomes: a wake-up is
// drained, a ready socket becomes its attempt's outcome.
func (r *WaiterDriven) takeReady(wake int) {
	for _, pfd := range r.pollFDs {
		if pfd.Revents == 0 {
			continue
		}
		if int(pfd.Fd) == wake {
			drainEventfd(wake)
			if r.gai != nil {
				resolve.HarvestLookups()
			}
			continue
		}
		id := r.attemptOf(int(pfd.Fd))
		r.pending = append(r.pending, race.Event{Kind: race.EventAttemptDone, Attempt: id, Err: readyResult(r.fds[id], pfd.Revents)})
	}
}

func (r *WaiterDriven) now() time.Duration { return monoNow() - r.start }

// perform carries out the machine's actions on the driving thread.
func (r *WaiterDriven) perform(acts []race.Action) {
	a, decided := perform(r, acts)
	switch {
	case !decided:
	case a.Err != nil:
		r.finish(nil, a.Err)
	default:
		r.finish(r.handOver(a.Attempt))
	}
}

// armTimer only notes the deadline: the driving thread's poll waits until
// it.
func (r *WaiterDriven) armTimer(at time.Duration) { r.timerAt = at }

func (r *WaiterDriven) awaitPrefix64() {
	r.escaped = true // the discovery's delivery holds r
	r.prefixCancel = awaitPrefix64(&r.params, r.post)
}

func (r *WaiterDriven) startLookup(q race.QueryKind) {
	r.escaped = true // the lookup's delivery holds r
	if sys, ok := r.params.Resolver.(*resolve.SystemResolver); ok {
		// No goroutine: the getaddrinfo thread wakes this race's
		// driver, which delivers the answer itself.
		if r.gai == nil {
			r.gai = resolve.NewWaker()
		}
		r.lookups[q.Index()] = sys.LookupFamilyAsync(r.m.Host(), q.Family(), r.gai, func(addrs []netip.Addr, err error) {
			r.post(race.Event{Kind: race.EventLookupDone, Query: q, Addrs: addrs, Err: err})
		})
		return
	}
	r.lookups[q.Index()] = lookupOnGoroutine(r.params.Resolver, r.m.Host(), q, r.post)
}

func (r *WaiterDriven) startServiceLookup(q race.QueryKind, n uint8) {
	r.escaped = true // the lookup's delivery holds r
	r.addServiceLookup(n, serviceLookupOnGoroutine(r.params.Resolver, r.m, q, n, r.post))
}

func (r *WaiterDriven) startAttempt(id int, addr netip.AddrPort) {
	for len(r.fds) <= id {
		r.fds = append(r.fds, -1)
	}
	var fd int
	var connected bool
	var err error
	if r.adopting {
		if id != 0 || addr != r.first.Addr {
			r.first.Close()
			panic("netio: the race's first attempt is not the one made before it")
		}
		r.adopting = false
		fd, connected, err = r.first.FD, r.first.Connected, r.first.Err
	} else {
		fd, connected, err = startConnect(addr, r.params.Local)
	}
	switch {
	case err != nil:
		r.pending = append(r.pending, race.Event{Kind: race.EventAttemptDone, Attempt: id, Err: err})
	case connected:
		r.fds[id] = fd
		r.pending = append(r.pending, race.Event{Kind: race.EventAttemptDone, Attempt: id})
	default:
		r.fds[id] = fd
	}
}

func (r *WaiterDriven) closeAttempt(id int) {
	if id < len(r.fds) && r.fds[id] >= 0 {
		closeFD(r.fds[id])
		r.fds[id] = -1
	}
}

// handOver gives the winner to the caller: from here on hev2 never touches
// the fd again.
func (r *WaiterDriven) handOver(id int) (*race.Result, error) {
	fd := r.fds[id]
	r.fds[id] = -1
	if err := applySocketOptions(fd, &r.params.Socket); err != nil {
		closeFD(fd)
		return nil, err
	}
	return r.newResult(id, fd, r.stepAt), nil
}

// finish publishes the outcome; the machine has already asked for every
// other socket to be closed and every lookup to be canceled.
func (r *WaiterDriven) finish(res *race.Result, err error) {
	for id := range r.fds {
		r.closeAttempt(id)
	}
	r.cancelAll()
	r.gai.Close()
	r.gai = nil
	r.res, r.err = res, err
	r.mu.Lock()
	r.finished.Store(true)
	if r.doneCh != nil {
		close(r.doneCh)
	}
	r.mu.Unlock()
	if r.onDone != nil {
		r.onDone()
	}
}
