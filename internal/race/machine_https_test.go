package race

import (
	"net/netip"
	"slices"
	"testing"
)

// The HTTPS part's rules under the fake clock (machine_https.go). The
// origin is example.test:443; its HTTPS query is service lookup 1.

var (
	svcV4  = netip.MustParseAddr("198.18.1.1")
	svcV4b = netip.MustParseAddr("198.18.1.2")
	hintV4 = netip.MustParseAddr("198.18.2.1")
	hintV6 = netip.MustParseAddr("2001:db8:2::1")
)

func httpsConfig() MachineConfig {
	cfg := testConfig()
	cfg.HTTPS = &HTTPSConfig{Name: "example.test.", ALPN: []string{"h2", "http/1.1"}, Seed: 1}
	return cfg
}

func httpsAnswer(n uint8, ans *ServiceAnswer) Event {
	return Event{Kind: EventLookupDone, Query: QueryHTTPS, Lookup: n, Answer: ans}
}

func httpsFailed(n uint8, code int) Event {
	return Event{Kind: EventLookupDone, Query: QueryHTTPS, Lookup: n, Err: &ResolveError{Host: "example.test", Code: code}}
}

func targetAnswer(n uint8, f Family, addrs ...netip.Addr) Event {
	return Event{Kind: EventLookupDone, Query: QueryFor(f), Lookup: n, Addrs: addrs}
}

// serviceLookups are the service lookups the actions start: "HTTPS name"
// or "A name" by their number.
func serviceLookups(h *harness, acts []Action) map[uint8]string {
	out := map[uint8]string{}
	for _, a := range acts {
		if a.Kind == ActionStartLookup && a.Lookup > 0 {
			out[a.Lookup] = a.Query.String() + " " + h.m.LookupName(a.Lookup)
		}
	}
	return out
}

func startedPorts(acts []Action) []netip.AddrPort {
	var out []netip.AddrPort
	for _, a := range acts {
		if a.Kind == ActionStartAttempt {
			out = append(out, a.Addr)
		}
	}
	return out
}

func (h *harness) wantStartedAt(acts []Action, want ...netip.AddrPort) {
	h.t.Helper()
	if got := startedPorts(acts); !slices.Equal(got, want) {
		h.t.Fatalf("started %v, want %v", got, want)
	}
}

func ap(a netip.Addr, port uint16) netip.AddrPort { return netip.AddrPortFrom(a, port) }

func TestQueryNameFollowsRFC9460(t *testing.T) {
	for _, c := range []struct {
		host string
		port uint16
		want string
	}{
		{"example.test", 443, "example.test."},
		{"example.test.", 443, "example.test."},
		{"example.test", 8443, "_8443._https.example.test."},
		{"example.test", 80, "_80._https.example.test."},
	} {
		if got := QueryName(c.host, c.port); got != c.want {
			t.Errorf("QueryName(%q, %d) = %q, want %q", c.host, c.port, got, c.want)
		}
	}
}

func TestHTTPSQueryAskedBesideTheAddressQueries(t *testing.T) {
	h := newHarness(t, httpsConfig())
	acts := h.start()
	if got := serviceLookups(h, acts); len(got) != 1 || got[1] != "HTTPS example.test." {
		t.Fatalf("service lookups %v, want HTTPS example.test. as lookup 1", got)
	}
	n := 0
	for _, a := range acts {
		if a.Kind == ActionStartLookup && a.Lookup == 0 {
			n++
		}
	}
	if n != 2 {
		t.Fatalf("%d address lookups of the host, want 2 (AAAA, A)", n)
	}
}

// Services by priority, their ports, hints before the target answers; the
// origin's addresses last.
func TestHTTPSServicesInPriorityOrderWithTheirPortsOriginLast(t *testing.T) {
	h := newHarness(t, httpsConfig())
	h.start()
	acts := h.step(5, httpsAnswer(1, &ServiceAnswer{Records: []ServiceRecord{
		{Priority: 2, Target: ".", Port: 8443},
		{Priority: 1, Target: "svc.test.", Port: 9443, IPv4Hint: []netip.Addr{hintV4}},
	}}))
	if got := serviceLookups(h, acts); got[2] != "AAAA svc.test." || got[3] != "A svc.test." {
		t.Fatalf("service lookups %v, want svc.test.'s AAAA and A", got)
	}
	// The HTTPS answer is in before any address answer: the hint races at
	// once, on the service's port.
	h.wantStartedAt(acts, ap(hintV4, 9443))
	acts = h.step(10, answered(IPv6, v6a), answered(IPv4, v4a))
	h.wantStartedAt(acts) // the attempt delay runs
	// Then service 2 (the origin's addresses on 8443), IPv6 first, then the
	// origin's own on 443.
	acts = h.step(260, refused(0))
	h.wantStartedAt(acts, ap(v6a, 8443))
	acts = h.step(270, refused(1))
	h.wantStartedAt(acts, ap(v4a, 8443))
	acts = h.step(280, refused(2))
	h.wantStartedAt(acts, ap(v6a, 443))
	acts = h.step(290, connected(3))
	h.wantWinner(acts, 3)
	out := h.m.HTTPS()
	if out.State != HTTPSAnswered || out.Winner != -1 || out.WinnerService() != nil {
		t.Fatalf("outcome %+v: want answered, the origin's address winning", out)
	}
}

func TestHTTPSTargetAnswerReplacesUntriedHints(t *testing.T) {
	h := newHarness(t, httpsConfig())
	h.start()
	h.step(1, answered(IPv6, v6a), answered(IPv4, v4a))
	acts := h.step(5, httpsAnswer(1, &ServiceAnswer{Records: []ServiceRecord{
		{Priority: 1, Target: "svc.test.", IPv4Hint: []netip.Addr{hintV4}, IPv6Hint: []netip.Addr{hintV6}},
	}}))
	h.wantStartedAt(acts, ap(hintV6, 443)) // hints first: IPv6's tried
	// svc.test.'s A answer replaces the untried IPv4 hint.
	acts = h.step(20, targetAnswer(3, IPv4, svcV4, svcV4b))
	h.wantStartedAt(acts)
	removed := false
	for _, ev := range h.trace {
		if ev.Kind == TraceEndpointRemoved && ev.Addr == ap(hintV4, 443) {
			removed = true
		}
	}
	if !removed {
		t.Fatal("the IPv4 hint was not reported removed")
	}
	acts = h.step(30, refused(0))
	h.wantStartedAt(acts, ap(svcV4, 443))
	acts = h.step(40, connected(1))
	h.wantWinner(acts, 1)
	if s := h.m.HTTPS().WinnerService(); s == nil || s.Target != "svc.test." || !slices.Equal(s.ALPN, []string{"http/1.1"}) {
		t.Fatalf("winner's service %+v, want svc.test. with ALPN [http/1.1]", s)
	}
}

func TestHTTPSRecordsTheRulesSetAside(t *testing.T) {
	h := newHarness(t, httpsConfig())
	h.start()
	h.step(1, answered(IPv6, v6a), answered(IPv4, v4a))
	acts := h.step(5, httpsAnswer(1, &ServiceAnswer{Records: []ServiceRecord{
		// An unknown mandatory key: ignored.
		{Priority: 1, Target: ".", Port: 1001, Keys: []SvcParamKey{KeyMandatory, 65000}, Mandatory: []SvcParamKey{65000}},
		// h3 only: never over TCP.
		{Priority: 1, Target: ".", Port: 1002, ALPN: []string{"h3"}, NoDefaultALPN: true},
		// A known mandatory key and h2: used.
		{Priority: 3, Target: ".", Port: 1003, ALPN: []string{"h2"}, Keys: []SvcParamKey{KeyMandatory, KeyALPN, KeyPort}, Mandatory: []SvcParamKey{KeyALPN}},
		// A mandatory key the record does not carry: malformed.
		{Priority: 2, Target: ".", Port: 1004, Keys: []SvcParamKey{KeyMandatory, KeyPort}, Mandatory: []SvcParamKey{KeyALPN}},
	}}))
	h.wantStartedAt(acts, ap(v6a, 1003))
	out := h.m.HTTPS()
	if len(out.Services) != 1 || out.Services[0].Port != 1003 || !slices.Equal(out.Services[0].ALPN, []string{"h2", "http/1.1"}) {
		t.Fatalf("services %+v, want only the port-1003 one, ALPN h2 and http/1.1", out.Services)
	}
	skipped := 0
	for _, ev := range h.trace {
		if ev.Kind == TraceServiceSkipped {
			skipped++
		}
	}
	if skipped != 3 {
		t.Fatalf("%d records reported skipped, want 3", skipped)
	}
}

func TestHTTPSAliasChainFollowedAndBounded(t *testing.T) {
	cfg := httpsConfig()
	cfg.HTTPS.AliasLimit = 2
	h := newHarness(t, cfg)
	h.start()
	acts := h.step(1, httpsAnswer(1, &ServiceAnswer{Alias: "a1.test."}))
	if got := serviceLookups(h, acts); got[2] != "HTTPS a1.test." {
		t.Fatalf("service lookups %v, want a1.test.'s HTTPS", got)
	}
	acts = h.step(2, httpsAnswer(2, &ServiceAnswer{Alias: "a2.test."}))
	if got := serviceLookups(h, acts); got[3] != "HTTPS a2.test." {
		t.Fatalf("service lookups %v, want a2.test.'s HTTPS", got)
	}
	h.step(3, httpsAnswer(3, &ServiceAnswer{Alias: "a3.test."}))
	if out := h.m.HTTPS(); out.State != HTTPSAliasLimit || len(out.Services) != 0 {
		t.Fatalf("outcome %+v, want alias-limit", out)
	}
	acts = h.step(4, answered(IPv6, v6a))
	h.wantStartedAt(acts, ap(v6a, 443)) // the origin's addresses stand

	// A chain that ends without ServiceMode records uses its last
	// target's addresses.
	h = newHarness(t, httpsConfig())
	h.start()
	h.step(1, httpsAnswer(1, &ServiceAnswer{Alias: "cdn.test."}))
	acts = h.step(2, httpsFailed(2, EAI_NODATA))
	if got := serviceLookups(h, acts); got[3] != "AAAA cdn.test." || got[4] != "A cdn.test." {
		t.Fatalf("service lookups %v, want cdn.test.'s addresses", got)
	}
	acts = h.step(3, targetAnswer(4, IPv4, svcV4))
	h.wantStartedAt(acts, ap(svcV4, 443))
	acts = h.step(4, answered(IPv4, v4a), refused(0))
	h.wantStartedAt(acts, ap(v4a, 443)) // the origin's own, last
}

// The HTTPS answer is waited for at most the Resolution Delay once an
// address answer is in; a later answer joins the race.
func TestHTTPSWaitedForAtMostTheResolutionDelay(t *testing.T) {
	h := newHarness(t, httpsConfig())
	h.start()
	acts := h.step(10, answered(IPv6, v6a), answered(IPv4, v4a))
	h.wantStartedAt(acts)
	h.wantTimer(acts, 60)
	acts = h.step(60)
	h.wantStartedAt(acts, ap(v6a, 443))
	acts = h.step(100, httpsAnswer(1, &ServiceAnswer{Records: []ServiceRecord{{Priority: 1, Target: ".", Port: 8443}}}))
	h.wantStartedAt(acts)
	acts = h.step(110, refused(0))
	// The service (the origin's addresses on 8443) comes before the
	// origin's untried IPv4.
	h.wantStartedAt(acts, ap(v6a, 8443))
}

func TestHTTPSWithECHWaitsForTheAnswerAndNeverFallsBack(t *testing.T) {
	cfg := httpsConfig()
	cfg.HTTPS.ECH = true
	h := newHarness(t, cfg)
	h.start()
	acts := h.step(10, answered(IPv6, v6a), answered(IPv4, v4a))
	h.wantStartedAt(acts)
	acts = h.step(500)
	h.wantStartedAt(acts) // no resolution-delay shortcut with ECH
	ech := []byte{0, 1, 2}
	acts = h.step(600, httpsAnswer(1, &ServiceAnswer{Records: []ServiceRecord{{Priority: 1, Target: "svc.test.", IPv4Hint: []netip.Addr{hintV4}, ECH: ech}}}))
	h.wantStartedAt(acts, ap(hintV4, 443))
	acts = h.step(610, refused(0))
	h.wantStartedAt(acts) // the origin's addresses are not used
	acts = h.step(620, targetAnswer(2, IPv6), targetAnswer(3, IPv4))
	h.wantFailure(acts) // svc.test. has no addresses: nothing left
}

func TestHTTPSEqualPrioritiesShuffledFromTheSeed(t *testing.T) {
	order := func(seed uint64) []uint16 {
		cfg := httpsConfig()
		cfg.HTTPS.Seed = seed
		h := newHarness(t, cfg)
		h.start()
		var recs []ServiceRecord
		for p := uint16(1); p <= 6; p++ {
			recs = append(recs, ServiceRecord{Priority: 1 + p/4, Target: ".", Port: 1000 + p})
		}
		h.step(1, httpsAnswer(1, &ServiceAnswer{Records: recs}))
		var ports []uint16
		for _, s := range h.m.HTTPS().Services {
			ports = append(ports, s.Port)
		}
		return ports
	}
	a := order(7)
	if !slices.Equal(a, order(7)) {
		t.Fatal("one seed gave two orders")
	}
	for _, p := range a[:3] {
		if p > 1003 {
			t.Fatalf("order %v: a priority-2 service before a priority-1 one", a)
		}
	}
	differs := false
	for seed := uint64(1); seed < 20 && !differs; seed++ {
		differs = !slices.Equal(a, order(seed))
	}
	if !differs {
		t.Fatalf("20 seeds gave the same order %v: equal priorities are not shuffled", a)
	}
}

func TestHTTPSFailuresLeaveTheOriginsAddresses(t *testing.T) {
	for _, c := range []struct {
		ev   Event
		want HTTPSState
	}{
		{httpsFailed(1, EAI_NODATA), HTTPSNoData},
		{httpsFailed(1, EAI_NONAME), HTTPSNXDomain},
		{httpsFailed(1, EAI_AGAIN), HTTPSFailed},
		{Event{Kind: EventLookupDone, Query: QueryHTTPS, Lookup: 1, Err: &TimeoutError{Kind: TimeoutResolv}}, HTTPSTimeout},
		{httpsAnswer(1, &ServiceAnswer{Malformed: 2}), HTTPSMalformed},
	} {
		h := newHarness(t, httpsConfig())
		h.start()
		acts := h.step(1, c.ev, answered(IPv6, v6a))
		h.wantStartedAt(acts, ap(v6a, 443))
		if got := h.m.HTTPS().State; got != c.want {
			t.Errorf("%v: state %v, want %v", c.ev.Err, got, c.want)
		}
	}
}

// A race without HTTPS asks nothing more and its outcome says so.
func TestNoHTTPSPartWithoutTheOption(t *testing.T) {
	h := newHarness(t, testConfig())
	acts := h.start()
	if got := serviceLookups(h, acts); len(got) != 0 || h.m.HTTPS() != nil {
		t.Fatalf("service lookups %v without MachineConfig.HTTPS", got)
	}
}

// On an IPv6-only host with NAT64, an IPv4 hint is tried at its synthesis
// in the prefix, on the service's port.
func TestHTTPSIPv4HintSynthesizedThroughNAT64(t *testing.T) {
	cfg := httpsConfig()
	cfg.NAT64 = &NAT64Config{Prefixes: []netip.Prefix{pref96}}
	h := newHarness(t, cfg)
	h.start()
	acts := h.step(1, httpsAnswer(1, &ServiceAnswer{Records: []ServiceRecord{{Priority: 1, Target: "svc.test.", Port: 8443, IPv4Hint: []netip.Addr{hintV4}}}}))
	want := ap(Embed(pref96, hintV4), 8443)
	h.wantStartedAt(acts, want)
	acts = h.step(2, connected(0))
	h.wantWinner(acts, 0)
	res := h.m.Attempts()[0]
	if res.SynthesizedFrom != hintV4 {
		t.Fatalf("attempt %+v, want it synthesized from %v", res, hintV4)
	}
}
