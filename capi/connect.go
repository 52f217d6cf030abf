package main

/*
#include "internal.h"
*/
import "C"

import (
	"context"
	"runtime"
	"time"

	"golang.org/x/sys/unix"

	"github.com/hev2/hev2/core"
	"github.com/hev2/hev2/internal/engine"
)

//export hev2go_connect
func hev2go_connect(host *C.char, hostLen C.size_t, port *C.char, o *C.hev2_options, out *C.hev2_conn) (rc C.int) {
	defer guard(&rc)
	var req request
	if rc := req.convert(host, hostLen, port, o); rc != C.HEV2_OK {
		return rc
	}
	return req.conn().begin(out)
}

// request is what hev2_connect is given, converted and checked. It lives
// on the caller's stack: a connect that needs no handle never allocates
// one (hev2_connect_wait).
type request struct {
	host string
	port uint16
	opts connOptions
}

// convert fills req from the caller's arguments and counts the connect as
// running; on a refusal nothing is counted.
func (req *request) convert(host *C.char, hostLen C.size_t, port *C.char, o *C.hev2_options) C.int {
	// Before anything that could make Go create its runtime poller (a
	// timer, a pollable fd): with no fd free that would abort the host.
	if err := engine.Init(); err != nil {
		return refuseErrno(statusSystem, causeErrno(err), "cannot make the library's permanent fds (Go runtime poller, epoll)")
	}
	h, err := convertHost(host, hostLen)
	if err != nil {
		return refuseErr(err)
	}
	if port == nil {
		return refuse(statusPort, "port is NULL")
	}
	p, err := engine.ParsePort(cView(port, 64))
	if err != nil {
		return refuseErr(err)
	}
	req.host, req.port = h, p
	if err := convertOptionsInto(o, &req.opts); err != nil {
		return refuseErr(err)
	}
	if !reserveSlot() {
		return refuse(statusCapacity, "over capacity: %d handles running, the cap set by hev2_set_max_handles", maxRunning.Load())
	}
	return C.HEV2_OK
}

// conn is the handle that req becomes (not yet started nor published).
// Its start only stands in for an outcome's elapsed time when the outcome
// has none (decided before any I/O): a connect won at its first look
// (hev2_connect_wait) never becomes a handle and never reads the clock
// here.
func (req *request) conn() *conn {
	return &conn{host: req.host, port: req.port, opts: req.opts, start: time.Now(), efd: -1}
}

// begin starts c's race and makes it a handle, its id at *out.
func (c *conn) begin(out *C.hev2_conn) C.int {
	c.readyToPublish() // before the race: it may end inside Start
	co := &c.opts
	if co.recordEvents {
		co.dialer.Trace = c.record
	}
	// Start and StartLibrary check the host, the port and the Dialer
	// (core's rules, the only ones): a refusal there is this call's
	// error, and no handle exists.
	var err error
	if co.waiterDriven {
		// The first connect (or the lookups) starts here, on the
		// caller's thread; the machine steps inside hev2_wait.
		c.waiterRace, err = co.dialer.StartWaiter(c.host, c.port, c.waiterDone)
	} else {
		// No goroutine per handle: the race is stepped by the shared
		// poller, its timers and its lookups' answers (engine.LibraryRace).
		c.gone = make(chan struct{})
		c.libraryRace, err = co.dialer.StartLibrary(c.host, c.port, c.libraryDone)
	}
	return c.publishHandle(err, out)
}

// adopt makes c a handle, its id at *out, around a race that ConnectNow
// started and did not win (race is nil when err says why none started).
func (c *conn) adopt(race *engine.WaiterRace, err error, out *C.hev2_conn) C.int {
	c.readyToPublish()
	if race != nil {
		c.waiterRace = race
		race.SetOnDone(c.waiterDone)
		if race.Done() {
			c.waiterDone()
		}
	}
	return c.publishHandle(err, out)
}

// readyToPublish gives c what publish and notify use: it comes before the
// race can end.
func (c *conn) readyToPublish() {
	c.id = lastID.Add(1)
	c.done = make(chan struct{})
	if c.notifies() {
		c.published = make(chan struct{})
	}
}

// publishHandle makes c, whose race has started (err: Start's or
// StartLibrary's), a handle whose id is at *out; or refuses the connect if
// err says its input was bad.
func (c *conn) publishHandle(err error, out *C.hev2_conn) C.int {
	if isInputError(err) {
		running.Add(-1)
		return refuseErr(err)
	}
	created.Add(1)
	insert(c)
	*out = C.hev2_conn(c.id)
	// Only now may the callback fire: the caller has its id.
	if c.published != nil {
		close(c.published)
	}
	if err != nil {
		// An outcome decided before any I/O (a static entry with no
		// address of the wanted family), as Connect would report it.
		c.publish(nil, err)
		if c.notifies() {
			queueNotify(c)
		}
	}
	return C.HEV2_OK
}

// cancelRace ends the handle's race unless it is decided already.
func (c *conn) cancelRace() {
	switch {
	case c.waiterRace != nil:
		c.waiterRace.Cancel(context.Canceled)
	case c.libraryRace != nil:
		c.libraryRace.Cancel(context.Canceled)
	}
}

// unknownHandle refuses an id that reaches no live handle.
func unknownHandle(id C.hev2_conn) C.int {
	if id == 0 {
		return refuse(statusHandle, "handle 0 is never valid")
	}
	return refuse(statusHandle, "handle %d unknown (never issued, or released)", uint64(id))
}

func (c *conn) record(ev core.TraceEvent) {
	c.mu.Lock()
	c.events = append(c.events, ev)
	c.mu.Unlock()
}

// libraryDone is a library-driven race's end, on the goroutine that decided
// it (often the shared poller's): the outcome is published there, and the
// callback runs on a goroutine of its own, so that a slow callback never
// holds up other races.
func (c *conn) libraryDone(res *core.Result, err error) {
	c.publish(res, err)
	c.announce()
}

// waiterDone is a waiter-driven race's end, on the thread that decided it
// (inside hev2_wait, or hev2_cancel/hev2_release): the outcome is published
// there, but callbacks run on a library goroutine, never on the caller's
// stack.
func (c *conn) waiterDone() {
	c.publish(c.waiterRace.Result())
	c.announce()
}

// announce fires the handle's callback and job, if it has any, once its
// outcome is published. A job that is not HEV2_JOB_DIRECT, on a handle
// with no callback, is triggered right here, by whichever thread decided
// the race: its trigger runs no code of the host's (an atomic flag and, on
// the first trigger, an eventfd write), so it needs no library thread, and
// a cancel then costs no hand-off to one (a cross-thread wake-up is the
// dearest part of a cancel). Everything else
// goes to the notifier. So does a
// handle whose id hev2_connect has not returned yet: nothing may fire
// before the caller holds it.
func (c *conn) announce() {
	if !c.notifies() {
		return
	}
	if c.opts.doneFn == 0 && !c.opts.jobDirect && c.idReturned() {
		C.hev2_job_trigger(c.opts.job)
		running.Add(-1)
		return
	}
	queueNotify(c)
}

// idReturned reports whether hev2_connect has handed the id out.
func (c *conn) idReturned() bool {
	select {
	case <-c.published:
		return true
	default:
		return false
	}
}

// publish records the outcome and wakes whoever waits on the handle.
func (c *conn) publish(res *core.Result, err error) {
	c.mu.Lock()
	if res != nil && (c.canceled || c.released) {
		// A cancel that raced the win: the caller said it no longer wants
		// the connection, so it is closed here and never handed over.
		unix.Close(res.FD)
		res = nil
	}
	c.res, c.err = res, err
	c.out = outcomeOf(err, c.canceled && res == nil)
	switch {
	case res != nil:
		c.elapsed = res.Elapsed
	case err != nil:
		c.elapsed = elapsedOf(err, time.Since(c.start))
	}
	c.finished = true
	close(c.done)
	if c.efd >= 0 {
		C.hev2c_eventfd_signal(C.int(c.efd))
	}
	c.mu.Unlock()
	if !c.notifies() {
		running.Add(-1)
	}
}

// notifies reports whether the handle has a callback or a job: it then
// counts as running until they have fired, so that a host that waits for
// handles_running to drain also waits for its callbacks.
func (c *conn) notifies() bool { return c.opts.notifies() }

// notify fires the completion callback and the job, once the caller holds
// the handle's id, on a goroutine of its own (never the caller's stack,
// never the poller's).
func (c *conn) notify() {
	<-c.published
	if c.opts.doneFn != 0 {
		callbacksFired.Add(1)
		C.hev2c_call_done_u(C.uintptr_t(c.opts.doneFn), C.hev2_conn(c.id), C.int(c.out.status), C.uintptr_t(c.opts.doneData))
	}
	if c.opts.job != 0 {
		C.hev2_job_trigger(c.opts.job)
	}
	running.Add(-1)
}

func elapsedOf(err error, fallback time.Duration) time.Duration {
	if ce, ok := err.(*core.Error); ok && ce.Elapsed > 0 {
		return ce.Elapsed
	}
	return fallback
}

//export hev2go_wait
func hev2go_wait(id C.hev2_conn, timeoutMS C.int) (rc C.int) {
	defer guard(&rc)
	if timeoutMS < -1 || int64(timeoutMS) > C.HEV2_MAX_TIMEOUT_MS {
		return refuse(statusInval, "timeout_ms %d out of range [-1, %d]", int(timeoutMS), C.HEV2_MAX_TIMEOUT_MS)
	}
	c := lookup(id)
	if c == nil {
		return unknownHandle(id)
	}
	defer c.unref()
	return c.wait(id, timeoutMS)
}

// wait blocks until c is done or timeoutMS elapses (hev2_wait's rules).
func (c *conn) wait(id C.hev2_conn, timeoutMS C.int) C.int {
	if c.waiterRace != nil {
		return c.waitDriving(id, timeoutMS)
	}
	if c.libraryRace != nil && timeoutMS != 0 {
		// Before blocking: a connect that has finished is decided on
		// this thread (engine.LibraryRace.Look), not two hand-offs later. Not
		// for a zero timeout: a host may check many handles that way in
		// every turn of its loop, and a library thread drives them.
		c.libraryRace.Look()
	}
	var expired <-chan time.Time
	switch {
	case timeoutMS == 0:
		select {
		case <-c.done:
			return C.HEV2_OK
		default:
			return C.HEV2_EAGAIN
		}
	case timeoutMS > 0:
		t := time.NewTimer(time.Duration(timeoutMS) * time.Millisecond)
		defer t.Stop()
		expired = t.C
	}
	select {
	case <-c.done:
		return C.HEV2_OK
	case <-c.gone:
		return refuse(statusHandle, "handle %d was released while waiting", uint64(id))
	case <-expired:
		return C.HEV2_EAGAIN
	}
}

// waitDriving plays a waiter-driven race on the calling thread until it is
// decided or the timeout elapses.
func (c *conn) waitDriving(id C.hev2_conn, timeoutMS C.int) C.int {
	var deadline time.Time
	switch {
	case timeoutMS == 0:
		deadline = time.Now() // what progress is possible without blocking
	case timeoutMS > 0:
		deadline = time.Now().Add(time.Duration(timeoutMS) * time.Millisecond)
	}
	done := c.waiterRace.Wait(deadline)
	c.mu.Lock()
	released := c.released
	c.mu.Unlock()
	if released {
		return refuse(statusHandle, "handle %d was released while waiting", uint64(id))
	}
	if !done {
		return C.HEV2_EAGAIN
	}
	// The race is decided; its outcome is published by waiterDone on the
	// deciding thread, which may be another waiter's.
	<-c.done
	return C.HEV2_OK
}

//export hev2go_connect_wait
func hev2go_connect_wait(host *C.char, hostLen C.size_t, port *C.char, o *C.hev2_options, timeoutMS C.int, out *C.hev2_conn, fd *C.int) (rc C.int) {
	defer guard(&rc)
	*fd = -1
	if timeoutMS < -1 || int64(timeoutMS) > C.HEV2_MAX_TIMEOUT_MS {
		return refuse(statusInval, "timeout_ms %d out of range [-1, %d]", int(timeoutMS), C.HEV2_MAX_TIMEOUT_MS)
	}
	var req request
	if rc := req.convert(host, hostLen, port, o); rc != C.HEV2_OK {
		return rc
	}
	// The shim has set drive = HEV2_DRIVE_WAITER: the race is this
	// thread's. With nothing that needs the handle afterwards (callback,
	// job, recorded events), it looks once before it has a handle: a
	// connect decided then (a loopback or LAN one, the common case) is
	// done without one, and its race's memory serves the next connect.
	// Nobody else could reach it meanwhile: the call has not blocked.
	now := req.opts.waiterDriven && !req.opts.notifies() && !req.opts.recordEvents
	var race *engine.WaiterRace
	var err error
	if now {
		var winner int
		if winner, race, err = req.opts.dialer.ConnectNow(req.host, req.port); winner >= 0 {
			running.Add(-1)
			created.Add(1) // a handle in all but its id, as before
			*out, *fd = 0, C.int(winner)
			return C.HEV2_OK
		}
	}
	c := req.conn()
	c.refs.Add(1) // this call's, until it returns: see unref
	defer c.unref()
	if now {
		rc = c.adopt(race, err, out) // undecided, or failed
	} else {
		rc = c.begin(out)
	}
	// *out is published here, before the wait: another thread can cancel.
	if rc != C.HEV2_OK {
		return rc
	}
	id := *out
	if !live(id) {
		return unknownHandle(id) // released by another thread already
	}
	if rc := c.wait(id, timeoutMS); rc != C.HEV2_OK {
		return rc
	}
	c.mu.Lock()
	won := c.res != nil && !c.released
	if won {
		*fd = C.int(c.res.FD)
		c.fdTaken = true
	}
	status := c.out.status
	c.mu.Unlock()
	if !won {
		// The handle stays the caller's, for hev2_result and friends.
		return refuse(status, "%s", c.errmsg())
	}
	*out = 0
	hev2go_release(id)
	return C.HEV2_OK
}

//export hev2go_fd
func hev2go_fd(id C.hev2_conn) (rc C.int) {
	defer guard(&rc)
	c := lookup(id)
	if c == nil {
		return unknownHandle(id)
	}
	defer c.unref()
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.released {
		return unknownHandle(id)
	}
	if c.efd < 0 {
		fd, err := C.hev2c_eventfd_new()
		if fd < 0 {
			return refuseErrno(statusSystem, causeErrno(err), "eventfd")
		}
		c.efd = int(fd)
		if c.finished {
			C.hev2c_eventfd_signal(fd)
		}
	}
	return C.int(c.efd)
}

//export hev2go_cancel
func hev2go_cancel(id C.hev2_conn) (rc C.int) {
	defer guard(&rc)
	c := lookup(id)
	if c == nil {
		return unknownHandle(id)
	}
	defer c.unref()
	c.mu.Lock()
	running := !c.finished
	if running {
		c.canceled = true
	}
	c.mu.Unlock()
	// Outside c.mu: a waiter-driven race with no driver is settled by
	// this very call, and its outcome is published under c.mu.
	if running {
		c.cancelRace()
	}
	return C.HEV2_OK
}

//export hev2go_release
func hev2go_release(id C.hev2_conn) (rc C.int) {
	defer guard(&rc)
	if id == 0 {
		return C.HEV2_OK
	}
	c := remove(id)
	if c == nil {
		return unknownHandle(id)
	}
	defer c.unref() // the table's reference
	c.mu.Lock()
	c.released = true
	if c.gone != nil {
		close(c.gone)
	}
	running := !c.finished
	if running {
		c.canceled = true
	} else if c.res != nil && !c.fdTaken {
		unix.Close(c.res.FD)
	}
	if c.efd >= 0 {
		unix.Close(c.efd)
		c.efd = -1
	}
	c.mu.Unlock()
	if running {
		c.cancelRace() // outside c.mu, as in hev2go_cancel
	}
	return C.HEV2_OK
}

//export hev2go_init
func hev2go_init() (rc C.int) {
	defer guard(&rc)
	if err := engine.Init(); err != nil {
		return refuseErrno(statusSystem, causeErrno(err), "cannot make the library's permanent fds (Go runtime poller, epoll)")
	}
	return C.HEV2_OK
}

// engine.Init is not run while the library loads: it would run on a
// background thread of the Go runtime, and its placeholder fds could make
// the host's own open() fail at the same moment when the host is near its
// fd limit. hev2_init and hev2_connect run it on the caller's thread.

//export hev2go_set_max_handles
func hev2go_set_max_handles(n C.int) (rc C.int) {
	defer guard(&rc)
	if n < 1 || n > 1000000 {
		return refuse(statusInval, "max %d out of range [1, 1000000]", int(n))
	}
	maxRunning.Store(int64(n))
	return C.HEV2_OK
}

//export hev2go_stats
func hev2go_stats(s *C.hev2_stats_info) (rc C.int) {
	defer guard(&rc)
	s.handles_created = C.uint64_t(created.Load())
	s.handles_live = C.uint64_t(liveCount())
	s.handles_running = C.uint64_t(running.Load())
	s.max_handles = C.uint64_t(maxRunning.Load())
	s.over_capacity = C.uint64_t(overCapacity.Load())
	s.callbacks_fired = C.uint64_t(callbacksFired.Load())
	rs := core.DefaultSystemResolver.Stats()
	s.lookups_in_flight = C.uint64_t(rs.InFlight)
	s.lookups_queued = C.uint64_t(rs.Queued)
	s.lookups_abandoned = C.uint64_t(rs.Abandoned)
	s.resolver_threads = C.uint64_t(rs.Threads.Threads)
	s.max_lookups = C.uint64_t(core.DefaultSystemResolver.MaxInFlight)
	if s.max_lookups == 0 {
		s.max_lookups = C.uint64_t(core.DefaultMaxInFlight)
	}
	s.max_resolver_threads = C.uint64_t(core.MaxResolverThreads())
	s.lookups_refused = C.uint64_t(rs.CapRefused)
	s.go_goroutines = C.uint64_t(runtime.NumGoroutine())
	s.go_heap_inuse = C.uint64_t(heapInUse())
	hs := engine.HistoryStatistics()
	s.history_enabled = C.uint64_t(boolInt(engine.HistoryEnabled()))
	s.history_entries = C.uint64_t(hs.Entries)
	s.history_max_entries = C.uint64_t(hs.Capacity)
	s.history_entry_bytes = C.uint64_t(hs.EntryBytes)
	s.history_recorded = C.uint64_t(hs.Recorded)
	s.history_evicted = C.uint64_t(hs.Evicted)
	s.history_reordered = C.uint64_t(hs.Reordered)
	s.history_delay_set = C.uint64_t(hs.DelaySet)
	s.handover_at = C.uint64_t(core.ResolverHandOverAt())
	s.lookups_handed_over = C.uint64_t(rs.HandedOver)
	return C.HEV2_OK
}

//export hev2go_set_history
func hev2go_set_history(on C.int) (rc C.int) {
	defer guard(&rc)
	engine.SetHistoryEnabled(on == 1)
	return C.HEV2_OK
}

//export hev2go_clear_history
func hev2go_clear_history() (rc C.int) {
	defer guard(&rc)
	engine.ClearHistory()
	return C.HEV2_OK
}
