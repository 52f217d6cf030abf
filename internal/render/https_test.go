package render_test

import (
	"bytes"
	"errors"
	"net/netip"
	"strings"
	"testing"
	"time"

	"github.com/hev2/hev2/internal/race"
	"github.com/hev2/hev2/internal/render"
	"github.com/hev2/hev2/tests/tracecheck"
)

// httpsRace is a Happy Eyeballs v3 race as the machine traces it: the
// HTTPS answer gives one service on port 8090 with two ipv6hints, the first
// hint is tried (a blackhole), the target's AAAA replaces the second, and
// its address wins one attempt delay later.
func httpsRace() ([]race.TraceEvent, render.Meta) {
	ms := func(n float64) time.Duration { return time.Duration(n * float64(time.Millisecond)) }
	a := netip.MustParseAddr
	ap := netip.MustParseAddrPort
	qname, target := "_8080._https.x.hev2.test.", "svc.x.hev2.test."
	events := []race.TraceEvent{
		{At: 0, Kind: race.TraceServiceLookupStarted, Query: race.QueryHTTPS, Detail: qname},
		{At: 0, Kind: race.TraceLookupStarted, Family: race.IPv6},
		{At: 0, Kind: race.TraceLookupStarted, Family: race.IPv4},
		{At: ms(5), Kind: race.TraceServiceLookupAnswered, Query: race.QueryHTTPS, Detail: qname, Attempt: 1},
		{At: ms(5), Kind: race.TraceServiceState, Detail: "answered", Attempt: 1},
		{At: ms(5), Kind: race.TraceServiceAdded, Attempt: 1, Detail: "priority 1 target " + target + " port 8090 alpn h2,http/1.1 ech",
			Addrs: []netip.Addr{a("2001:db8::20"), a("2001:db8::21")}},
		{At: ms(5), Kind: race.TraceServiceLookupStarted, Query: race.QueryAAAA, Detail: target},
		{At: ms(5), Kind: race.TraceServiceLookupStarted, Query: race.QueryA, Detail: target},
		{At: ms(5), Kind: race.TraceAttemptStarted, Attempt: 0, Addr: ap("[2001:db8::20]:8090")},
		{At: ms(5), Kind: race.TraceAttemptDelay, Until: ms(255)},
		{At: ms(8), Kind: race.TraceLookupAnswered, Family: race.IPv6, Addrs: []netip.Addr{a("2001:db8::30")}},
		{At: ms(9), Kind: race.TraceServiceLookupAnswered, Query: race.QueryAAAA, Detail: target, Addrs: []netip.Addr{a("2001:db8::10")}},
		{At: ms(9), Kind: race.TraceEndpointRemoved, Attempt: 1, Addr: ap("[2001:db8::21]:8090")},
		{At: ms(10), Kind: race.TraceLookupFailed, Family: race.IPv4, Err: &race.ResolveError{Host: "x.hev2.test", Family: race.IPv4, Code: race.EAI_NODATA}},
		{At: ms(10), Kind: race.TraceServiceLookupFailed, Query: race.QueryA, Detail: target, Err: &race.ResolveError{Host: "svc.x.hev2.test", Family: race.IPv4, Code: race.EAI_NODATA}},
		{At: ms(255), Kind: race.TraceAttemptStarted, Attempt: 1, Addr: ap("[2001:db8::10]:8090")},
		{At: ms(256), Kind: race.TraceAttemptWon, Attempt: 1, Addr: ap("[2001:db8::10]:8090")},
		{At: ms(256), Kind: race.TraceAttemptClosed, Attempt: 0, Addr: ap("[2001:db8::20]:8090")},
		{At: ms(256), Kind: race.TraceDone},
	}
	return events, render.Meta{Host: "x.hev2.test", Port: 8080, ResolutionDelay: 50 * time.Millisecond, ConnectionAttemptDelay: 250 * time.Millisecond}
}

func TestQlogHTTPS(t *testing.T) {
	events, meta := httpsRace()
	var b bytes.Buffer
	if err := render.WriteQlog(&b, events, meta); err != nil {
		t.Fatal(err)
	}
	q, err := tracecheck.CheckQlog(b.Bytes())
	if err != nil {
		t.Fatalf("%v\n%s", err, b.String())
	}
	if q.HTTPSQueries != 1 || q.Candidates["svcb_hint"] != 2 || q.Candidates["dns"] != 2 || q.Removed != 1 || q.Attempts != 2 {
		t.Errorf("HTTPS queries %d, candidates %v, removed %d, attempts %d; want 1, 2 hints and 2 from DNS (the origin's and the target's), 1, 2",
			q.HTTPSQueries, q.Candidates, q.Removed, q.Attempts)
	}
	out := b.String()
	for _, want := range []string{
		`"qtypes":["HTTPS"]`,
		`{"type":"service","mode":"servicemode","target_name":"svc.x.hev2.test.","priority":1,"alpn":["h2","http/1.1"],"ipv6hint":["2001:db8::20","2001:db8::21"]}`,
		`"source":"svcb_hint","target":{"address":"2001:db8::21","port":8090,"family":"ipv6","transport":"tcp","alpn":["h2","http/1.1"],"service_name":"svc.x.hev2.test","service_priority":1,"ech_offered":true},"group_id":"service 1"`,
		`"source":"dns","target":{"address":"2001:db8::10","port":8090`,
		`"source":"dns","target":{"address":"2001:db8::30","port":8080,"family":"ipv6","transport":"tcp"}}`,
		`"name":"hev3:candidate_removed","data":{"he_session_id":"1","target":{"address":"2001:db8::21","port":8090`,
		`"reason":"svcb_hint_replaced"`,
		`"dns_id":"AAAA svc.x.hev2.test.","hostname":"svc.x.hev2.test","qtypes":["AAAA"]`,
		`"name":"hev2:https_state","data":{"he_session_id":"1","state":"answered","services":1}`,
		`"attempt_id":"1","target":{"address":"2001:db8::10","port":8090,"family":"ipv6","transport":"tcp","alpn":["h2","http/1.1"],"service_name":"svc.x.hev2.test"`,
	} {
		if !strings.Contains(out, want) {
			t.Errorf("qlog lacks %s", want)
		}
	}
	// A file whose HTTPS part breaks the draft is refused.
	for name, bad := range map[string]string{
		"unknown qtype":         strings.Replace(out, `"qtypes":["HTTPS"]`, `"qtypes":["SRV"]`, 1),
		"unknown removal":       strings.Replace(out, `"svcb_hint_replaced"`, `"replaced"`, 1),
		"unknown mode":          strings.Replace(out, `"mode":"servicemode"`, `"mode":"service"`, 1),
		"finished, not started": strings.Replace(out, `"dns_id":"AAAA svc.x.hev2.test.","hostname":"svc.x.hev2.test","qtypes"`, `"dns_id":"other","hostname":"svc.x.hev2.test","qtypes"`, 1),
	} {
		if _, err := tracecheck.CheckQlog([]byte(bad)); err == nil {
			t.Errorf("%s: accepted", name)
		}
	}
}

// The alias chain: each HTTPS answer that leads on is an AliasMode result,
// and the queries of alias targets follow an alias.
func TestQlogHTTPSAlias(t *testing.T) {
	events := []race.TraceEvent{
		{At: 0, Kind: race.TraceServiceLookupStarted, Query: race.QueryHTTPS, Detail: "x.test."},
		{At: 1, Kind: race.TraceServiceLookupAnswered, Query: race.QueryHTTPS, Detail: "x.test."},
		{At: 1, Kind: race.TraceServiceLookupStarted, Query: race.QueryHTTPS, Detail: "a.test."},
		{At: 2, Kind: race.TraceServiceLookupFailed, Query: race.QueryHTTPS, Detail: "a.test.", Err: errors.New("SERVFAIL")},
		{At: 2, Kind: race.TraceServiceState, Detail: "failed"},
		{At: 3, Kind: race.TraceDone, Err: errors.New("no address")},
	}
	var b bytes.Buffer
	if err := render.WriteQlog(&b, events, render.Meta{Host: "x.test", Port: 443}); err != nil {
		t.Fatal(err)
	}
	if _, err := tracecheck.CheckQlog(b.Bytes()); err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{`"results":[{"type":"service","mode":"alias","target_name":"a.test."}]`, `"is_alias_follow":true`, `"answer_type":"error"`} {
		if !strings.Contains(b.String(), want) {
			t.Errorf("qlog lacks %s", want)
		}
	}
}

func TestSVGAndChromeHTTPS(t *testing.T) {
	events, meta := httpsRace()
	var b bytes.Buffer
	if err := render.WriteSVG(&b, events, meta); err != nil {
		t.Fatal(err)
	}
	svg, err := tracecheck.CheckSVG(b.Bytes())
	if err != nil {
		t.Fatal(err)
	}
	var services []tracecheck.Lane
	for _, l := range svg.Lanes {
		if l.Kind == "service" {
			services = append(services, l)
		}
	}
	want := []tracecheck.Lane{{Kind: "service", Query: "HTTPS", Outcome: "answered"}, {Kind: "service", Query: "AAAA", Outcome: "answered"},
		{Kind: "service", Query: "A", Outcome: "failed"}}
	if len(services) != len(want) {
		t.Fatalf("service lanes %+v, want %+v", services, want)
	}
	for i := range want {
		if services[i] != want[i] {
			t.Errorf("service lane %d: %+v, want %+v", i, services[i], want[i])
		}
	}
	for _, text := range []string{"HTTPS _8080._https.x.hev2.test", "1 service record; 1 usable service", "AAAA svc.x.hev2.test", "1 address: 2001:db8::10",
		"service 1: priority 1 svc.x.hev2.test. port 8090 alpn h2,http/1.1 ech hints 2001:db8::20 2001:db8::21"} {
		if !strings.Contains(b.String(), text) {
			t.Errorf("SVG lacks %q", text)
		}
	}
	b.Reset()
	if err := render.WriteChromeTrace(&b, events, meta); err != nil {
		t.Fatal(err)
	}
	c, err := tracecheck.CheckChrome(b.Bytes())
	if err != nil {
		t.Fatal(err)
	}
	if c.Spans["service-lookup"] != 3 || c.Spans["lookup"] != 2 || c.Spans["attempt"] != 2 {
		t.Errorf("spans %v, want 3 service lookups, 2 lookups, 2 attempts", c.Spans)
	}
}
