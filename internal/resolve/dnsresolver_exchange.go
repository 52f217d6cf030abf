package resolve

import (
	"context"
	"encoding/binary"
	"errors"
	"io"
	"net"
	"net/netip"
	"time"
)

// dnsUDPSize is the EDNS0 buffer size offered: the DNS flag day 2020 value,
// which fits any path's MTU without fragments.
const dnsUDPSize = 1232

// errTimeout is a server's silence past the per-query timeout. It says
// Timeout() as a net.Error does, so that whoever holds the ResolveError
// (errors.As to interface{ Timeout() bool }) can tell a silence from a
// failure answer, both EAI_AGAIN.
var errTimeout error = timeoutError{}

type timeoutError struct{}

func (timeoutError) Error() string { return "timed out" }
func (timeoutError) Timeout() bool { return true }

// exchange sends m to server and returns its answer, within set.timeout.
// A truncated UDP answer is asked again over TCP.
func (r *DNSResolver) exchange(ctx context.Context, set *dnsSettings, m *dnsQuery, server netip.AddrPort) (*dnsReply, error) {
	ctx, cancel := context.WithTimeout(ctx, set.timeout)
	defer cancel()
	if set.useTCP {
		return r.exchangeOver(ctx, "tcp", m, server)
	}
	resp, err := r.exchangeOver(ctx, "udp", m, server)
	if err == nil && resp.header.Truncated {
		r.stats.tcpFallbacks.Add(1)
		return r.exchangeOver(ctx, "tcp", m, server)
	}
	return resp, err
}

// exchangeOver makes one query on a socket of its own. The socket is closed
// the moment ctx ends, so a canceled lookup stops at once and nothing more
// is sent or waited for.
func (r *DNSResolver) exchangeOver(ctx context.Context, network string, m *dnsQuery, server netip.AddrPort) (*dnsReply, error) {
	wire, err := m.pack()
	if err != nil {
		return nil, err
	}
	var d net.Dialer
	conn, err := d.DialContext(ctx, network, server.String())
	if err != nil {
		return nil, r.exchangeError(ctx, err)
	}
	r.stats.openSockets.Add(1)
	closed := make(chan struct{})
	stop := context.AfterFunc(ctx, func() {
		conn.Close()
		close(closed)
	})
	defer func() {
		if stop() {
			conn.Close()
		} else {
			// The cancel is closing the socket on its own goroutine:
			// the lookup returns once it is closed, not while it may
			// still be open.
			<-closed
		}
		r.stats.openSockets.Add(-1)
	}()
	if deadline, ok := ctx.Deadline(); ok {
		conn.SetDeadline(deadline)
	}
	if network == "tcp" {
		// RFC 1035 4.2.2: over TCP a message goes after its length.
		wire = append(binary.BigEndian.AppendUint16(make([]byte, 0, 2+len(wire)), uint16(len(wire))), wire...)
	}
	r.stats.queries.Add(1)
	if _, err := conn.Write(wire); err != nil {
		return nil, r.exchangeError(ctx, err)
	}
	var buf []byte
	if network == "udp" {
		buf = make([]byte, maxDNSMessage)
	}
	for {
		var msg []byte
		if network == "udp" {
			// A whole datagram, however large: a server that ignores
			// the EDNS0 size is read, not cut to a malformed message.
			n, err := conn.Read(buf)
			if err != nil {
				return nil, r.exchangeError(ctx, err)
			}
			msg = buf[:n]
		} else {
			msg, err = readTCPMessage(conn)
			if err != nil {
				return nil, r.exchangeError(ctx, err)
			}
		}
		resp, ours, err := parseReply(msg, m)
		if err != nil {
			return nil, err
		}
		if !ours {
			// A late answer to an earlier query (same port reused), a
			// forgery or noise: keep waiting for ours (until the
			// deadline).
			continue
		}
		if network == "tcp" && resp.header.Truncated {
			// TC means nothing over TCP: what came is not the whole
			// answer, and there is nowhere further to ask.
			return nil, errTruncatedTCP
		}
		return resp, nil
	}
}

// maxDNSMessage is the largest DNS message (a TCP length prefix's limit,
// and more than any UDP datagram carries).
const maxDNSMessage = 65535

var errTruncatedTCP = errors.New("answer truncated (TC) over TCP")

// readTCPMessage reads one length-prefixed message (RFC 1035 4.2.2).
func readTCPMessage(conn net.Conn) ([]byte, error) {
	var n [2]byte
	if _, err := io.ReadFull(conn, n[:]); err != nil {
		return nil, err
	}
	msg := make([]byte, binary.BigEndian.Uint16(n[:]))
	if _, err := io.ReadFull(conn, msg); err != nil {
		return nil, err
	}
	return msg, nil
}

// exchangeError says why a socket operation failed: the caller's
// cancellation, the per-query timeout, or the network error itself.
func (r *DNSResolver) exchangeError(ctx context.Context, err error) error {
	switch ctx.Err() {
	case nil:
		var ne net.Error
		if errors.As(err, &ne) && ne.Timeout() {
			r.stats.timeouts.Add(1)
			return errTimeout
		}
		return err
	case context.DeadlineExceeded:
		if deadline, ok := ctx.Deadline(); ok && !time.Now().Before(deadline) {
			r.stats.timeouts.Add(1)
			return errTimeout
		}
	}
	return ctx.Err()
}
