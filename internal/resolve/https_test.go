package resolve

import (
	"context"
	"encoding/hex"
	"errors"
	"net"
	"net/netip"
	"reflect"
	"runtime"
	"sync/atomic"
	"testing"
	"time"

	"github.com/hev2/hev2/internal/race"
	"github.com/hev2/hev2/tests/testdns"
	"github.com/miekg/dns"
)

// HTTPS lookups against the test DNS server on loopback (newTestDNS: the
// resolver is given that server, never this machine's).

var (
	testECH = []byte{0, 5, 0xfe, 0x0d, 0, 1, 0x42} // opaque here: any bytes
	// goodHTTPS is a ServiceMode record with every key the race knows and
	// one it does not; goodRecord is how it reads.
	goodHTTPS = testdns.HTTPSRecord{Priority: 1, Target: ".", Params: []dns.SVCBKeyValue{
		&dns.SVCBMandatory{Code: []dns.SVCBKey{dns.SVCB_ALPN, 65000}},
		&dns.SVCBAlpn{Alpn: []string{"h2", "h3"}},
		&dns.SVCBNoDefaultAlpn{},
		&dns.SVCBPort{Port: 8443},
		&dns.SVCBIPv4Hint{Hint: []net.IP{net.ParseIP("198.18.0.10"), net.ParseIP("198.18.0.11")}},
		&dns.SVCBECHConfig{ECH: testECH},
		&dns.SVCBIPv6Hint{Hint: []net.IP{net.ParseIP("2001:db8::10")}},
		&dns.SVCBLocal{KeyCode: 65000, Data: []byte("x")},
	}}
	goodRecord = race.ServiceRecord{
		Priority:      1,
		Target:        ".",
		Keys:          []race.SvcParamKey{0, 1, 2, 3, 4, 5, 6, 65000},
		Mandatory:     []race.SvcParamKey{race.KeyALPN, 65000},
		ALPN:          []string{"h2", "h3"},
		NoDefaultALPN: true,
		Port:          8443,
		IPv4Hint:      []netip.Addr{netip.MustParseAddr("198.18.0.10"), netip.MustParseAddr("198.18.0.11")},
		IPv6Hint:      []netip.Addr{netip.MustParseAddr("2001:db8::10")},
		ECH:           testECH,
	}
	plainHTTPS  = testdns.HTTPSRecord{Priority: 2, Target: "Alt.Svc.test"}
	plainRecord = race.ServiceRecord{Priority: 2, Target: "alt.svc.test."}
)

// lookupHTTPS runs one HTTPS lookup under an outer deadline (a resolver
// that hangs fails the test) and checks that no socket stays open.
func lookupHTTPS(t *testing.T, r HTTPSResolver, name string) (*race.ServiceAnswer, error) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 20*hostileTimeout)
	defer cancel()
	ans, err := r.LookupHTTPS(ctx, name)
	if errors.Is(err, context.DeadlineExceeded) {
		t.Fatalf("%s HTTPS: still busy when the outer deadline passed (a hang)", name)
	}
	if d, ok := r.(*DNSResolver); ok && d.Stats().OpenSockets != 0 {
		t.Errorf("%s HTTPS: %d sockets open after the lookup", name, d.Stats().OpenSockets)
	}
	return ans, err
}

func wantAnswer(t *testing.T, name string, got *race.ServiceAnswer, err error, want race.ServiceAnswer) {
	t.Helper()
	if err != nil || got == nil || !reflect.DeepEqual(*got, want) {
		t.Errorf("%s HTTPS: %+v %v,\nwant %+v", name, got, err, want)
	}
}

func TestHTTPSServiceMode(t *testing.T) {
	r, srv := newHostileDNS(t, DNSConfig{})
	srv.Set("svc.test", dns.TypeHTTPS, testdns.AnswerHTTPS(goodHTTPS, plainHTTPS))
	for _, name := range []string{"svc.test", "SVC.Test."} {
		ans, err := lookupHTTPS(t, r, name)
		wantAnswer(t, name, ans, err, race.ServiceAnswer{Records: []race.ServiceRecord{goodRecord, plainRecord}})
	}
	if qs := srv.Queries("svc.test"); len(qs) != 2 || qs[0].Type != dns.TypeHTTPS {
		t.Errorf("queries %v, want one HTTPS query a lookup", qs)
	}
}

// An RRset with an AliasMode record is that alias; the ServiceMode records
// beside it are ignored, and so are the alias's own SvcParams.
func TestHTTPSAliasMode(t *testing.T) {
	r, srv := newHostileDNS(t, DNSConfig{})
	srv.Set("alias.test", dns.TypeHTTPS, testdns.AnswerHTTPS(goodHTTPS,
		testdns.HTTPSRecord{Target: "Pool.CDN.test", Params: []dns.SVCBKeyValue{&dns.SVCBPort{Port: 1}}}))
	srv.Set("gone.test", dns.TypeHTTPS, testdns.AnswerHTTPS(testdns.HTTPSRecord{Target: "."}))
	ans, err := lookupHTTPS(t, r, "alias.test")
	wantAnswer(t, "alias.test", ans, err, race.ServiceAnswer{Alias: "pool.cdn.test."})
	// "." as an alias (the service does not exist, §2.5.1) stays ".".
	ans, err = lookupHTTPS(t, r, "gone.test")
	wantAnswer(t, "gone.test", ans, err, race.ServiceAnswer{Alias: "."})
}

// A malformed record is dropped alone and counted; the records beside it
// stand, and the answer is taken from the first server: the second one,
// which would answer cleanly, is never asked.
func TestHTTPSMalformedDroppedAlone(t *testing.T) {
	first, err := testdns.ServeLoopback()
	if err != nil {
		t.Fatal(err)
	}
	defer first.Close()
	r, second := newHostileDNS(t, DNSConfig{Nameservers: []string{first.Addr.String()}})
	for _, kind := range testdns.MalformedHTTPSKinds() {
		bad, err := testdns.MalformedHTTPS(kind)
		if err != nil {
			t.Fatal(err)
		}
		name := kind + ".test"
		first.Set(name, dns.TypeHTTPS, testdns.AnswerHTTPS(plainHTTPS, bad, goodHTTPS))
		second.Set(name, dns.TypeHTTPS, testdns.AnswerHTTPS(plainHTTPS, goodHTTPS))
		ans, err := lookupHTTPS(t, r, name)
		wantAnswer(t, kind, ans, err, race.ServiceAnswer{Records: []race.ServiceRecord{plainRecord, goodRecord}, Malformed: 1})
		if a, b := first.Count(name, dns.TypeHTTPS), second.Count(name, dns.TypeHTTPS); a != 1 || b != 0 {
			t.Errorf("%s: the servers were asked %d and %d times, want 1 and 0", kind, a, b)
		}
	}
	// Every record malformed: an answer all the same (no retry, no
	// error), with nothing in it but the count.
	port3, _ := testdns.MalformedHTTPS("port3")
	truncated, _ := testdns.MalformedHTTPS("truncated")
	first.Set("allbad.test", dns.TypeHTTPS, testdns.AnswerHTTPS(port3, truncated))
	second.Set("allbad.test", dns.TypeHTTPS, testdns.AnswerHTTPS(goodHTTPS))
	ans, err := lookupHTTPS(t, r, "allbad.test")
	wantAnswer(t, "allbad.test", ans, err, race.ServiceAnswer{Malformed: 2})
	if n := second.Count("allbad.test", dns.TypeHTTPS); n != 0 {
		t.Errorf("allbad.test: the second server was asked %d times", n)
	}
}

// A malformed HTTPS record in an address answer (where it has no business)
// is dropped as well: the addresses are taken.
func TestHTTPSMalformedInAddressAnswer(t *testing.T) {
	r, srv := newHostileDNS(t, DNSConfig{})
	port3, _ := testdns.MalformedHTTPS("port3")
	truncated, _ := testdns.MalformedHTTPS("truncated")
	srv.Set("mixed.test", dns.TypeA, raw(func(q *dns.Msg, _ string) [][]byte {
		return [][]byte{pack(t, reply(q, rrHTTPSRaw("mixed.test", truncated.RData), rrA("mixed.test", testV4), rrHTTPSRaw("mixed.test", port3.RData)))}
	}))
	addrs, err := lookupBounded(t, r, "mixed.test", race.IPv4)
	wantAddrs(t, "A beside malformed HTTPS records", addrs, err, testV4)
}

// rrHTTPSRaw is an HTTPS record of name with rdata as it is.
func rrHTTPSRaw(name string, rdata []byte) dns.RR {
	return &dns.RFC3597{Hdr: dns.RR_Header{Name: dns.Fqdn(name), Rrtype: dns.TypeHTTPS, Class: dns.ClassINET, Ttl: 1}, Rdata: hex.EncodeToString(rdata)}
}

// rrHTTPS is rec as an HTTPS record of name.
func rrHTTPS(name string, rec testdns.HTTPSRecord) dns.RR {
	return &dns.HTTPS{SVCB: dns.SVCB{Hdr: dns.RR_Header{Name: dns.Fqdn(name), Rrtype: dns.TypeHTTPS, Class: dns.ClassINET, Ttl: 1},
		Priority: rec.Priority, Target: dns.Fqdn(rec.Target), Value: rec.Params}}
}

// The CNAME chain is followed as for addresses: the records owned by its
// last name are the answer, those of any other name (the asked one
// included) are not, malformed or not.
func TestHTTPSCNAME(t *testing.T) {
	r, srv := newHostileDNS(t, DNSConfig{})
	port3, _ := testdns.MalformedHTTPS("port3")
	answer := func(rrs ...dns.RR) testdns.Behaviour {
		return raw(func(q *dns.Msg, _ string) [][]byte { return [][]byte{pack(t, reply(q, rrs...))} })
	}
	srv.Set("www.test", dns.TypeHTTPS, answer(
		rrHTTPS("cdn.test", goodHTTPS),
		rrHTTPS("www.test", plainHTTPS),       // beside a CNAME: not taken
		rrHTTPSRaw("other.test", port3.RData), // another name: not counted
		rrCNAME("www.test", "edge.test"), rrCNAME("Edge.test", "CDN.test"),
		rrHTTPSRaw("cdn.test", port3.RData),
		rrHTTPS("victim.test", testdns.HTTPSRecord{Target: "evil.test"}),
	))
	srv.Set("dangling.test", dns.TypeHTTPS, answer(rrCNAME("dangling.test", "end.test"), rrHTTPS("dangling.test", goodHTTPS)))
	srv.Set("loop.test", dns.TypeHTTPS, answer(rrCNAME("loop.test", "a.loop.test"), rrCNAME("a.loop.test", "loop.test"), rrHTTPS("loop.test", goodHTTPS)))

	ans, err := lookupHTTPS(t, r, "www.test")
	wantAnswer(t, "www.test", ans, err, race.ServiceAnswer{Records: []race.ServiceRecord{goodRecord}, Malformed: 1})
	_, err = lookupHTTPS(t, r, "dangling.test")
	wantFail(t, "dangling", nil, err, race.EAI_NODATA, "")
	_, err = lookupHTTPS(t, r, "loop.test")
	wantFail(t, "loop", nil, err, race.EAI_FAIL, "CNAME loop")
}

func TestHTTPSErrorCodes(t *testing.T) {
	r, srv := newTestDNS(t, "", DNSConfig{Timeout: 100 * time.Millisecond, Attempts: 2})
	srv.Set("nodata.test", dns.TypeA, testdns.Answer(testV4))
	srv.Set("empty.test", dns.TypeHTTPS, testdns.AnswerHTTPS())
	srv.Set("servfail.test", dns.TypeHTTPS, testdns.ServFail())
	srv.Set("refused.test", dns.TypeHTTPS, testdns.Behaviour{Rcode: dns.RcodeRefused})
	srv.Set("notimp.test", dns.TypeHTTPS, testdns.Behaviour{Rcode: dns.RcodeNotImplemented})
	srv.Set("nx.test", dns.TypeHTTPS, testdns.NXDomain())
	srv.Set("silent.test", dns.TypeHTTPS, testdns.NeverAnswer())
	srv.Set("pinned.test", dns.TypeHTTPS, testdns.AnswerHTTPS(goodHTTPS))
	srv.Set("localhost", dns.TypeHTTPS, testdns.AnswerHTTPS(goodHTTPS))
	for _, c := range []struct {
		name    string
		code    int
		queries int // HTTPS queries the server gets
	}{
		{"nx.test", race.EAI_NONAME, 1},
		{"unknown.test", race.EAI_NONAME, 1},
		{"nodata.test", race.EAI_NODATA, 1},
		{"empty.test", race.EAI_NODATA, 1},
		{"servfail.test", race.EAI_AGAIN, 2},
		{"refused.test", race.EAI_AGAIN, 2},
		{"notimp.test", race.EAI_FAIL, 1},
		{"silent.test", race.EAI_AGAIN, 2},
		{"pinned.test", race.EAI_NODATA, 0}, // the hosts file lists it
		{"localhost", race.EAI_NODATA, 0},
		{"198.18.0.1", race.EAI_NONAME, 0},
		{"2001:db8::1", race.EAI_NONAME, 0},
		{"bad..name", race.EAI_NONAME, 0},
		{"", race.EAI_NONAME, 0},
	} {
		start := time.Now()
		ans, err := lookupHTTPS(t, r, c.name)
		var re *race.ResolveError
		if ans != nil || !errors.As(err, &re) || re.Code != c.code || re.Host != c.name || re.Family != race.FamilyUnspec {
			t.Errorf("%q: %+v %v, want %s", c.name, ans, err, race.EAIMessage(c.code))
		}
		if n := srv.Count(c.name, dns.TypeHTTPS); c.name != "" && n != c.queries {
			t.Errorf("%q: %d HTTPS queries, want %d", c.name, n, c.queries)
		}
		var timeout interface{ Timeout() bool }
		silence := errors.As(err, &timeout) && timeout.Timeout()
		if silence != (c.name == "silent.test") {
			t.Errorf("%q: %v says timeout %v", c.name, err, silence)
		}
		if c.name == "silent.test" {
			if took := time.Since(start); took < 200*time.Millisecond || took > 3*time.Second {
				t.Errorf("silent server: gave up after %v, want 2 attempts of 100 ms", took)
			}
		}
	}
}

// The name is asked as given, made fully qualified: never under a search
// domain, whatever ndots says.
func TestHTTPSNoSearchList(t *testing.T) {
	r, srv := newTestDNS(t, "search corp.test\noptions ndots:5\n", DNSConfig{})
	srv.Set("svc.corp.test", dns.TypeHTTPS, testdns.AnswerHTTPS(goodHTTPS))
	_, err := lookupHTTPS(t, r, "svc")
	wantCode(t, err, race.EAI_NONAME)
	qs := srv.Queries("")
	if len(qs) != 1 || qs[0].Name != "svc" || qs[0].Type != dns.TypeHTTPS {
		t.Errorf("queries %v, want svc. alone", qs)
	}
}

// A truncated UDP answer is asked again over TCP, where the whole RRset
// comes; a delayed answer is waited for.
func TestHTTPSTruncatedAndDelayed(t *testing.T) {
	r, srv := newTestDNS(t, "", DNSConfig{})
	srv.Set("big.test", dns.TypeHTTPS, testdns.Behaviour{HTTPS: []testdns.HTTPSRecord{goodHTTPS, plainHTTPS}, Truncate: true})
	srv.Set("slow.test", dns.TypeHTTPS, testdns.Behaviour{HTTPS: []testdns.HTTPSRecord{plainHTTPS}, Delay: 100 * time.Millisecond})
	ans, err := lookupHTTPS(t, r, "big.test")
	wantAnswer(t, "big.test", ans, err, race.ServiceAnswer{Records: []race.ServiceRecord{goodRecord, plainRecord}})
	qs := srv.Queries("big.test")
	if len(qs) != 2 || qs[0].Proto != "udp" || qs[1].Proto != "tcp" || r.Stats().TCPFallbacks != 1 {
		t.Errorf("queries %v, stats %+v", qs, r.Stats())
	}
	start := time.Now()
	ans, err = lookupHTTPS(t, r, "slow.test")
	wantAnswer(t, "slow.test", ans, err, race.ServiceAnswer{Records: []race.ServiceRecord{plainRecord}})
	if took := time.Since(start); took < 100*time.Millisecond {
		t.Errorf("slow.test answered after %v, before its delay", took)
	}
}

// A canceled lookup stops at once: the caller is released, its socket
// closed, nothing more sent.
func TestHTTPSCancel(t *testing.T) {
	r, srv := newTestDNS(t, "", DNSConfig{Timeout: 5 * time.Second, Attempts: 2})
	srv.Set("silent.test", dns.TypeHTTPS, testdns.NeverAnswer())
	goBefore := runtime.NumGoroutine()
	ctx, cancel := context.WithCancel(context.Background())
	var canceledAt atomic.Int64
	go func() {
		for deadline := time.Now().Add(10 * time.Second); srv.Count("silent.test", dns.TypeHTTPS) == 0 && time.Now().Before(deadline); {
			time.Sleep(time.Millisecond)
		}
		canceledAt.Store(time.Now().UnixNano())
		cancel()
	}()
	ans, err := r.LookupHTTPS(ctx, "silent.test")
	returned := time.Since(time.Unix(0, canceledAt.Load()))
	if ans != nil || !errors.Is(err, context.Canceled) {
		t.Fatalf("got %v %v, want context.Canceled", ans, err)
	}
	if returned > 500*time.Millisecond {
		t.Errorf("returned %v after the cancel", returned)
	}
	if n := r.Stats().OpenSockets; n != 0 {
		t.Errorf("%d sockets still open after return", n)
	}
	if n := srv.Count("silent.test", dns.TypeHTTPS); n != 1 {
		t.Errorf("server saw %d queries, want 1 (nothing after cancel)", n)
	}
	// Canceled before it starts: nothing is sent.
	if _, err := r.LookupHTTPS(ctx, "other.test"); !errors.Is(err, context.Canceled) {
		t.Errorf("canceled context: %v", err)
	}
	if n := srv.Count("other.test", dns.TypeHTTPS); n != 0 {
		t.Errorf("a canceled lookup sent %d queries", n)
	}
	for deadline := time.Now().Add(time.Second); runtime.NumGoroutine() > goBefore && time.Now().Before(deadline); {
		time.Sleep(5 * time.Millisecond)
	}
	if n := runtime.NumGoroutine(); n > goBefore {
		t.Errorf("goroutines %d -> %d", goBefore, n)
	}
}

// The system resolver asks HTTPS of its built-in client (the hand-over
// one), here pointed at the test server instead of resolv.conf's.
func TestSystemResolverHTTPS(t *testing.T) {
	dnsr, srv := newTestDNS(t, "", DNSConfig{})
	srv.Set("svc.test", dns.TypeHTTPS, testdns.AnswerHTTPS(goodHTTPS))
	handOverClient.mu.Lock()
	saved := handOverClient.dns
	handOverClient.dns = dnsr
	handOverClient.mu.Unlock()
	t.Cleanup(func() {
		handOverClient.mu.Lock()
		handOverClient.dns = saved
		handOverClient.mu.Unlock()
	})
	r := &SystemResolver{}
	ans, err := lookupHTTPS(t, r, "svc.test")
	wantAnswer(t, "svc.test", ans, err, race.ServiceAnswer{Records: []race.ServiceRecord{goodRecord}})
	_, err = lookupHTTPS(t, r, "nx.test")
	wantCode(t, err, race.EAI_NONAME)
	for _, name := range []string{"localhost", "198.18.0.1", "", "a\x00b"} {
		_, err := lookupHTTPS(t, r, name)
		if wantErr := race.EAI_NONAME; name == "localhost" {
			wantCode(t, err, race.EAI_NODATA)
		} else {
			wantCode(t, err, wantErr)
		}
	}
	if n := r.Stats().HTTPSLookups; n != 2 {
		t.Errorf("HTTPSLookups %d, want 2", n)
	}
	if n := len(srv.Queries("")); n != 2 {
		t.Errorf("the server saw %d queries, want 2: %v", n, srv.Queries(""))
	}
}
