package testbed

import (
	"net/netip"
	"strings"
)

// Scenario is one row of the suite: how the network and the DNS behave for
// one name, what a correct RFC 8305 client must end with, and when an ideal
// one would end.
type Scenario struct {
	Name string
	// What the row proves, in a few words.
	About string
	// Host is the DNS name (or IP literal) the client connects to; names
	// are installed in the bed's DNS server with AAAA and A.
	Host    string
	AAAA, A *Behaviour
	// Args are extra client options (timeouts, --no-fast-fallback, ...).
	Args []string
	Want Expect
	// IdealMS is the RFC 8305-ideal time to connect (or to fail) with the
	// default delays (Resolution Delay 50 ms, Connection Attempt Delay
	// 250 ms); TolMS is the tolerance the timing table allows it.
	IdealMS, TolMS float64
	// BoundMS is a gross bound that proves the mechanism (e.g. "IPv6
	// blackholed connects in under 2 s"): beyond it the row fails.
	BoundMS float64
}

// Expect is the end a correct client reaches.
type Expect struct {
	// Winner is the address that must win; invalid means the connect must
	// fail.
	Winner netip.Addr
	// When it must fail: the contract's error fields that must match (empty
	// fields are not checked).
	Errno, EAI, Timeout string
}

// Family is "ipv6" or "ipv4", as the contract prints it.
func (e Expect) Family() string {
	if !e.Winner.IsValid() {
		return ""
	}
	if e.Winner.Is4() {
		return "ipv4"
	}
	return "ipv6"
}

func (e Expect) String() string {
	if e.Winner.IsValid() {
		return e.Winner.String()
	}
	var parts []string
	for _, p := range []string{e.Errno, e.EAI, e.Timeout} {
		if p != "" {
			parts = append(parts, p)
		}
	}
	return "fail " + strings.Join(parts, "/")
}

// Features are the client options a row uses: a client that lacks one can
// have those rows excluded explicitly (hev2-testbed suite --lacks).
func (s Scenario) Features() []string {
	var out []string
	for _, a := range s.Args {
		if strings.HasPrefix(a, "--") {
			out = append(out, strings.TrimPrefix(a, "--"))
		}
	}
	return out
}

// Install gives the row's name its DNS behaviours in bed.
func (s Scenario) Install(bed *Bed) {
	if _, err := netip.ParseAddr(s.Host); err == nil {
		return
	}
	if s.AAAA != nil {
		bed.DNS.Set(s.Host, typeAAAA, *s.AAAA)
	}
	if s.A != nil {
		bed.DNS.Set(s.Host, typeA, *s.A)
	}
}
