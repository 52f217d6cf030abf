package netio

import (
	"os"
	"sync"

	"golang.org/x/sys/unix"
)

// Init makes the descriptors the engine keeps for the life of the process:
// the shared epoll fd, the first wake fd of the waiter driver
// (WaiterDriven), and Go's runtime poller (its own epoll fd and eventfd).
// Everything works without calling it, but a host that embeds the engine
// should call it early: Go's runtime aborts the process if it has to
// create its poller (on the first timer or pollable fd) at a moment when no
// fd is free, and a library must never take its host down that way. Init
// returns EMFILE instead, and can be called again.
func Init() error {
	if err := bringUpRuntimePoller(); err != nil {
		return err
	}
	if err := wakePool.reserve(); err != nil {
		return err
	}
	return sharedPoller.init()
}

var runtimePoller struct {
	sync.Mutex
	up bool
}

// bringUpRuntimePoller makes Go create its poller now, with fds known to be
// free: three are held (the runtime needs two, the probe one) and given
// back just before a pollable probe fd is opened and closed again.
func bringUpRuntimePoller() error {
	runtimePoller.Lock()
	defer runtimePoller.Unlock()
	if runtimePoller.up {
		return nil
	}
	var held []int
	defer func() {
		for _, fd := range held {
			unix.Close(fd)
		}
	}()
	for range 3 {
		fd, err := unix.Eventfd(0, unix.EFD_CLOEXEC)
		if err != nil {
			return err
		}
		held = append(held, fd)
	}
	probe := held[0]
	for _, fd := range held[1:] {
		unix.Close(fd)
	}
	held = nil
	if err := unix.SetNonblock(probe, true); err != nil {
		unix.Close(probe)
		return err
	}
	// os.NewFile registers a non-blocking fd with the runtime poller,
	// creating the poller first.
	os.NewFile(uintptr(probe), "hev2-probe").Close()
	runtimePoller.up = true
	return nil
}
