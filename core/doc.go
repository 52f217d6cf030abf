// Package core is the hev2 engine's public Go API: an RFC 8305 (Happy
// Eyeballs v2) TCP connector. Dialer.Connect returns the winning socket's fd
// with the full account of the race; Dialer.DialContext drops into
// net/http.
//
// The engine is laid out by concern, each part a package of its own:
//
//	core/internal/race     the race as a sans-I/O state machine: events
//	                       stamped with "now" in, actions out; the types it
//	                       produces (Error, Result, TraceEvent, ...) are
//	                       re-exported here as aliases
//	core/internal/netio    platform I/O: non-blocking sockets, the shared
//	                       epoll poller, and the drivers that play the
//	                       machine against real sockets, resolvers and time
//	core/internal/resolve  resolvers: the system resolver (getaddrinfo per
//	                       family on a C thread pool, the only cgo), the
//	                       built-in DNS client, hosts and resolv.conf files
//	core/internal/netstate the host's network: its families, whether it has
//	                       routes beyond itself, and the network's identity,
//	                       read once and again on each rtnetlink change
package core
