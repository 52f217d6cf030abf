package main

/*
#include "internal.h"
*/
import "C"

import (
	"sync"
	"sync/atomic"
	"time"

	"github.com/hev2/hev2/core"
	"github.com/hev2/hev2/internal/engine"
)

// conn is one handle. Its id is never reused (a 64-bit counter), so a stale
// id can only miss the table, never reach a newer connection.
type conn struct {
	id    uint64
	host  string
	port  uint16
	start time.Time
	opts  connOptions
	// waiterRace is a waiter-driven handle's race (HEV2_DRIVE_WAITER), libraryRace
	// a library-driven one's; both nil when the outcome was decided
	// before any I/O.
	waiterRace  *engine.WaiterRace
	libraryRace *engine.LibraryRace

	done chan struct{} // closed once the outcome is known
	// gone is closed by hev2_release; only a library-driven handle has
	// one (its blocking wait selects on it). A waiter-driven handle's
	// wait looks at released instead.
	gone chan struct{}
	// published is closed once hev2_connect has returned the id; only a
	// handle with a callback or a job has one (notify waits on it).
	published chan struct{}

	// refs counts who holds the handle: the table until hev2_release, and
	// each call that looked it up, until it returns (unref).
	refs atomic.Int32

	mu       sync.Mutex
	finished bool
	canceled bool
	released bool
	fdTaken  bool
	efd      int // hev2_fd's eventfd, -1 until asked for
	res      *core.Result
	err      error
	out      outcome
	elapsed  time.Duration
	events   []core.TraceEvent
	report   *core.Report // built from events when first asked for
}

// table holds the live (not yet released) handles.
var table = struct {
	sync.Mutex
	m map[uint64]*conn
}{m: map[uint64]*conn{}}

var (
	lastID         atomic.Uint64
	running        atomic.Int64
	maxRunning     atomic.Int64
	created        atomic.Uint64
	overCapacity   atomic.Uint64
	callbacksFired atomic.Uint64
)

func init() { maxRunning.Store(C.HEV2_DEFAULT_MAX_HANDLES) }

// reserveSlot counts a running handle, or refuses when the cap is reached:
// a library must never let its host reach Go's 10,000-thread abort.
func reserveSlot() bool {
	for {
		n := running.Load()
		if n >= maxRunning.Load() {
			overCapacity.Add(1)
			return false
		}
		if running.CompareAndSwap(n, n+1) {
			return true
		}
	}
}

// lookup returns the live handle id with a reference taken: the caller
// drops it (unref) when done with the handle, and until then the race's
// memory is not reused (recycle).
func lookup(id C.hev2_conn) *conn {
	table.Lock()
	defer table.Unlock()
	c := table.m[uint64(id)]
	if c != nil {
		c.refs.Add(1)
	}
	return c
}

// live reports whether id is a live handle (no reference taken).
func live(id C.hev2_conn) bool {
	table.Lock()
	defer table.Unlock()
	return table.m[uint64(id)] != nil
}

// insert makes c a live handle; the table holds a reference to it until
// hev2_release.
func insert(c *conn) {
	c.refs.Add(1)
	table.Lock()
	table.m[c.id] = c
	table.Unlock()
}

// unref drops a reference; the last one lets the race's memory serve a
// later connect (recycle).
func (c *conn) unref() {
	if c.refs.Add(-1) == 0 {
		c.recycle()
	}
}

// recycle gives back the memory of a released handle's race once nothing
// can reach it: the handle is out of the table and no call holds it (every
// call that looks a handle up holds a reference until it returns). Its
// result, which points into that memory, goes with it. A race still
// running, or one that a goroutine of the library may still reach (core
// knows: the poller, a timer, a lookup), is left to the garbage collector.
func (c *conn) recycle() {
	c.mu.Lock()
	finished := c.finished
	if finished {
		c.res = nil
	}
	c.mu.Unlock()
	if !finished {
		return
	}
	switch {
	case c.waiterRace != nil:
		c.waiterRace.Recycle()
	case c.libraryRace != nil:
		c.libraryRace.Recycle()
	}
	c.waiterRace, c.libraryRace = nil, nil
}

// remove takes c out of the table; only the first caller gets it, so a
// double release is an error, never a double free.
func remove(id C.hev2_conn) *conn {
	table.Lock()
	defer table.Unlock()
	c := table.m[uint64(id)]
	delete(table.m, uint64(id))
	return c
}

func liveCount() int {
	table.Lock()
	defer table.Unlock()
	return len(table.m)
}
