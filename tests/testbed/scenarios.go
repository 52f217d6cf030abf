package testbed

import (
	"net/netip"
	"time"

	"github.com/miekg/dns"
)

const (
	typeA     = dns.TypeA
	typeAAAA  = dns.TypeAAAA
	typeHTTPS = dns.TypeHTTPS
	ms        = time.Millisecond
)

func b(x Behaviour) *Behaviour { return &x }

// afterAAAA is an A behaviour answered only once the AAAA query of the same
// connect has been (testdns.Behaviour.AfterAAAA), for rows where IPv6 must
// win with both families answered at once: a loaded machine could
// otherwise send A first and AAAA more than the Resolution Delay (50 ms)
// later, and IPv4 would win.
func afterAAAA(x Behaviour) *Behaviour {
	x.AfterAAAA = true
	return &x
}

func name(row string) string { return row + ".hev2.test" }

// Scenarios is the suite. Every row has its own DNS name and uses the
// standard layout's addresses, whose impairments never change, so rows can
// run at the same time without disturbing each other.
func Scenarios() []Scenario {
	win := func(a netip.Addr) Expect { return Expect{Winner: a} }
	rows := []Scenario{
		{Name: "dual-stack", About: "both families healthy: IPv6 wins at once",
			AAAA: b(Answer(V6Good1)), A: afterAAAA(Answer(V4Good1)), Want: win(V6Good1), IdealMS: 0},
		{Name: "v6-blackhole", About: "IPv6 SYN-ACKs dropped: IPv4 after one attempt delay",
			AAAA: b(Answer(V6Blackhole1)), A: b(Answer(V4Good1)), Want: win(V4Good1), IdealMS: 250},
		{Name: "v6-refused", About: "IPv6 refused: IPv4 at once, no attempt delay",
			AAAA: b(Answer(V6Refused1)), A: b(Answer(V4Good1)), Want: win(V4Good1), IdealMS: 0},
		{Name: "v6-slow-100ms", About: "IPv6 path 100 ms < attempt delay: IPv6 still wins",
			AAAA: b(Answer(V6Delay100)), A: afterAAAA(Answer(V4Good1)), Want: win(V6Delay100), IdealMS: 100},
		{Name: "v6-slow-400ms", About: "IPv6 path 400 ms > attempt delay: IPv4 wins at 250 ms",
			AAAA: b(Answer(V6Delay400)), A: b(Answer(V4Good1)), Want: win(V4Good1), IdealMS: 250},
		{Name: "v6-blackhole-v4-slow", About: "IPv6 dead, IPv4 path 100 ms: 250 + 100",
			AAAA: b(Answer(V6Blackhole1)), A: b(Answer(V4Delay100)), Want: win(V4Delay100), IdealMS: 350},
		{Name: "aaaa-never", About: "AAAA never answered: IPv4 after the Resolution Delay",
			AAAA: b(NeverAnswer()), A: b(Answer(V4Good1)), Want: win(V4Good1), IdealMS: 50},
		// Within the fixed 50 ms Resolution Delay, the margin is what is
		// left of it: 40 ms (it was 25 ms with AAAA 25 ms late, and a
		// loaded machine took them), with no other row's client beside
		// it.
		{Name: "aaaa-late-10ms", About: "AAAA 10 ms late, within the Resolution Delay: IPv6 wins",
			AAAA: b(Delayed(10*ms, V6Good1)), A: b(Answer(V4Good1)), Want: win(V6Good1), IdealMS: 10, Alone: true},
		{Name: "aaaa-late-300ms", About: "AAAA 300 ms late, beyond the Resolution Delay: IPv4 at 50 ms",
			AAAA: b(Delayed(300*ms, V6Good1)), A: b(Answer(V4Good1)), Want: win(V4Good1), IdealMS: 50},
		{Name: "a-never", About: "A never answered: IPv6 at once, no wait for A",
			AAAA: b(Answer(V6Good1)), A: b(NeverAnswer()), Want: win(V6Good1), IdealMS: 0},
		{Name: "a-late-joins", About: "IPv6 dead, A 100 ms late joins the race: IPv4 at the attempt delay",
			AAAA: b(Answer(V6Blackhole1)), A: b(Delayed(100*ms, V4Good1)), Want: win(V4Good1), IdealMS: 250},
		{Name: "aaaa-servfail", About: "AAAA SERVFAIL: IPv4 at once (a failed lookup starts no Resolution Delay)",
			AAAA: b(ServFail()), A: b(Answer(V4Good1)), Want: win(V4Good1), IdealMS: 0},
		{Name: "truncated", About: "both answers truncated over UDP: TCP retry, IPv6 wins",
			AAAA: b(Truncated(V6Good1)), A: afterAAAA(Truncated(V4Good1)), Want: win(V6Good1), IdealMS: 0},
		{Name: "first-dead", About: "blackholed then refused then good per family: interleaved, next at once on refusal",
			AAAA: b(Answer(V6Blackhole1, V6Refused1, V6Good1)), A: afterAAAA(Answer(V4Blackhole1, V4Refused1, V4Good1)),
			Want: win(V6Good1), IdealMS: 500},
		{Name: "all-refused", About: "every address refused: ECONNREFUSED at once",
			AAAA: b(Answer(V6Refused1, V6Refused2)), A: b(Answer(V4Refused1, V4Refused2)),
			Want: Expect{Errno: "ECONNREFUSED"}, IdealMS: 0},
		{Name: "nxdomain", About: "the name does not exist",
			AAAA: b(NXDomain()), A: b(NXDomain()), Want: Expect{EAI: "EAI_NONAME"}, IdealMS: 0},
		{Name: "v4-only", About: "AAAA NODATA: IPv4 at once",
			AAAA: b(NoData()), A: b(Answer(V4Good1)), Want: win(V4Good1), IdealMS: 0},
		{Name: "v6-only", About: "A NODATA: IPv6 at once",
			AAAA: b(Answer(V6Good1)), A: b(NoData()), Want: win(V6Good1), IdealMS: 0},
		{Name: "hosts-file", About: "name from the client's hosts file (the DNS server would say NXDOMAIN)",
			Host: HostsFileName, Want: win(V6Good2), IdealMS: 0},
		{Name: "literal-v4", About: "IPv4 literal: no resolution", Host: V4Good2.String(),
			Want: win(V4Good2), IdealMS: 0},
		{Name: "literal-v6", About: "IPv6 literal: no resolution", Host: V6Good2.String(),
			Want: win(V6Good2), IdealMS: 0},
		{Name: "slow-accept", About: "server accepts late: connect() does not wait for accept()",
			AAAA: b(Answer(V6SlowAccept)), A: afterAAAA(Answer(V4Good1)), Want: win(V6SlowAccept), IdealMS: 0},
		{Name: "family-4", About: "--family 4 on a dual-stack name", Args: []string{"--family", "4"},
			AAAA: b(Answer(V6Good1)), A: b(Answer(V4Good1)), Want: win(V4Good1), IdealMS: 0},
		{Name: "family-6", About: "--family 6 on a dual-stack name", Args: []string{"--family", "6"},
			AAAA: b(Answer(V6Good1)), A: b(Answer(V4Good1)), Want: win(V6Good1), IdealMS: 0},
		{Name: "serial-v6-blackhole", About: "--no-fast-fallback: IPv6 attempt runs out its connect timeout, then IPv4",
			Args: []string{"--no-fast-fallback", "--connect-timeout", "300"},
			AAAA: b(Answer(V6Blackhole1)), A: b(Answer(V4Good1)), Want: win(V4Good1), IdealMS: 300},
		{Name: "resolv-timeout", About: "no answer at all: resolv_timeout fires",
			Args: []string{"--resolv-timeout", "300"},
			AAAA: b(NeverAnswer()), A: b(NeverAnswer()), Want: Expect{Timeout: "resolv_timeout"}, IdealMS: 300},
		{Name: "connect-timeout", About: "every address blackholed: connect_timeout after the last attempt starts (250 + 400)",
			Args: []string{"--connect-timeout", "400"},
			AAAA: b(Answer(V6Blackhole1)), A: b(Answer(V4Blackhole1)), Want: Expect{Timeout: "connect_timeout"}, IdealMS: 650},
		{Name: "v6-blackhole-repeat", About: "IPv6 SYN-ACKs dropped, 10 connects in one process: the 1st pays the attempt delay, " +
			"the 2nd..10th go to IPv4 first (history) and finish before it (time: their median)",
			Args: []string{"--repeat", "10"},
			// AAAA first, A right after it, every connect: the 1st tries
			// IPv6 at once and so always records its loss, and the
			// later ones find A within the Resolution Delay however
			// late a loaded machine runs the server (a connect that
			// learnt A 50 ms late would start with IPv6 as RFC 8305
			// says, whatever history knows).
			AAAA: b(Answer(V6Blackhole1)), A: afterAAAA(Answer(V4Good1)), Want: win(V4Good1), IdealMS: 0, RepeatBoundMS: 200},
		{Name: "open-timeout", About: "every address blackholed: open_timeout bounds the whole call",
			Args: []string{"--open-timeout", "500"},
			AAAA: b(Answer(V6Blackhole1)), A: b(Answer(V4Blackhole1)), Want: Expect{Timeout: "open_timeout"}, IdealMS: 500},
	}
	rows = append(rows, nat64Scenarios()...)
	rows = append(rows, httpsScenarios()...)
	for i := range rows {
		r := &rows[i]
		if r.Host == "" {
			r.Host = name(r.Name)
		}
		if r.TolMS == 0 {
			r.TolMS = 30 + r.IdealMS/10
		}
		if r.BoundMS == 0 {
			r.BoundMS = 2000
			if r.IdealMS > 1000 {
				r.BoundMS = r.IdealMS + 1500
			}
		}
	}
	return rows
}
