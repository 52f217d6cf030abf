package core

import "github.com/hev2/hev2/core/internal/netio"

// Init makes the descriptors the engine keeps for the life of the process:
// the shared epoll fd, and Go's runtime poller (its own epoll fd and
// eventfd). Everything works without calling it, but a host that embeds the
// engine should call it early: Go's runtime aborts the process if it has to
// create its poller (on the first timer or pollable fd) at a moment when no
// fd is free, and a library must never take its host down that way. Init
// returns EMFILE instead, and can be called again.
func Init() error { return netio.Init() }
