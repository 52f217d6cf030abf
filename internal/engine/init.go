package engine

import (
	"sync/atomic"

	"github.com/hev2/hev2/internal/netio"
	"github.com/hev2/hev2/internal/resolve"
)

// Init makes the descriptors the engine keeps for the life of the process:
// the shared epoll fd, Go's runtime poller (its own epoll fd and eventfd),
// and the rtnetlink subscription that tells every connect, with one atomic
// load, whether the host has an IPv4 route (NAT64 applies only without
// one) and which network it is on (history's key). Everything works
// without calling it, but a host that embeds the engine should call it
// early: Go's runtime aborts the process if it has to create its poller (on
// the first timer or pollable fd) at a moment when no fd is free, and a
// library must never take its host down that way. Init returns EMFILE
// instead, and can be called again. (A netlink subscription that fails is
// retried by a later connect; until then NAT64 and history are off.)
func Init() error {
	// The C ABI calls Init on every connect (it must run on a caller's
	// thread, never while the library loads): once it has succeeded, that
	// is one atomic load instead of two mutexes.
	if initDone.Load() {
		return nil
	}
	if err := netio.Init(); err != nil {
		return err
	}
	resolve.NAT64Applies()
	initDone.Store(true)
	return nil
}

// initDone is set once Init has succeeded: everything it makes lives for
// the process.
var initDone atomic.Bool
