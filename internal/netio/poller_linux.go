package netio

import (
	"runtime"
	"sync"
	"sync/atomic"

	"golang.org/x/sys/unix"
)

// poller is one epoll instance shared by every race in the process, served
// by one goroutine blocked in epoll_wait. Sharing it means a connect costs
// one epoll_ctl, not an epoll_create, an epoll_ctl and a close.
//
// Registrations are keyed by a token that is never reused, not by the fd: a
// loser's fd may be closed and its number reused by another race while an
// event for it is in flight, and a token makes such a stale event harmless.
// Registrations are one-shot (EPOLLONESHOT), so a winner's fd, which stays
// registered but disarmed until its owner closes it, is never reported or
// touched again; that saves an EPOLL_CTL_DEL on the success path.
//
// The loop blocks a thread in epoll_wait rather than watching the epoll fd
// through Go's runtime poller, whose variant lost a wake-up (docs/decisions.md).
type poller struct {
	initMu sync.Mutex
	ready  atomic.Bool
	epfd   int

	mu      sync.Mutex
	next    uint64
	waiters map[uint64]registration
}

// readyTarget is what a registration reports to: the race, told which of
// its attempts is ready. A method with the attempt's id, not a closure per
// registration: a pending connect then costs no allocation for it.
type readyTarget interface {
	ready(id int, events uint32)
}

type registration struct {
	to readyTarget
	id int
}

var sharedPoller poller

// init creates the epoll fd and starts the loop, once. A failure (no fd
// left) is returned and tried again on the next call, so a momentary fd
// shortage does not disable the library for good.
func (p *poller) init() error {
	if p.ready.Load() {
		return nil
	}
	p.initMu.Lock()
	defer p.initMu.Unlock()
	if p.ready.Load() {
		return nil
	}
	epfd, err := unix.EpollCreate1(unix.EPOLL_CLOEXEC)
	if err != nil {
		return err
	}
	p.epfd, p.waiters = epfd, make(map[uint64]registration)
	p.ready.Store(true)
	go p.loop()
	return nil
}

// register arranges for to.ready(id, events) to be called (on the
// poller's goroutine) once fd is writable or in error: a connect in
// progress has finished. events are epoll's (EPOLLOUT alone: connected, see
// readyResult).
func (p *poller) register(fd int, to readyTarget, id int) (uint64, error) {
	if err := p.init(); err != nil {
		return 0, err
	}
	p.mu.Lock()
	p.next++
	token := p.next
	p.waiters[token] = registration{to, id}
	p.mu.Unlock()
	ev := unix.EpollEvent{Events: unix.EPOLLOUT | unix.EPOLLONESHOT, Fd: int32(token), Pad: int32(token >> 32)}
	if err := rawEpollAdd(p.epfd, fd, &ev); err != nil {
		p.forget(token)
		return 0, err
	}
	return token, nil
}

// forget drops a registration before its fd is closed or handed over.
func (p *poller) forget(token uint64) {
	p.mu.Lock()
	delete(p.waiters, token)
	p.mu.Unlock()
}

func (p *poller) loop() {
	events := make([]unix.EpollEvent, 128)
	for {
		n, err := unix.EpollWait(p.epfd, events, -1)
		if err != nil {
			// EINTR: host processes are full of signals; nothing else can
			// happen with a valid epoll fd and buffer.
			continue
		}
		for i := range events[:n] {
			token := uint64(uint32(events[i].Fd)) | uint64(uint32(events[i].Pad))<<32
			p.mu.Lock()
			w, ok := p.waiters[token]
			delete(p.waiters, token)
			p.mu.Unlock()
			if ok {
				w.to.ready(w.id, events[i].Events)
			}
		}
		// Let the races just made runnable run on this P now, before this
		// goroutine blocks in epoll_wait again and leaves them to be
		// stolen by another thread (a futex wake-up and a hand-off each;
		// the figures are in docs/decisions.md).
		runtime.Gosched()
	}
}
