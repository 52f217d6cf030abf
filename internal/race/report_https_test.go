package race

import (
	"net/netip"
	"reflect"
	"syscall"
	"testing"
)

// The HTTPS part of the report (HTTPSReport), built from scripted races
// as every other part: every query, every service, every record set
// aside, every replaced hint, and each attempt's service and origin.

func TestReportOfARaceWithServicesAliasesAndAReplacedHint(t *testing.T) {
	cfg := httpsConfig()
	h := newHarness(t, cfg)
	h.start()
	h.step(1, httpsAnswer(1, &ServiceAnswer{Alias: "cdn.test."}))
	ech := []byte{0xfe, 0x0d}
	h.step(2, httpsAnswer(2, &ServiceAnswer{Records: []ServiceRecord{
		{Priority: 1, Target: "svc.test.", Port: 9443, IPv4Hint: []netip.Addr{hintV4}, IPv6Hint: []netip.Addr{hintV6}, ECH: ech},
		// h3 only: never over TCP.
		{Priority: 1, Target: ".", ALPN: []string{"h3"}, NoDefaultALPN: true},
		// An unknown mandatory key.
		{Priority: 3, Target: "x.test.", Keys: []SvcParamKey{KeyMandatory, 65000}, Mandatory: []SvcParamKey{65000}},
	}})) // hintV6 at once: the answer is final, the hints race
	h.step(10, targetAnswer(4, IPv4, svcV4)) // replaces the untried IPv4 hint
	h.step(20, answered(IPv6, v6a), answered(IPv4, v4a))
	h.step(30, refused(0)) // svcV4 on the service's port
	h.step(40, connected(1))

	rep, err := NewReport(h.trace)
	if err != nil {
		t.Fatalf("NewReport: %v", err)
	}
	want := &HTTPSReport{
		State: HTTPSAnswered,
		Lookups: []ServiceLookupReport{
			{Query: QueryHTTPS, Name: "example.test.", State: ServiceLookupAnswered, Start: 0, End: ms(1)},
			{Query: QueryHTTPS, Name: "cdn.test.", State: ServiceLookupAnswered, Start: ms(1), End: ms(2), Records: 3},
			{Query: QueryAAAA, Name: "svc.test.", State: ServiceLookupCanceled, Start: ms(2), End: ms(40)},
			{Query: QueryA, Name: "svc.test.", State: ServiceLookupAnswered, Start: ms(2), End: ms(10), Addrs: []netip.Addr{svcV4}},
		},
		Services: []ServiceReport{{
			Number:  1,
			Service: Service{Priority: 1, Target: "svc.test.", Port: 9443, ALPN: []string{"http/1.1"}, ECH: ech},
			Hints:   []netip.Addr{hintV6, hintV4},
		}},
		Skipped: []SkippedRecord{
			{At: ms(2), Priority: 1, Target: ".", Reason: "no protocol in common (h3)"},
			{At: ms(2), Priority: 3, Target: "x.test.", Reason: "mandatory key65000 unknown"},
		},
		Replaced: []ReplacedHint{{At: ms(10), Service: 1, Addr: ap(hintV4, 9443)}},
	}
	if !reflect.DeepEqual(rep.HTTPS, want) {
		t.Errorf("HTTPS\n got %+v\nwant %+v", rep.HTTPS, want)
	}
	wantAttempts := []AttemptReport{
		{Addr: ap(hintV6, 9443), Family: IPv6, Start: ms(2), End: ms(30), Outcome: AttemptFailed, Err: syscall.ECONNREFUSED, Origin: OriginHint, Service: 1},
		{Addr: ap(svcV4, 9443), Family: IPv4, Start: ms(30), End: ms(40), Outcome: AttemptConnected, Origin: OriginService, Service: 1},
	}
	if !reflect.DeepEqual(rep.Attempts, wantAttempts) {
		t.Errorf("attempts\n got %+v\nwant %+v", rep.Attempts, wantAttempts)
	}
	if !rep.Connected || rep.Winner != 1 || rep.Reason != ReasonOtherFamilyFailed {
		t.Errorf("report %+v: want attempt 1 winning, the other family failed", rep)
	}
	// The report's services are the outcome's.
	if out := h.m.HTTPS(); len(out.Services) != 1 || !reflect.DeepEqual(out.Services[0], rep.HTTPS.Services[0].Service) {
		t.Errorf("outcome's services %+v, report's %+v", out.Services, rep.HTTPS.Services)
	}
}

// Each way the HTTPS query can end, in the report: its state, and its
// lookups' ends.
func TestReportOfTheHTTPSQuerysEnds(t *testing.T) {
	cases := []struct {
		name    string
		cfg     func(*MachineConfig)
		run     func(h *harness)
		state   HTTPSState
		lookups []ServiceLookupReport
		origins []Origin
	}{
		{"nxdomain: the origin's addresses", nil, func(h *harness) {
			h.start()
			h.step(3, httpsFailed(1, EAI_NONAME))
			h.step(5, answered(IPv6, v6a))
			h.step(6, connected(0))
		}, HTTPSNXDomain, []ServiceLookupReport{
			{Query: QueryHTTPS, Name: "example.test.", State: ServiceLookupFailed, End: ms(3), Err: &ResolveError{Host: "example.test", Code: EAI_NONAME}},
		}, []Origin{OriginDNS}},
		{"pending: the race won before the answer", nil, func(h *harness) {
			h.start()
			h.step(5, answered(IPv6, v6a)) // waits for HTTPS until 55
			h.step(55)
			h.step(60, connected(0))
		}, HTTPSPending, []ServiceLookupReport{
			{Query: QueryHTTPS, Name: "example.test.", State: ServiceLookupCanceled, End: ms(60)},
		}, []Origin{OriginDNS}},
		{"timeout: resolv_timeout gave the query up", func(c *MachineConfig) { c.ResolvTimeout = ms(100) }, func(h *harness) {
			h.start()
			h.step(100) // nothing answered
		}, HTTPSTimeout, []ServiceLookupReport{
			{Query: QueryHTTPS, Name: "example.test.", State: ServiceLookupCanceled, End: ms(100)},
		}, nil},
		{"alias limit", func(c *MachineConfig) { c.HTTPS.AliasLimit = 1 }, func(h *harness) {
			h.start()
			h.step(1, httpsAnswer(1, &ServiceAnswer{Alias: "a1.test."}))
			h.step(2, httpsAnswer(2, &ServiceAnswer{Alias: "a2.test."}))
			h.step(3, answered(IPv4, v4a), lookupFailed(IPv6, EAI_NODATA))
			h.step(4, connected(0))
		}, HTTPSAliasLimit, []ServiceLookupReport{
			{Query: QueryHTTPS, Name: "example.test.", State: ServiceLookupAnswered, End: ms(1)},
			{Query: QueryHTTPS, Name: "a1.test.", State: ServiceLookupAnswered, Start: ms(1), End: ms(2)},
		}, []Origin{OriginDNS}},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			cfg := httpsConfig()
			if c.cfg != nil {
				c.cfg(&cfg)
			}
			h := newHarness(t, cfg)
			c.run(h)
			rep, err := NewReport(h.trace)
			if err != nil {
				t.Fatalf("NewReport: %v", err)
			}
			if rep.HTTPS == nil {
				t.Fatal("no HTTPS part")
			}
			if rep.HTTPS.State != c.state || rep.HTTPS.State != h.m.HTTPS().State {
				t.Errorf("state %v (the outcome's %v), want %v", rep.HTTPS.State, h.m.HTTPS().State, c.state)
			}
			if !reflect.DeepEqual(rep.HTTPS.Lookups, c.lookups) {
				t.Errorf("lookups\n got %+v\nwant %+v", rep.HTTPS.Lookups, c.lookups)
			}
			if len(rep.HTTPS.Services)+len(rep.HTTPS.Skipped)+len(rep.HTTPS.Replaced) != 0 {
				t.Errorf("services, skipped records or replaced hints in %+v", rep.HTTPS)
			}
			var origins []Origin
			for _, a := range rep.Attempts {
				origins = append(origins, a.Origin)
				if a.Service != 0 {
					t.Errorf("attempt %+v counted to a service", a)
				}
			}
			if !reflect.DeepEqual(origins, c.origins) {
				t.Errorf("origins %v, want %v", origins, c.origins)
			}
		})
	}
}

// A race without the HTTPS part has none in its report, and its trace
// carries no service events.
func TestReportWithoutHTTPSHasNoHTTPSPart(t *testing.T) {
	h := newHarness(t, testConfig())
	h.start()
	h.step(1, answered(IPv6, v6a), answered(IPv4, v4a))
	h.step(2, connected(0))
	rep, err := NewReport(h.trace)
	if err != nil || rep.HTTPS != nil {
		t.Fatalf("report %+v, %v: want no HTTPS part", rep, err)
	}
	if a := rep.Attempts[0]; a.Origin != OriginDNS || a.Service != 0 {
		t.Fatalf("attempt %+v: want the origin's DNS answer", a)
	}
}

func TestReportRefusesABadHTTPSPart(t *testing.T) {
	bad := [][]TraceEvent{
		// An answer never asked.
		{{Kind: TraceServiceLookupAnswered, Query: QueryHTTPS, Detail: "example.test."}, {Kind: TraceDone}},
		// Answered twice.
		{
			{Kind: TraceServiceLookupStarted, Query: QueryA, Detail: "svc.test."},
			{Kind: TraceServiceLookupAnswered, Query: QueryA, Detail: "svc.test."},
			{Kind: TraceServiceLookupFailed, Query: QueryA, Detail: "svc.test."},
			{Kind: TraceDone},
		},
		// A state of no name.
		{{Kind: TraceServiceState, Detail: "sideways"}, {Kind: TraceDone}},
	}
	for i, evs := range bad {
		if _, err := NewReport(evs); err != ErrBadTrace {
			t.Errorf("bad trace %d: %v", i, err)
		}
	}
	// Names compare as DNS names: the end of "SVC.test" ends "svc.test.".
	evs := []TraceEvent{
		{Kind: TraceServiceLookupStarted, Query: QueryA, Detail: "svc.test."},
		{Kind: TraceServiceLookupFailed, Query: QueryA, Detail: "SVC.test"},
		{Kind: TraceDone},
	}
	rep, err := NewReport(evs)
	if err != nil || rep.HTTPS.Lookups[0].State != ServiceLookupFailed || rep.HTTPS.State != HTTPSPending {
		t.Fatalf("report %+v, %v", rep.HTTPS, err)
	}
}

func TestServiceLookupStatesNamed(t *testing.T) {
	seen := map[string]bool{}
	for s := ServiceLookupPending; s <= ServiceLookupCanceled; s++ {
		if n := s.String(); n == "unknown" || seen[n] {
			t.Fatalf("service lookup state %d named %q", s, n)
		}
		seen[s.String()] = true
	}
	for s := HTTPSPending; s <= HTTPSAliasLimit; s++ {
		if got, ok := httpsStateNamed(s.String()); !ok || got != s {
			t.Fatalf("state %v read back as %v", s, got)
		}
	}
}
