package core

// Init makes the descriptors the engine keeps for the life of the process:
// the shared epoll fd, which also brings up Go's runtime poller. Everything
// works without calling it (the first Connect does it), but a host that
// embeds the engine should call it early: Go's runtime aborts the process
// if it has to create its own poller at a moment when no fd is free, and a
// library must never take its host down that way.
func Init() error { return sharedPoller.init() }
