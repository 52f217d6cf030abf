package core

import "github.com/hev2/hev2/internal/engine"

// Init makes the descriptors the engine keeps for the life of the process
// (the shared epoll fd, Go's runtime poller, the rtnetlink subscription).
// Everything works without calling it, but a host that embeds the engine
// should call it early: Go's runtime aborts the process if it has to create
// its poller at a moment when no fd is free, and Init returns EMFILE
// instead (internal/engine/init.go says more). It can be called again.
func Init() error { return engine.Init() }
