package core

import (
	"os"
	"sync"
	"sync/atomic"
	"syscall"

	"golang.org/x/sys/unix"
)

// poller is one epoll instance shared by every race in the process, served
// by one goroutine. Sharing it means a connect costs one epoll_ctl, not an
// epoll_create, an epoll_ctl and a close. The epoll fd is itself watched by
// Go's runtime poller, so waiting costs no thread of its own and a wake-up
// needs no hand-off between OS threads (measured: about a quarter less wall
// time per loopback connect than a goroutine blocked in epoll_wait).
//
// Registrations are keyed by a token that is never reused, not by the fd: a
// loser's fd may be closed and its number reused by another race while an
// event for it is in flight, and a token makes such a stale event harmless.
// Registrations are one-shot (EPOLLONESHOT), so a winner's fd, which stays
// registered but disarmed until its owner closes it, is never reported or
// touched again; that saves an EPOLL_CTL_DEL on the success path.
type poller struct {
	initMu sync.Mutex
	ready  atomic.Bool
	epfd   int
	file   *os.File // keeps the epoll fd registered with Go's poller

	mu      sync.Mutex
	next    uint64
	waiters map[uint64]func()
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
	// Registering with the runtime poller may create it, and the runtime
	// aborts the process if it cannot get its two fds (an epoll fd and an
	// eventfd). Hold two fds first, and give them back just before: if the
	// process has none to spare, this returns EMFILE instead.
	reserve, err := reserveFDs(2)
	if err != nil {
		return err
	}
	epfd, err := unix.EpollCreate1(unix.EPOLL_CLOEXEC)
	if err == nil {
		// os.NewFile registers a non-blocking fd with the runtime poller.
		if err = unix.SetNonblock(epfd, true); err != nil {
			unix.Close(epfd)
		}
	}
	for _, fd := range reserve {
		unix.Close(fd)
	}
	if err != nil {
		return err
	}
	f := os.NewFile(uintptr(epfd), "hev2-epoll")
	rc, err := f.SyscallConn()
	if err != nil {
		f.Close()
		return err
	}
	p.epfd, p.file, p.waiters = epfd, f, make(map[uint64]func())
	p.ready.Store(true)
	go p.loop(rc)
	return nil
}

// reserveFDs opens n placeholder descriptors, or none and the error.
func reserveFDs(n int) ([]int, error) {
	fds := make([]int, 0, n)
	for range n {
		fd, err := unix.Eventfd(0, unix.EFD_CLOEXEC)
		if err != nil {
			for _, f := range fds {
				unix.Close(f)
			}
			return nil, err
		}
		fds = append(fds, fd)
	}
	return fds, nil
}

// register arranges for ready to be called (on the poller's goroutine) once
// fd is writable or in error: a connect in progress has finished.
func (p *poller) register(fd int, ready func()) (uint64, error) {
	if err := p.init(); err != nil {
		return 0, err
	}
	p.mu.Lock()
	p.next++
	token := p.next
	p.waiters[token] = ready
	p.mu.Unlock()
	ev := unix.EpollEvent{Events: unix.EPOLLOUT | unix.EPOLLONESHOT, Fd: int32(token), Pad: int32(token >> 32)}
	if err := unix.EpollCtl(p.epfd, unix.EPOLL_CTL_ADD, fd, &ev); err != nil {
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

func (p *poller) loop(rc syscall.RawConn) {
	events := make([]unix.EpollEvent, 128)
	// drained: the last epoll_wait returned less than a full buffer, so
	// nothing was left behind; anything that becomes ready later makes the
	// epoll fd readable again, and the runtime remembers that edge. So the
	// next wait can park at once instead of asking the kernel first.
	drained := false
	for {
		n := 0
		err := rc.Read(func(fd uintptr) bool {
			if drained {
				drained = false
				return false
			}
			var err error
			n, err = unix.EpollWait(int(fd), events, 0)
			// Nothing ready (or EINTR: hosts are full of signals): let
			// the runtime wait for the epoll fd to become readable.
			return err == nil && n > 0
		})
		if err != nil {
			// The runtime can no longer watch the epoll fd (only a host
			// that closes descriptors it does not own could cause this):
			// keep serving by blocking a thread in epoll_wait instead of
			// taking the host down.
			p.blockingLoop(events)
			return
		}
		drained = n < len(events)
		p.dispatch(events[:n])
	}
}

// blockingLoop waits in epoll_wait on a thread of its own; EINTR is retried
// (host processes are full of signals).
func (p *poller) blockingLoop(events []unix.EpollEvent) {
	for {
		n, err := unix.EpollWait(p.epfd, events, -1)
		switch err {
		case nil:
			p.dispatch(events[:n])
		case unix.EINTR:
		default:
			return
		}
	}
}

// dispatch calls the waiter of each ready registration once.
func (p *poller) dispatch(events []unix.EpollEvent) {
	for i := range events {
		token := uint64(uint32(events[i].Fd)) | uint64(uint32(events[i].Pad))<<32
		p.mu.Lock()
		ready := p.waiters[token]
		delete(p.waiters, token)
		p.mu.Unlock()
		if ready != nil {
			ready()
		}
	}
}
