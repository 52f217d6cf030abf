package resolve

// This file is the Go side of the only cgo in core: the getaddrinfo pool of
// gai.c (why it is made of C threads: see gai.h). Finished jobs are pushed
// on a list and an eventfd is signalled; one goroutine (gaiDispatch) reads it
// through the netpoller, so no Go thread ever blocks on a lookup.

/*
#cgo CFLAGS: -Wall -Wextra -Werror
#include <stdlib.h>
#include <sys/socket.h>
#include "gai.h"
*/
import "C"

import (
	"net/netip"
	"os"
	"runtime/cgo"
	"strconv"
	"sync"
	"sync/atomic"
	"syscall"
	"time"
	"unsafe"

	"github.com/hev2/hev2/internal/race"
)

// gaiResult is one finished getaddrinfo call, copied into Go memory.
type gaiResult struct {
	addrs []netip.Addr
	code  int
	errno syscall.Errno
}

var gaiPool struct {
	mu      sync.Mutex
	started atomic.Bool
	events  *os.File // the eventfd; kept referenced so it is never closed
}

// gaiStart starts the dispatcher. If that fails (no fd for the eventfd),
// the lookup fails with that errno and the next lookup tries again.
func gaiStart() error {
	if gaiPool.started.Load() {
		return nil
	}
	gaiPool.mu.Lock()
	defer gaiPool.mu.Unlock()
	if gaiPool.started.Load() {
		return nil
	}
	fd := int(C.hev2_gai_init())
	if fd < 0 {
		return syscall.Errno(-fd)
	}
	gaiPool.events = os.NewFile(uintptr(fd), "hev2-gai-eventfd")
	go gaiDispatch(gaiPool.events)
	gaiPool.started.Store(true)
	return nil
}

// gaiSubmit queues a lookup; finish is called on the dispatcher goroutine
// with the result once getaddrinfo returns. A non-nil error means no thread
// could be had and finish will never be called.
func gaiSubmit(host string, family race.Family, w *Waker, finish func(gaiResult)) error {
	if err := gaiStart(); err != nil {
		return err
	}
	j := (*C.struct_hev2_gai_job)(C.calloc(1, C.sizeof_struct_hev2_gai_job))
	if j == nil {
		return syscall.ENOMEM
	}
	j.host = C.CString(host)
	j.family = C.AF_INET
	if family == race.IPv6 {
		j.family = C.AF_INET6
	}
	if w != nil && w.c != nil {
		C.hev2_gai_waker_ref(w.c)
		j.waker = w.c
	}
	h := cgo.NewHandle(finish)
	j.handle = C.uintptr_t(h)
	if rc := C.hev2_gai_submit(j); rc != 0 {
		h.Delete()
		C.hev2_gai_free(j)
		return syscall.Errno(rc)
	}
	return nil
}

func gaiDispatch(events *os.File) {
	var buf [8]byte
	for {
		if _, err := events.Read(buf[:]); err != nil && err != syscall.EAGAIN {
			// An eventfd read fails only if the fd is gone; nothing can
			// be delivered any more.
			panic("hev2: getaddrinfo eventfd: " + err.Error())
		}
		HarvestLookups()
	}
}

// HarvestLookups delivers every finished getaddrinfo call now, on the
// calling goroutine. The dispatcher does it when the pool's eventfd fires;
// a thread waiting for its own lookups (woken through its Waker) does it
// itself rather than wait for the dispatcher to be scheduled.
func HarvestLookups() {
	if !gaiPool.started.Load() {
		return
	}
	for j := C.hev2_gai_take_done(); j != nil; {
		next := j.next
		h := cgo.Handle(j.handle)
		finish := h.Value().(func(gaiResult))
		h.Delete()
		res := gaiResult{code: int(j.rc), errno: syscall.Errno(j.err)}
		if j.rc == 0 {
			res.addrs = gaiAddrs(unsafe.Slice(j.addrs, int(j.naddrs)))
		}
		C.hev2_gai_free(j)
		finish(res)
		j = next
	}
}

// Waker tells the getaddrinfo threads which eventfd wakes the thread that
// waits for a lookup's answer (see hev2_gai_waker in gai.h).
type Waker struct {
	c *C.struct_hev2_gai_waker
}

// NewWaker returns a Waker with no fd set, or nil if memory is short (the
// answers then arrive through the dispatcher only).
func NewWaker() *Waker {
	c := C.hev2_gai_waker_new()
	if c == nil {
		return nil
	}
	return &Waker{c}
}

// Set names the eventfd to write when a lookup finishes (-1: none).
func (w *Waker) Set(fd int) {
	if w != nil {
		C.hev2_gai_waker_set(w.c, C.int(fd))
	}
}

// Close drops the waiter's reference; jobs in flight keep theirs.
func (w *Waker) Close() {
	if w != nil && w.c != nil {
		C.hev2_gai_waker_set(w.c, -1)
		C.hev2_gai_waker_unref(w.c)
		w.c = nil
	}
}

func gaiAddrs(cs []C.struct_hev2_gai_addr) []netip.Addr {
	addrs := make([]netip.Addr, 0, len(cs))
	for i := range cs {
		a := &cs[i]
		ip := *(*[16]byte)(unsafe.Pointer(&a.ip[0]))
		var addr netip.Addr
		if a.v6 != 0 {
			addr = netip.AddrFrom16(ip)
			if a.scope != 0 {
				addr = addr.WithZone(strconv.FormatUint(uint64(a.scope), 10))
			}
		} else {
			addr = netip.AddrFrom4([4]byte(ip[:4]))
		}
		addrs = appendUnique(addrs, addr)
	}
	return addrs
}

// GAIThreadStats describes the process-wide pool of getaddrinfo threads.
type GAIThreadStats struct {
	Threads int   // threads alive now (busy or idle)
	Idle    int   // threads free for a job
	Created int64 // threads created since the process started
}

// GAIThreads reports the getaddrinfo thread pool shared by every
// SystemResolver.
func GAIThreads() GAIThreadStats {
	var threads, idle, created C.long
	C.hev2_gai_pool_stats(&threads, &idle, &created)
	return GAIThreadStats{Threads: int(threads), Idle: int(idle), Created: int64(created)}
}

// SetGAIThreadIdleTimeout sets how long a getaddrinfo thread waits for the
// next lookup before it exits (default 5 s). Threads are cheap to make and a
// library should not keep them in its host process forever.
func SetGAIThreadIdleTimeout(d time.Duration) {
	ms := d.Milliseconds()
	if ms < 1 {
		ms = 1
	}
	C.hev2_gai_set_idle(C.long(ms))
}
