// Package core is hev2's public Go API: an RFC 8305 (Happy Eyeballs v2) TCP
// connector. Dialer.Connect returns the winning socket's fd with the full
// account of the race; Dialer.DialContext drops into net/http. Nothing
// exported here carries a "do not use after" rule: the handle machinery
// the C ABI needs for speed (races played on the waiter's thread, memory
// given back for reuse) is the engine's, not the API's.
//
// core only names things; the engine, in the module's internal/ (importable
// by core and capi, by nothing outside the module), is laid out by concern,
// a package each:
//
//	internal/engine    a connection's options turned into a race and
//	                   played: the input rules (Validate, the host rule,
//	                   ParsePort), defaults, IP literals and static
//	                   entries, NAT64, history, and the handles the C ABI
//	                   is made of (WaiterRace, LibraryRace, ConnectNow)
//	internal/race      the race as a sans-I/O state machine: events
//	                   stamped with "now" in, actions out; RFC 6724 and
//	                   NAT64 sorting; the types it produces (Error, Result,
//	                   TraceEvent, Report, ...) are re-exported here as
//	                   aliases
//	internal/netio     platform I/O: non-blocking sockets, the shared epoll
//	                   poller, and the drivers that play the machine
//	                   against real sockets, resolvers and time
//	internal/resolve   resolvers: the system resolver (getaddrinfo per
//	                   family on a C thread pool, the only cgo), the
//	                   built-in DNS client, hosts, resolv.conf and
//	                   nsswitch.conf files, NAT64 prefix discovery
//	                   (ipv4only.arpa, RA PREF64)
//	internal/netstate  the host's network: its families, whether it has
//	                   routes beyond itself, and the network's identity,
//	                   read once and again on each rtnetlink change
//	internal/history   the per-network history of each host name's
//	                   attempts, and the two decisions it makes (family
//	                   order, attempt delay from RTT)
//	internal/render    a recorded race written as an SVG waterfall, qlog or
//	                   a Chrome trace (docs/trace-names.md)
//
// Outside them: capi builds libhev2.so, the C ABI of include/hev2.h, over
// the engine (capi/internal/cparse parses the text a C caller passes in
// hev2_options); cmd/hev2-connect is the command-line tool; tools/abigen
// generates the bindings' mirrors of the header; tests/ and bench/ hold
// the proof. docs/layout.md maps the whole tree and docs/decisions.md keeps
// what was tried and measured.
package core
