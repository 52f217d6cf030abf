// Package resolve holds hev2's resolvers: the system resolver (getaddrinfo
// per family on a bounded pool of C threads; gai.c is the only cgo of the
// engine), the built-in DNS client, and the hosts and resolv.conf parsers
// they share. Each answers one family per call, so the race can start the
// moment either family is known; an HTTPS lookup (RFC 9460, Happy Eyeballs
// v3) is a call of its own too (HTTPSResolver).
package resolve
