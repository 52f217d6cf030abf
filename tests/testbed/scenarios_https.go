package testbed

import (
	"net"
	"net/netip"

	"github.com/miekg/dns"

	"github.com/hev2/hev2/tests/testbed/contract"
	"github.com/hev2/hev2/tests/testdns"
)

// The HTTPS rows (Happy Eyeballs v3, RFC 9460): each runs with
// --https-rr and is judged by its outcome and by the line's "svcb" (the
// query's state and the service the winner came from), the winner's port
// too. The client connects to the bed's port (8080), so its query name is
// "_8080._https.<row>.hev2.test", except for the port-443 row. Services
// listen on ServicePort of the healthy addresses; ClosedPort refuses.
//
// No verdict rests on the scheduler: where the race must know its
// services before the origin's own addresses, the origin's AAAA is
// answered only after the HTTPS answer (testdns AfterName), and the race
// itself holds its attempts for the HTTPS answer a Resolution Delay (so
// the client may read the two answers in either order within 50 ms);
// where a service has no hints, the origin's AAAA comes 100 ms after the
// target's, which the race does not wait for; where several services
// compete, their addresses come as hints, in the one HTTPS answer; the
// slow HTTPS answer is written 200 ms after the origin's AAAA, four
// Resolution Delays. The one margin left is the hint-replacement row's:
// the target's AAAA, asked at once and answered at once, must come within
// two attempt delays (500 ms).

// ech is an ECH configuration for the ECH rows: opaque to the race (the
// TLS stack reads it), so any bytes do.
var ech = []byte{0x00, 0x08, 0xfe, 0x0d, 0x00, 0x04, 0x01, 0x02, 0x03, 0x04}

func httpsScenarios() []Scenario {
	https := []string{"--https-rr"}
	rec := func(prio uint16, target string, params ...dns.SVCBKeyValue) testdns.HTTPSRecord {
		return testdns.HTTPSRecord{Priority: prio, Target: target, Params: params}
	}
	alias := func(target string) testdns.HTTPSRecord { return testdns.HTTPSRecord{Priority: 0, Target: target} }
	port := func(p uint16) dns.SVCBKeyValue { return &dns.SVCBPort{Port: p} }
	alpn := func(ids ...string) dns.SVCBKeyValue { return &dns.SVCBAlpn{Alpn: ids} }
	noDefaultALPN := &dns.SVCBNoDefaultAlpn{}
	hint6 := func(addrs ...netip.Addr) dns.SVCBKeyValue {
		h := &dns.SVCBIPv6Hint{}
		for _, a := range addrs {
			h.Hint = append(h.Hint, net.IP(a.AsSlice()))
		}
		return h
	}
	echCfg := &dns.SVCBECHConfig{ECH: ech}
	answer := func(recs ...testdns.HTTPSRecord) *Behaviour { x := testdns.AnswerHTTPS(recs...); return &x }
	malformed := func(kind string) testdns.HTTPSRecord {
		r, err := testdns.MalformedHTTPS(kind)
		if err != nil {
			panic(err)
		}
		return r
	}
	// after is x answered only once (name, qtype) has been.
	after := func(name string, qtype uint16, x Behaviour) *Behaviour {
		x.AfterName, x.AfterType = name, qtype
		return &x
	}
	afterHTTPS := func(x Behaviour) *Behaviour { return after(HTTPSQueryName, typeHTTPS, x) }
	never := func(target string) []Entry {
		return []Entry{{target, typeAAAA, NeverAnswer()}, {target, typeA, NeverAnswer()}}
	}
	noData := func(target string) []Entry {
		return []Entry{{target, typeAAAA, NoData()}, {target, typeA, NoData()}}
	}
	served := func(prio int, target string, port int, alpn []string, ech bool) *contract.SVCB {
		return &contract.SVCB{State: "answered", Service: &contract.Service{Priority: prio, Target: target + ".", Port: port, ALPN: alpn, ECH: ech}}
	}
	state := func(s string) *contract.SVCB { return &contract.SVCB{State: s} }
	h11 := []string{"http/1.1"}
	h2 := []string{"h2", "http/1.1"}
	on := func(a netip.Addr, p uint16) netip.AddrPort { return netip.AddrPortFrom(a, p) }

	host := func(row string) string { return name(row) }
	rows := []Scenario{
		{Name: "https-port", About: "a service on another port: the connection goes to its port (query _8080._https.HOST)",
			HTTPS: answer(rec(1, ".", alpn("h2"), port(ServicePort))),
			AAAA:  afterHTTPS(Answer(V6Good2)), A: b(NoData()),
			Want:    Expect{Winner: V6Good2, Port: ServicePort, SVCB: served(1, host("https-port"), ServicePort, h2, false)},
			Queries: []QueryCheck{{HTTPSQueryName, typeHTTPS, true}, {host("https-port"), typeHTTPS, false}}},
		{Name: "https-port-443", About: "port 443: the HTTPS query is HOST itself (no _443._https), its service's port wins",
			Port:  443,
			HTTPS: answer(rec(1, ".", port(ServicePort))),
			AAAA:  afterHTTPS(Answer(V6Good1)), A: b(NoData()),
			Want:    Expect{Winner: V6Good1, Port: ServicePort, SVCB: served(1, host("https-port-443"), ServicePort, h11, false)},
			Queries: []QueryCheck{{host("https-port-443"), typeHTTPS, true}, {"_443._https." + host("https-port-443"), typeHTTPS, false}}},
		{Name: "https-hints", About: "ipv6hint tried before the target's own AAAA, which never comes",
			HTTPS: answer(rec(1, "svc."+host("https-hints"), port(ServicePort), &dns.SVCBIPv4Hint{Hint: []net.IP{V4Good1.AsSlice()}}, hint6(V6Good1))),
			Names: never("svc." + host("https-hints")),
			AAAA:  afterHTTPS(Answer(V6Good2)), A: b(NoData()),
			Want: Expect{Winner: V6Good1, Port: ServicePort, SVCB: served(1, "svc."+host("https-hints"), ServicePort, h11, false)}},
		{Name: "https-hints-replaced", About: "the target's AAAA replaces the untried hints (a blackhole tried, the good hint never)",
			HTTPS: answer(rec(1, "svc."+host("https-hints-replaced"), port(ServicePort), hint6(V6Blackhole1, V6Blackhole2, V6Good2))),
			Names: []Entry{{"svc." + host("https-hints-replaced"), typeAAAA, Answer(V6Good1)}, {"svc." + host("https-hints-replaced"), typeA, NoData()}},
			AAAA:  after("svc."+host("https-hints-replaced"), typeAAAA, Answer(V6Refused1)), A: b(NoData()),
			Want: Expect{Winner: V6Good1, Port: ServicePort, SVCB: served(1, "svc."+host("https-hints-replaced"), ServicePort, h11, false),
				FirstAttempt: on(V6Blackhole1, ServicePort)},
			IdealMS: 250},
		{Name: "https-priority", About: "the lower SvcPriority first, whatever the records' order",
			HTTPS: answer(rec(2, "svc2."+host("https-priority"), port(ServicePort), hint6(V6Good2)),
				rec(1, "svc1."+host("https-priority"), port(ServicePort), hint6(V6Good1))),
			Names: append(never("svc1."+host("https-priority")), never("svc2."+host("https-priority"))...),
			AAAA:  afterHTTPS(Answer(V6Refused1)), A: b(NoData()),
			Want: Expect{Winner: V6Good1, Port: ServicePort, SVCB: served(1, "svc1."+host("https-priority"), ServicePort, h11, false)}},
		{Name: "https-origin-last", About: "every service fails (a closed port, a blackhole): the origin's own AAAA last",
			HTTPS: answer(rec(1, "svc1."+host("https-origin-last"), port(ClosedPort), hint6(V6Good1)),
				rec(2, "svc2."+host("https-origin-last"), port(ServicePort), hint6(V6Blackhole1))),
			Names: append(never("svc1."+host("https-origin-last")), never("svc2."+host("https-origin-last"))...),
			AAAA:  afterHTTPS(Answer(V6Good2)), A: b(NoData()),
			Want: Expect{Winner: V6Good2, SVCB: state("answered"), FirstAttempt: on(V6Good1, ClosedPort)}, IdealMS: 250},
		{Name: "https-h3-only", About: "an h3-only record (no-default-alpn) is never used over TCP",
			HTTPS: answer(rec(1, "h3."+host("https-h3-only"), alpn("h3"), noDefaultALPN, port(ServicePort), hint6(V6Good1)),
				rec(2, "svc."+host("https-h3-only"), alpn("h2"), port(ServicePort), hint6(V6Good2))),
			Names: append(never("h3."+host("https-h3-only")), never("svc."+host("https-h3-only"))...),
			AAAA:  afterHTTPS(Answer(V6Refused1)), A: b(NoData()),
			Want: Expect{Winner: V6Good2, Port: ServicePort, SVCB: served(2, "svc."+host("https-h3-only"), ServicePort, h2, false)}},
		{Name: "https-mandatory", About: "a record whose mandatory keys name an unknown one (key65000) is skipped",
			HTTPS: answer(rec(1, "m."+host("https-mandatory"), &dns.SVCBMandatory{Code: []dns.SVCBKey{65000}}, port(ServicePort),
				hint6(V6Good1), &dns.SVCBLocal{KeyCode: 65000, Data: []byte("x")}),
				rec(2, "svc."+host("https-mandatory"), port(ServicePort), hint6(V6Good2))),
			Names: append(never("m."+host("https-mandatory")), never("svc."+host("https-mandatory"))...),
			AAAA:  afterHTTPS(Answer(V6Refused1)), A: b(NoData()),
			Want: Expect{Winner: V6Good2, Port: ServicePort, SVCB: served(2, "svc."+host("https-mandatory"), ServicePort, h11, false)}},
		{Name: "https-alpn", About: "--alpn http/1.1: a service offering h2 alone is skipped",
			Args: []string{"--https-rr", "--alpn", "http/1.1"},
			HTTPS: answer(rec(1, "h2."+host("https-alpn"), alpn("h2"), noDefaultALPN, port(ServicePort), hint6(V6Good1)),
				rec(2, "svc."+host("https-alpn"), alpn("http/1.1"), port(ServicePort), hint6(V6Good2))),
			Names: append(never("h2."+host("https-alpn")), never("svc."+host("https-alpn"))...),
			AAAA:  afterHTTPS(Answer(V6Refused1)), A: b(NoData()),
			Want: Expect{Winner: V6Good2, Port: ServicePort, SVCB: served(2, "svc."+host("https-alpn"), ServicePort, h11, false)}},
		{Name: "https-alias", About: "AliasMode followed twice, to a ServiceMode record whose target '.' is its owner",
			HTTPS: answer(alias("a1." + host("https-alias"))),
			Names: []Entry{
				{"a1." + host("https-alias"), typeHTTPS, testdns.AnswerHTTPS(alias("a2." + host("https-alias")))},
				{"a2." + host("https-alias"), typeHTTPS, testdns.AnswerHTTPS(rec(1, ".", port(ServicePort)))},
				{"a2." + host("https-alias"), typeAAAA, Answer(V6Good1)},
				{"a2." + host("https-alias"), typeA, NoData()},
			},
			AAAA: after("a2."+host("https-alias"), typeAAAA, Delayed(100*ms, V6Good2)), A: b(NoData()),
			Want:    Expect{Winner: V6Good1, Port: ServicePort, SVCB: served(1, "a2."+host("https-alias"), ServicePort, h11, false)},
			Queries: []QueryCheck{{"a1." + host("https-alias"), typeHTTPS, true}, {"a2." + host("https-alias"), typeHTTPS, true}}},
		{Name: "https-alias-loop", About: "an alias to a name that aliases itself: state alias-limit, the origin is used",
			HTTPS: answer(alias("loop." + host("https-alias-loop"))),
			Names: []Entry{{"loop." + host("https-alias-loop"), typeHTTPS, testdns.AnswerHTTPS(alias("loop." + host("https-alias-loop")))}},
			AAAA:  after("loop."+host("https-alias-loop"), typeHTTPS, Answer(V6Good1)), A: b(NoData()),
			Want: Expect{Winner: V6Good1, SVCB: state("alias-limit")}},
		aliasLimitRow(alias, rec, port, after, state),
		{Name: "https-malformed", About: "a malformed record (a 3-byte port) beside a good one: the good one is used, state answered",
			HTTPS: answer(malformed("port3"), rec(1, "svc."+host("https-malformed"), port(ServicePort))),
			Names: []Entry{{"svc." + host("https-malformed"), typeAAAA, Answer(V6Good1)}, {"svc." + host("https-malformed"), typeA, NoData()}},
			AAAA:  after("svc."+host("https-malformed"), typeAAAA, Delayed(100*ms, V6Good2)), A: b(NoData()),
			Want: Expect{Winner: V6Good1, Port: ServicePort, SVCB: served(1, "svc."+host("https-malformed"), ServicePort, h11, false)}},
		{Name: "https-malformed-only", About: "only malformed records: state malformed, the origin is used",
			HTTPS: answer(malformed("port3"), malformed("alpn-empty")),
			AAAA:  afterHTTPS(Answer(V6Good1)), A: b(NoData()),
			Want: Expect{Winner: V6Good1, SVCB: state("malformed")}},
		{Name: "https-late-joins", About: "HTTPS answered 200 ms after AAAA: the origin is tried after the Resolution Delay, the late service joins and wins",
			HTTPS: after(host("https-late-joins"), typeAAAA, Behaviour{Delay: 200 * ms,
				HTTPS: []testdns.HTTPSRecord{rec(1, "svc."+host("https-late-joins"), port(ServicePort), hint6(V6Good1))}}),
			Names: never("svc." + host("https-late-joins")),
			AAAA:  b(Answer(V6Blackhole1)), A: b(NoData()),
			Want: Expect{Winner: V6Good1, Port: ServicePort, SVCB: served(1, "svc."+host("https-late-joins"), ServicePort, h11, false),
				FirstAttempt: on(V6Blackhole1, DefaultPort)},
			IdealMS: 300},
		// A client that waited for the HTTPS answer would wait for its
		// resolver's timeout, 1 s (the bed's resolv.conf): the bound is
		// below it.
		{Name: "https-silent", About: "HTTPS never answered: the origin after the Resolution Delay, never the resolver's 1 s; state timeout",
			// One family only: which of two answers reaches the race first
			// is the client's threads' luck on a loaded machine, and this
			// row is about the HTTPS wait, not the family order.
			HTTPS: b(NeverAnswer()),
			AAAA:  b(Answer(V6Good1)), A: b(NoData()),
			Want: Expect{Winner: V6Good1, SVCB: state("timeout")}, IdealMS: 50, BoundMS: 900},
		{Name: "https-servfail", About: "HTTPS SERVFAIL: state failed, the origin is used",
			HTTPS: b(ServFail()), AAAA: afterHTTPS(Answer(V6Good1)), A: b(NoData()),
			Want: Expect{Winner: V6Good1, SVCB: state("failed")}},
		{Name: "https-nxdomain", About: "HTTPS NXDOMAIN (the query name does not exist): state nxdomain, the origin is used",
			HTTPS: b(NXDomain()), AAAA: afterHTTPS(Answer(V6Good1)), A: b(NoData()),
			Want: Expect{Winner: V6Good1, SVCB: state("nxdomain")}},
		{Name: "https-nodata", About: "HTTPS NODATA: state nodata, the origin is used",
			HTTPS: b(NoData()), AAAA: afterHTTPS(Answer(V6Good1)), A: b(NoData()),
			Want: Expect{Winner: V6Good1, SVCB: state("nodata")}},
		{Name: "https-ech", About: "--ech: the service with an ECH configuration wins and says so",
			Args:  []string{"--https-rr", "--ech"},
			HTTPS: answer(rec(1, "svc."+host("https-ech"), port(ServicePort), echCfg, hint6(V6Good1))),
			Names: never("svc." + host("https-ech")),
			AAAA:  afterHTTPS(Answer(V6Good2)), A: b(NoData()),
			Want: Expect{Winner: V6Good1, Port: ServicePort, SVCB: served(1, "svc."+host("https-ech"), ServicePort, h11, true)}},
		{Name: "https-ech-no-fallback", About: "--ech, every service has ECH and refuses: the origin is never tried (RFC 9848), the connect fails",
			Args: []string{"--https-rr", "--ech"},
			HTTPS: answer(rec(1, "s1."+host("https-ech-no-fallback"), port(ClosedPort), echCfg, hint6(V6Good1)),
				rec(2, "s2."+host("https-ech-no-fallback"), port(ClosedPort), echCfg, hint6(V6Good2))),
			Names: append(noData("s1."+host("https-ech-no-fallback")), noData("s2."+host("https-ech-no-fallback"))...),
			AAAA:  afterHTTPS(Answer(V6Good2)), A: b(NoData()),
			Want: Expect{Errno: "ECONNREFUSED", SVCB: state("answered")}},
		{Name: "https-ech-mixed", About: "--ech, one service without ECH: when both refuse, the origin is tried",
			Args: []string{"--https-rr", "--ech"},
			HTTPS: answer(rec(1, "s1."+host("https-ech-mixed"), port(ClosedPort), echCfg, hint6(V6Good1)),
				rec(2, "s2."+host("https-ech-mixed"), port(ClosedPort), hint6(V6Good2))),
			Names: append(noData("s1."+host("https-ech-mixed")), noData("s2."+host("https-ech-mixed"))...),
			AAAA:  afterHTTPS(Answer(V6Good2)), A: b(NoData()),
			Want: Expect{Winner: V6Good2, SVCB: state("answered")}},
	}
	for i := range rows {
		if rows[i].Args == nil {
			rows[i].Args = https
		}
	}
	return rows
}

// aliasLimitRow is a chain of nine aliases, one beyond the limit of eight
// (race.DefaultAliasLimit): the eighth answer ends the query with
// alias-limit. The ninth name has a service a client without the limit
// would use.
func aliasLimitRow(alias func(string) testdns.HTTPSRecord, rec func(uint16, string, ...dns.SVCBKeyValue) testdns.HTTPSRecord,
	port func(uint16) dns.SVCBKeyValue, after func(string, uint16, Behaviour) *Behaviour, state func(string) *contract.SVCB) Scenario {
	const row = "https-alias-limit"
	link := func(i int) string { return "c" + string(rune('0'+i)) + "." + name(row) }
	var names []Entry
	for i := 1; i <= 8; i++ {
		names = append(names, Entry{link(i), typeHTTPS, testdns.AnswerHTTPS(alias(link(i + 1)))})
	}
	names = append(names, Entry{link(9), typeHTTPS, testdns.AnswerHTTPS(rec(1, ".", port(ServicePort)))},
		Entry{link(9), typeAAAA, Answer(V6Good2)}, Entry{link(9), typeA, NoData()})
	return Scenario{Name: row, About: "a chain of nine aliases, one beyond the limit of eight: state alias-limit, the origin is used",
		HTTPS: &Behaviour{HTTPS: []testdns.HTTPSRecord{alias(link(1))}}, Names: names,
		AAAA: after(link(8), typeHTTPS, Answer(V6Good1)), A: b(NoData()),
		Want:    Expect{Winner: V6Good1, SVCB: state("alias-limit")},
		Queries: []QueryCheck{{link(8), typeHTTPS, true}, {link(9), typeHTTPS, false}}}
}
