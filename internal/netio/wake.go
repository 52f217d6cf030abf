package netio

import (
	"encoding/binary"
	"sync"

	"golang.org/x/sys/unix"
)

// wakeFDs holds the eventfds that wake a thread driving a race (WaiterDriven)
// out of ppoll. A driver takes one for the time it drives and gives it
// back, so the process holds as many as threads have ever driven at once,
// each made once: the healthy path pays no eventfd() and no close(). They
// are the library's own fds for the life of the process, like the shared
// epoll fd.
type wakeFDs struct {
	mu   sync.Mutex
	free []int
	made int
}

var wakePool wakeFDs

func (p *wakeFDs) get() (int, error) {
	p.mu.Lock()
	defer p.mu.Unlock()
	if n := len(p.free); n > 0 {
		fd := p.free[n-1]
		p.free = p.free[:n-1]
		return fd, nil
	}
	fd, err := unix.Eventfd(0, unix.EFD_CLOEXEC|unix.EFD_NONBLOCK)
	for err == unix.EINTR {
		fd, err = unix.Eventfd(0, unix.EFD_CLOEXEC|unix.EFD_NONBLOCK)
	}
	if err != nil {
		return -1, err
	}
	p.made++
	return fd, nil
}

// reserve makes the first wake fd, so that a single-threaded host's
// drives never make one.
func (p *wakeFDs) reserve() error {
	p.mu.Lock()
	made := p.made
	p.mu.Unlock()
	if made > 0 {
		return nil
	}
	fd, err := p.get()
	if err != nil {
		return err
	}
	p.put(fd)
	return nil
}

func (p *wakeFDs) put(fd int) {
	p.mu.Lock()
	p.free = append(p.free, fd)
	p.mu.Unlock()
}

// WakeFDs reports how many wake fds the process holds.
func WakeFDs() int {
	wakePool.mu.Lock()
	defer wakePool.mu.Unlock()
	return wakePool.made
}

var eventfdOne = binary.NativeEndian.AppendUint64(nil, 1)

// signalEventfd makes fd readable. EAGAIN means the counter is at its
// maximum: readable already.
func signalEventfd(fd int) {
	for {
		if _, err := unix.Write(fd, eventfdOne); err != unix.EINTR {
			return
		}
	}
}

// drainEventfd makes fd unreadable again.
func drainEventfd(fd int) {
	var buf [8]byte
	for {
		if _, err := unix.Read(fd, buf[:]); err != unix.EINTR {
			return
		}
	}
}
