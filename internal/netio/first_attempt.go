package netio

import (
	"net/netip"
	"time"
)

// FirstAttempt is the one attempt of a race whose only address is known in
// advance, made before the race exists (TryLone): a race started with it
// (StartWaiterWith) adopts it as its first attempt instead of connecting again.
type FirstAttempt struct {
	Addr netip.AddrPort
	// FD is the attempt's socket, connected or still connecting; -1 when
	// the connect failed at once (Err).
	FD        int
	Connected bool
	Err       error
	// Start is when the attempt began (the monotonic clock's reading
	// before the socket was made): the race's start, so that its account
	// counts the connect from there.
	Start time.Duration
}

// TryLone connects to addr, the only address of a race (an IP literal that
// nothing can change: no local address to bind, no NAT64 synthesis), and
// looks at it once, before any race exists. A connect finished by then (the
// kernel completes a loopback one inside connect(2)) is the race's outcome
// whatever the machine would do: a race of one address wins with its first
// connected attempt. TryLone then applies sock and returns the socket, and
// no race is ever made for it: no machine, no race memory, no clock
// reading. Otherwise it returns fd -1 and the attempt, for StartWaiterWith: the
// machine then decides everything else (a refusal, a timeout, a cancel),
// as it would have for an attempt it started itself.
func TryLone(addr netip.AddrPort, sock *SocketOptions) (fd int, first FirstAttempt) {
	first = FirstAttempt{Addr: addr, Start: monoNow()}
	first.FD, first.Connected, first.Err = startConnect(addr, netip.AddrPort{})
	if first.Err != nil {
		return -1, first
	}
	if !first.Connected {
		first.Connected = rawConnected(first.FD)
	}
	// A socket option that cannot be set is the race's to report (its
	// hand-over sets them again and fails the same way).
	if first.Connected && applySocketOptions(first.FD, sock) == nil {
		return first.FD, FirstAttempt{}
	}
	return -1, first
}

// Close closes the attempt's socket, for an attempt no race will adopt.
func (a *FirstAttempt) Close() {
	if a.FD >= 0 {
		closeFD(a.FD)
		a.FD = -1
	}
}
