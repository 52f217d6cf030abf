package testbed

import (
	"fmt"
	"time"
)

// ImpairKind is what a server address does to a connection attempt.
type ImpairKind uint8

const (
	// KindHealthy: a listener answers at once.
	KindHealthy ImpairKind = iota
	// KindBlackhole: the SYN arrives but every reply from the address is
	// routed to a blackhole (policy route in the server namespace), so the
	// client's connect hangs exactly as behind a silent firewall.
	KindBlackhole
	// KindRefuse: no listener on the address, so the kernel answers RST and
	// the client gets ECONNREFUSED at once.
	KindRefuse
	// KindPathDelay: every packet towards the address is held for Delay in
	// the server namespace (NFQUEUE), so a connect takes Delay longer.
	KindPathDelay
	// KindSlowAccept: the kernel completes the handshake at once but the
	// server application accepts each connection only after Delay (and then
	// closes it). connect() is not slowed; a client that waits for the
	// server (curl's telnet://) is.
	KindSlowAccept
)

// Standard delays of the standard layout: the short one is below RFC 8305's
// 250 ms Connection Attempt Delay, the long one above it.
const (
	StandardShortDelay  = 100 * time.Millisecond
	StandardLongDelay   = 400 * time.Millisecond
	StandardAcceptDelay = 300 * time.Millisecond
)

// Impairment is the behaviour of one server address.
type Impairment struct {
	Kind  ImpairKind
	Delay time.Duration // KindPathDelay and KindSlowAccept only
}

func Healthy() Impairment                  { return Impairment{Kind: KindHealthy} }
func Blackhole() Impairment                { return Impairment{Kind: KindBlackhole} }
func Refuse() Impairment                   { return Impairment{Kind: KindRefuse} }
func PathDelay(d time.Duration) Impairment { return Impairment{Kind: KindPathDelay, Delay: d} }
func SlowAccept(d time.Duration) Impairment {
	return Impairment{Kind: KindSlowAccept, Delay: d}
}

// listens reports whether the address gets a TCP listener.
func (i Impairment) listens() bool { return i.Kind != KindRefuse }

func (i Impairment) String() string {
	switch i.Kind {
	case KindHealthy:
		return "healthy"
	case KindBlackhole:
		return "blackhole"
	case KindRefuse:
		return "refuse"
	case KindPathDelay:
		return fmt.Sprintf("delay %v", i.Delay)
	case KindSlowAccept:
		return fmt.Sprintf("slow-accept %v", i.Delay)
	}
	return fmt.Sprintf("impairment(%d)", i.Kind)
}

func (i Impairment) validate() error {
	switch i.Kind {
	case KindHealthy, KindBlackhole, KindRefuse:
		return nil
	case KindPathDelay, KindSlowAccept:
		if i.Delay <= 0 || i.Delay > 10*time.Second {
			return fmt.Errorf("testbed: %v: delay must be in (0, 10s]", i)
		}
		return nil
	}
	return fmt.Errorf("testbed: unknown impairment kind %d", i.Kind)
}
