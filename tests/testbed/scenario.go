package testbed

import (
	"net/netip"
	"strconv"
	"strings"

	"github.com/hev2/hev2/core"
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

	// Alone runs the row with no other row at the same time: its verdict
	// rests on a margin of tens of milliseconds (inside RFC 8305's fixed
	// 50 ms Resolution Delay), which other rows' clients starting beside
	// it would eat.
	Alone bool

	// IPv6Only runs the client in the bed's IPv6-only namespace (no IPv4
	// route: a NAT64 network's host).
	IPv6Only bool
	// Pref64, when valid, is the NAT64 prefix the DNS server reveals for
	// ipv4only.arpa while the row runs (RFC 7050: 192.0.0.170 and .171
	// synthesized into it), and the IPv4 addresses the row names get a
	// healthy listener at their synthesis (see NAT64Listeners). Rows that
	// run in the IPv6-only namespace or set a prefix run one at a time:
	// ipv4only.arpa is one name for the whole bed (no prefix: NXDOMAIN).
	Pref64 netip.Prefix
	// RepeatBoundMS, for a row run with --repeat N: the bound on each of
	// the 2nd..Nth connects (e.g. below the attempt delay: none of them
	// may try the blackhole first). IdealMS is then their median's.
	RepeatBoundMS float64
}

// Repeat is the row's --repeat count (1 without it).
func (s Scenario) Repeat() int {
	for i, a := range s.Args {
		if a == "--repeat" && i+1 < len(s.Args) {
			if n, err := strconv.Atoi(s.Args[i+1]); err == nil {
				return n
			}
		}
	}
	return 1
}

// Expect is the end a correct client reaches.
type Expect struct {
	// Winner is the address that must win; invalid means the connect must
	// fail.
	Winner netip.Addr
	// When it must fail: the contract's error fields that must match (empty
	// fields are not checked).
	Errno, EAI, Timeout string
	// SynthesizedFrom is the IPv4 address a NAT64 winner stands for; a
	// client that reports "synthesized_from" must report it (and must
	// report nothing when it is invalid).
	SynthesizedFrom netip.Addr
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

// Install gives the row's name its DNS behaviours in bed, and the row's
// NAT64 addresses their listeners.
func (s Scenario) Install(bed *Bed) error {
	if s.Pref64.IsValid() {
		for _, v4 := range NAT64Listeners {
			if err := bed.Impair(core.NAT64Synthesize(s.Pref64, v4), Healthy()); err != nil {
				return err
			}
		}
	}
	if _, err := netip.ParseAddr(s.Host); err == nil {
		return nil
	}
	if s.AAAA != nil {
		bed.DNS.Set(s.Host, typeAAAA, *s.AAAA)
	}
	if s.A != nil {
		bed.DNS.Set(s.Host, typeA, *s.A)
	}
	return nil
}

// NAT64Listeners are the IPv4 addresses whose synthesis into a row's
// Pref64 gets a healthy listener: the rows connect to V4Good1 and V4Good2
// through NAT64 (the test bed has no translator: the server simply owns
// the synthesized IPv6 addresses).
var NAT64Listeners = []netip.Addr{V4Good1, V4Good2}

// serialized reports whether the row must run alone: it sets (or needs
// unset) ipv4only.arpa's answer.
func (s Scenario) serialized() bool { return s.IPv6Only || s.Pref64.IsValid() }

// setPref64 makes the DNS server reveal p for ipv4only.arpa (RFC 7050:
// both well-known addresses synthesized into it), or NXDOMAIN when p is
// not valid.
func (b *Bed) setPref64(p netip.Prefix) {
	if !p.IsValid() {
		b.DNS.Set(core.IPv4OnlyName, typeAAAA, NXDomain())
		b.DNS.Set(core.IPv4OnlyName, typeA, NXDomain())
		return
	}
	b.DNS.Set(core.IPv4OnlyName, typeAAAA, Answer(core.NAT64Synthesize(p, core.IPv4OnlyAddrs[0]), core.NAT64Synthesize(p, core.IPv4OnlyAddrs[1])))
	b.DNS.Set(core.IPv4OnlyName, typeA, Answer(core.IPv4OnlyAddrs[0], core.IPv4OnlyAddrs[1]))
}
