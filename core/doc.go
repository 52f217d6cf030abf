// Package core is the hev2 engine's public Go API: an RFC 8305 (Happy
// Eyeballs v2) TCP connector. Dialer.Connect returns the winning socket's fd
// with the full account of the race; Dialer.DialContext drops into
// net/http.
//
// Every rule on a connection's input is stated here once (input.go:
// Dialer.Validate, the host rule, ParsePort); the C ABI and the bindings
// only convert types.
//
// The engine is laid out by concern, each part a package of its own:
//
//	core/internal/race       the race as a sans-I/O state machine: events
//	                         stamped with "now" in, actions out; RFC 6724
//	                         and NAT64 sorting; the types it produces
//	                         (Error, Result, TraceEvent, Report, ...) are
//	                         re-exported here as aliases
//	core/internal/netio      platform I/O: non-blocking sockets, the shared
//	                         epoll poller, and the three drivers that play
//	                         the machine against real sockets, resolvers
//	                         and time (evented, caller thread, netpoller)
//	core/internal/resolve    resolvers: the system resolver (getaddrinfo
//	                         per family on a C thread pool, the only cgo),
//	                         the built-in DNS client, hosts, resolv.conf
//	                         and nsswitch.conf files, NAT64 prefix
//	                         discovery (ipv4only.arpa, RA PREF64)
//	core/internal/netstate   the host's network: its families, whether it
//	                         has routes beyond itself, and the network's
//	                         identity, read once and again on each
//	                         rtnetlink change
//	core/internal/history    the per-network history of each host name's
//	                         attempts, and the two decisions it makes
//	                         (family order, attempt delay from RTT)
//	core/internal/render     a recorded race written as an SVG waterfall,
//	                         qlog or a Chrome trace (docs/trace-names.md)
//	core/internal/racescript scripted races under a fake clock, for the
//	                         render tests and the browser check of the
//	                         pictures
//
// Tests and benchmarks sit beside their code (bench_test.go here);
// those that need network namespaces skip without root. The resolvers'
// namespace tests and benchmarks have a package of their own,
// core/internal/resolve/resolvertest. The decisions and their
// measurements are in docs/decisions.md.
//
// Outside core, in the same module: capi builds libhev2.so, the C ABI of
// include/hev2.h, over this package (capi/internal/cparse parses the text
// a C caller passes in hev2_options); tools/abigen generates the bindings'
// mirrors of the header; cmd/hev2-connect is the command-line
// tool (C over libhev2.so); cmd/hev2-dial (the Go API's scenario client),
// cmd/hev2-resolve (a lookup as hev2 makes it) and cmd/hev2-testbed are Go
// tools; internal/testbed is the impaired-network test bed and its
// scenario suite, and internal/dialbench and internal/syscount are the
// tools of make bench-core. docs/layout.md in the repository maps the
// whole tree.
package core
