package core

import (
	"context"
	"net"

	"github.com/hev2/hev2/internal/engine"
)

// Connect races a TCP connection to host:port and returns the winning
// socket's fd with the full account of the race. host is a name or an IP
// literal (brackets and an IPv6 zone allowed). On failure the error is an
// *Error, or an *InputError before anything started, and every socket has
// been closed.
func (d *Dialer) Connect(ctx context.Context, host string, port uint16) (*Result, error) {
	return d.options().Connect(ctx, host, port)
}

// ParsePort accepts a port number (1-65535) or a TCP service name from the
// services database; anything else is an *InputError of kind InputPort.
func ParsePort(service string) (uint16, error) { return engine.ParsePort(service) }

// DialContext has net.Dialer.DialContext's signature, so it drops into
// http.Transport. network is "tcp", "tcp4" or "tcp6"; the returned Conn is a
// *net.TCPConn. Failures are *net.OpError wrapping the race's *Error.
//
// The race is the one Connect plays, but its attempts are made through Go's
// own network stack (net.Dialer and the runtime's netpoller): the winner is
// the *net.TCPConn that net.Dialer made, never an fd wrapped afterwards, so
// a connect costs what net.Dialer's does. The connection is configured as
// net.Dialer configures one: TCP_NODELAY on whatever NoDelay says (Go's
// default for every TCPConn; SetNoDelay(false) turns it off), keep-alive on
// with Go's default period, or with idle time and interval KeepAlive when
// KeepAlive > 0. BlockingFD does not apply.
func (d *Dialer) DialContext(ctx context.Context, network, address string) (net.Conn, error) {
	c, _, err := d.options().DialConn(ctx, network, address, false)
	if err != nil {
		return nil, err
	}
	return c, nil
}
