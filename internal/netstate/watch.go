package netstate

import (
	"os"
	"sync"
	"sync/atomic"
	"time"

	"golang.org/x/sys/unix"
)

// subscribeRetry spaces attempts to subscribe after one failed (e.g. no fd
// was free): until then the state is unknown.
const subscribeRetry = time.Second

// watcher holds the latest snapshot and the one rtnetlink subscription
// that keeps it fresh.
type watcher struct {
	mu      sync.Mutex // serialises starts, refreshes and listener changes
	started atomic.Bool
	retryAt time.Time // guarded by mu
	cur     atomic.Pointer[Snapshot]
	gen     uint64 // guarded by mu
	// changes counts the kernel's announcements (every message, whether
	// or not the snapshot changed) and every start of the subscription.
	changes   atomic.Uint64
	listeners map[int]func(old, cur Snapshot)
	nextID    int
}

var host watcher

// Current returns the latest snapshot: an atomic load after the first call,
// no syscall. The first call subscribes (rtnetlink: addresses and routes)
// in the network namespace of the calling thread and reads the state once;
// if that fails, the snapshot is unknown and a later call tries again.
func Current() Snapshot {
	if !host.started.Load() {
		host.start()
	}
	if p := host.cur.Load(); p != nil {
		return *p
	}
	return Snapshot{}
}

// Changes returns a count that moves whenever the kernel announces a change
// of addresses or routes, and whether changes are watched at all (false:
// nothing may be cached on the count). What depends on details a Snapshot
// leaves out, such as the source address the kernel picks for a
// destination, stays valid while the count stays the same. Like Current, it
// lags the kernel by the time the watcher takes to read the announcement.
func Changes() (count uint64, watched bool) {
	if !host.started.Load() {
		host.start()
	}
	// started is read after the count: a subscription lost in between has
	// moved the count, so an answer cached on the old one is never used.
	count = host.changes.Load()
	return count, host.started.Load()
}

// OnChange calls f on the watcher's goroutine after each change of the
// snapshot (never concurrently with itself); remove unregisters it. f must
// not block: it delays every later notification.
func OnChange(f func(old, cur Snapshot)) (remove func()) {
	host.mu.Lock()
	defer host.mu.Unlock()
	if host.listeners == nil {
		host.listeners = make(map[int]func(old, cur Snapshot))
	}
	id := host.nextID
	host.nextID++
	host.listeners[id] = f
	return func() {
		host.mu.Lock()
		delete(host.listeners, id)
		host.mu.Unlock()
	}
}

func (w *watcher) start() {
	w.mu.Lock()
	defer w.mu.Unlock()
	if w.started.Load() || time.Now().Before(w.retryAt) {
		return
	}
	sock, err := subscribe()
	if err != nil {
		w.publishLocked(Snapshot{})
		w.retryAt = time.Now().Add(subscribeRetry)
		return
	}
	w.publishLocked(read())
	// Whatever happened while nobody watched is unknown: nothing cached
	// on an earlier count may be used.
	w.changes.Add(1)
	w.started.Store(true)
	go w.watch(sock)
}

// watch re-reads the state after every batch of change messages. Their
// content does not matter, only that something changed (an overrun,
// ENOBUFS, means the same).
func (w *watcher) watch(sock *os.File) {
	buf := make([]byte, 64<<10)
	for {
		_, err := sock.Read(buf)
		// Before anything else: from now on nothing cached on the old
		// count is used (ENOBUFS: announcements were lost, so the same).
		w.changes.Add(1)
		if err != nil && err != unix.ENOBUFS {
			// The socket is unusable: the state is unknown until a
			// later call subscribes afresh.
			sock.Close()
			w.mu.Lock()
			w.publishLocked(Snapshot{})
			w.retryAt = time.Now().Add(subscribeRetry)
			w.started.Store(false)
			w.mu.Unlock()
			return
		}
		s := read()
		w.mu.Lock()
		w.publishLocked(s)
		w.mu.Unlock()
	}
}

// publishLocked stores s if it differs from the current snapshot, with the
// next generation, and tells the listeners.
func (w *watcher) publishLocked(s Snapshot) {
	var old Snapshot
	if p := w.cur.Load(); p != nil {
		old = *p
		if sameState(old, s) {
			return
		}
	}
	w.gen++
	s.Generation = w.gen
	w.cur.Store(&s)
	for _, f := range w.listeners {
		f(old, s)
	}
}

// subscribe opens a non-blocking rtnetlink socket subscribed to address and
// route changes of both families, wrapped so that reads park a goroutine
// in the netpoller, not a thread.
func subscribe() (*os.File, error) {
	fd, err := unix.Socket(unix.AF_NETLINK, unix.SOCK_RAW|unix.SOCK_NONBLOCK|unix.SOCK_CLOEXEC, unix.NETLINK_ROUTE)
	if err != nil {
		return nil, err
	}
	groups := uint32(unix.RTMGRP_IPV4_IFADDR | unix.RTMGRP_IPV6_IFADDR | unix.RTMGRP_IPV4_ROUTE | unix.RTMGRP_IPV6_ROUTE)
	if err := unix.Bind(fd, &unix.SockaddrNetlink{Family: unix.AF_NETLINK, Groups: groups}); err != nil {
		unix.Close(fd)
		return nil, err
	}
	return os.NewFile(uintptr(fd), "hev2-net-changes"), nil
}
