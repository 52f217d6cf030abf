package resolve

import (
	"context"
	"errors"
	"fmt"
	"net"
	"net/netip"
	"time"

	"github.com/miekg/dns"
)

// dnsUDPSize is the EDNS0 buffer size offered: the DNS flag day 2020 value,
// which fits any path's MTU without fragments.
const dnsUDPSize = 1232

var errTimeout = errors.New("timed out")

// exchange sends m to server and returns its answer, within set.timeout.
// A truncated UDP answer is asked again over TCP.
func (r *DNSResolver) exchange(ctx context.Context, set *dnsSettings, m *dns.Msg, server netip.AddrPort) (*dns.Msg, error) {
	ctx, cancel := context.WithTimeout(ctx, set.timeout)
	defer cancel()
	if set.useTCP {
		return r.exchangeOver(ctx, "tcp", m, server)
	}
	resp, err := r.exchangeOver(ctx, "udp", m, server)
	if err == nil && resp.Truncated {
		r.stats.tcpFallbacks.Add(1)
		return r.exchangeOver(ctx, "tcp", m, server)
	}
	return resp, err
}

// exchangeOver makes one query on a socket of its own. The socket is closed
// the moment ctx ends, so a canceled lookup stops at once and nothing more
// is sent or waited for.
func (r *DNSResolver) exchangeOver(ctx context.Context, network string, m *dns.Msg, server netip.AddrPort) (*dns.Msg, error) {
	var d net.Dialer
	conn, err := d.DialContext(ctx, network, server.String())
	if err != nil {
		return nil, r.exchangeError(ctx, err)
	}
	r.stats.openSockets.Add(1)
	stop := context.AfterFunc(ctx, func() { conn.Close() })
	defer func() {
		if stop() {
			conn.Close()
		}
		r.stats.openSockets.Add(-1)
	}()
	if deadline, ok := ctx.Deadline(); ok {
		conn.SetDeadline(deadline)
	}
	co := &dns.Conn{Conn: conn, UDPSize: dnsUDPSize}
	r.stats.queries.Add(1)
	if err := co.WriteMsg(m); err != nil {
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
			msg, err = co.ReadMsgHeader(nil)
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
		if network == "tcp" && resp.Truncated {
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

// parseReply reads one message received for query q. It returns ours
// false for a message that is not an answer to q (another ID, another
// question, not a response, or too mangled to tell): the caller ignores
// it. A message that is an answer to q but does not parse beyond its
// question is an error: the server's answer is malformed.
func parseReply(msg []byte, q *dns.Msg) (resp *dns.Msg, ours bool, err error) {
	resp = new(dns.Msg)
	uerr := resp.Unpack(msg)
	if !resp.Response || resp.Opcode != dns.OpcodeQuery || resp.Id != q.Id ||
		len(resp.Question) != 1 || !sameQuestion(resp.Question[0], q.Question[0]) {
		return nil, false, nil
	}
	if uerr != nil {
		return nil, true, fmt.Errorf("malformed answer: %w", uerr)
	}
	return resp, true, nil
}

func sameQuestion(a, b dns.Question) bool {
	return a.Qtype == b.Qtype && a.Qclass == b.Qclass && dns.CanonicalName(a.Name) == dns.CanonicalName(b.Name)
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
