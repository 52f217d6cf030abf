package core

import (
	"context"
	"errors"
	"net"
)

// Connect races a TCP connection to host:port and returns the winning
// socket's fd with the full account of the race. On failure the error is an
// *Error (or an ErrInvalidOptions error) and every socket has been closed.
func (d *Dialer) Connect(ctx context.Context, host string, port uint16) (*Result, error) {
	return nil, errors.New("not implemented yet")
}

// DialContext has net.Dialer.DialContext's signature, so it drops into
// http.Transport. network is "tcp", "tcp4" or "tcp6"; the returned Conn is a
// *net.TCPConn.
func (d *Dialer) DialContext(ctx context.Context, network, address string) (net.Conn, error) {
	return nil, errors.New("not implemented yet")
}
