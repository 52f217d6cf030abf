package testbed

import (
	"net/netip"
	"slices"
	"strconv"
	"strings"

	"github.com/miekg/dns"

	"github.com/hev2/hev2/core"
	"github.com/hev2/hev2/internal/race"
	"github.com/hev2/hev2/tests/testbed/contract"
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

	// The HTTPS rows (scenarios_https.go), run with --https-rr:

	// HTTPS is the behaviour of the row's HTTPS query name: "_PORT._https.
	// HOST", or HOST itself for port 443 (RFC 9460 §9.1).
	HTTPS *Behaviour
	// Names are the row's further DNS entries: its services' targets and
	// its alias targets, each a name below the row's own.
	Names []Entry
	// Port is the port the client connects to (0: the bed's).
	Port uint16
	// Queries are what the DNS server must, or must not, have been asked
	// while the row ran.
	Queries []QueryCheck
}

// Entry is one (name, query type) the DNS server answers for a row.
type Entry struct {
	Name string
	Type uint16
	B    Behaviour
}

// QueryCheck says that the client must have asked (Asked) or must not
// have asked the DNS server Type for Name while the row ran.
type QueryCheck struct {
	Name  string
	Type  uint16
	Asked bool
}

func (q QueryCheck) String() string {
	not := ""
	if !q.Asked {
		not = "no "
	}
	return not + dns.TypeToString[q.Type] + " query for " + q.Name
}

// HTTPSQueryName stands, in a behaviour's AfterName or a QueryCheck's Name,
// for the row's HTTPS query name (which depends on the bed's port).
const HTTPSQueryName = "@https"

// PortOn is the port the row's client connects to on bed.
func (s Scenario) PortOn(bed *Bed) uint16 {
	if s.Port != 0 {
		return s.Port
	}
	return bed.Port
}

// HTTPSName is the row's HTTPS query name on port (no final dot).
func (s Scenario) HTTPSName(port uint16) string {
	return strings.TrimSuffix(race.QueryName(s.Host, port), ".")
}

// UsesHTTPS reports whether the row asks the HTTPS record (--https-rr):
// its "svcb" and its winner's port are judged.
func (s Scenario) UsesHTTPS() bool { return slices.Contains(s.Args, "--https-rr") }

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

	// Port is the winner's port (0: the port the row connects to),
	// checked on the rows that ask the HTTPS record.
	Port uint16
	// SVCB is the "svcb" a row with --https-rr must print (its state and
	// the winner's service). A row without --https-rr wants null or no
	// field at all.
	SVCB *contract.SVCB
	// FirstAttempt, when valid, is the endpoint the race must try first,
	// checked where the client prints its "report".
	FirstAttempt netip.AddrPort
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
	qname := s.HTTPSName(s.PortOn(bed))
	resolve := func(b Behaviour) Behaviour {
		if b.AfterName == HTTPSQueryName {
			b.AfterName = qname
		}
		return b
	}
	if s.AAAA != nil {
		bed.DNS.Set(s.Host, typeAAAA, resolve(*s.AAAA))
	}
	if s.A != nil {
		bed.DNS.Set(s.Host, typeA, resolve(*s.A))
	}
	if s.HTTPS != nil {
		bed.DNS.Set(qname, typeHTTPS, resolve(*s.HTTPS))
	}
	for _, e := range s.Names {
		bed.DNS.Set(e.Name, e.Type, resolve(e.B))
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
