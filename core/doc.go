// Package core is the hev2 engine: an RFC 8305 (Happy Eyeballs v2) TCP
// connector. The race itself is a sans-I/O state machine (Machine); Dial and
// Dialer drive it with real resolvers, non-blocking sockets and epoll.
package core
