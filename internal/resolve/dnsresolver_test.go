package resolve

import (
	"context"
	"errors"
	"net/netip"
	"os"
	"path/filepath"
	"runtime"
	"slices"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/hev2/hev2/internal/race"
	"github.com/hev2/hev2/tests/testdns"
	"github.com/miekg/dns"
)

// These run on loopback against a DNS server of the test's own (127.0.0.1,
// random port); the resolver is given that server, never the machine's.

var (
	testV6 = netip.MustParseAddr("2001:db8::53")
	testV4 = netip.MustParseAddr("198.18.0.53")
)

func newTestDNS(t *testing.T, resolvConf string, cfg DNSConfig) (*DNSResolver, *testdns.Server) {
	t.Helper()
	srv, err := testdns.ServeLoopback()
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(srv.Close)
	dir := t.TempDir()
	cfg.ResolvConf = filepath.Join(dir, "resolv.conf")
	if err := os.WriteFile(cfg.ResolvConf, []byte(resolvConf), 0o644); err != nil {
		t.Fatal(err)
	}
	if cfg.HostsFile == "" {
		cfg.HostsFile = filepath.Join(dir, "hosts")
		os.WriteFile(cfg.HostsFile, []byte("198.18.0.7 pinned.test\n2001:db8::7 pinned.test\n"), 0o644)
	}
	cfg.Nameservers = append(cfg.Nameservers, srv.Addr.String())
	// Whatever this machine's addresses, ask for both families (the
	// policy is tested in namespaces, in tests/resolvertest).
	cfg.NoAddrConfig = true
	r, err := NewDNSResolver(cfg)
	if err != nil {
		t.Fatal(err)
	}
	return r, srv
}

func TestDNSResolverAnswers(t *testing.T) {
	r, srv := newTestDNS(t, "", DNSConfig{})
	srv.Set("both.test", 0, testdns.Behaviour{Addrs: []netip.Addr{testV6, testV4}})
	ctx := context.Background()
	for _, c := range []struct {
		host   string
		family race.Family
		want   netip.Addr
	}{
		{"both.test", race.IPv6, testV6},
		{"BOTH.test.", race.IPv4, testV4},
		{"pinned.test", race.IPv4, netip.MustParseAddr("198.18.0.7")},
		{"pinned.test", race.IPv6, netip.MustParseAddr("2001:db8::7")},
		{"localhost", race.IPv6, netip.IPv6Loopback()},
		{"a.localhost", race.IPv4, netip.MustParseAddr("127.0.0.1")},
	} {
		addrs, err := r.LookupFamily(ctx, c.host, c.family)
		if err != nil || !slices.Equal(addrs, []netip.Addr{c.want}) {
			t.Errorf("%s %v: %v %v, want %v", c.host, c.family, addrs, err, c.want)
		}
	}
	if n := len(srv.Queries("")); n != 2 {
		t.Errorf("server saw %d queries, want 2 (hosts file and localhost need none): %v", n, srv.Queries(""))
	}
}

func TestDNSResolverErrorCodes(t *testing.T) {
	r, srv := newTestDNS(t, "", DNSConfig{Timeout: 100 * time.Millisecond, Attempts: 2})
	srv.Set("nodata.test", dns.TypeA, testdns.Behaviour{Addrs: []netip.Addr{testV4}})
	srv.Set("servfail.test", 0, testdns.Behaviour{Rcode: dns.RcodeServerFailure})
	srv.Set("notimp.test", 0, testdns.Behaviour{Rcode: dns.RcodeNotImplemented})
	srv.Set("silent.test", 0, testdns.Behaviour{Never: true})
	for _, c := range []struct {
		host string
		code int
	}{
		{"nxdomain.test", race.EAI_NONAME},
		{"nodata.test", race.EAI_NODATA},
		{"servfail.test", race.EAI_AGAIN},
		{"notimp.test", race.EAI_FAIL},
		{"silent.test", race.EAI_AGAIN},
		{"bad..name", race.EAI_NONAME},
	} {
		start := time.Now()
		_, err := r.LookupFamily(context.Background(), c.host, race.IPv6)
		wantCode(t, err, c.code)
		if c.host == "silent.test" {
			// Two attempts of 100 ms; the upper bound only says it gave
			// up on its own, with room for a loaded machine under -race.
			if took := time.Since(start); took < 200*time.Millisecond || took > 3*time.Second {
				t.Errorf("silent server: gave up after %v, want 2 attempts of 100 ms", took)
			}
			if n := srv.Count("silent.test", dns.TypeAAAA); n != 2 {
				t.Errorf("silent server asked %d times, want 2", n)
			}
		}
	}
	if st := r.Stats(); st.Timeouts != 2 || st.OpenSockets != 0 {
		t.Errorf("stats %+v", st)
	}
}

// Each family answers when its answer comes: a slow AAAA does not hold A.
func TestDNSResolverPerFamilyTiming(t *testing.T) {
	r, srv := newTestDNS(t, "", DNSConfig{})
	const slow = 300 * time.Millisecond
	srv.Set("slow6.test", dns.TypeAAAA, testdns.Behaviour{Addrs: []netip.Addr{testV6}, Delay: slow})
	srv.Set("slow6.test", dns.TypeA, testdns.Behaviour{Addrs: []netip.Addr{testV4}})
	var wg sync.WaitGroup
	var took [2]time.Duration
	start := time.Now()
	for i, f := range race.LookupFamilies {
		wg.Add(1)
		go func() {
			defer wg.Done()
			if _, err := r.LookupFamily(context.Background(), "slow6.test", f); err != nil {
				t.Error(err)
			}
			took[i] = time.Since(start)
		}()
	}
	wg.Wait()
	// A well before AAAA (relative to AAAA's time, which a loaded machine
	// delays as much), and both queries sent before either answer came.
	if took[0] < slow || took[1] > took[0]-slow/2 {
		t.Errorf("AAAA after %v, A after %v", took[0], took[1])
	}
	qs := srv.Queries("")
	if len(qs) != 2 || qs[1].At.Sub(qs[0].At) > slow/2 {
		t.Errorf("AAAA and A were not sent together: %v", qs)
	}
}

func TestDNSResolverTCPFallback(t *testing.T) {
	r, srv := newTestDNS(t, "", DNSConfig{})
	srv.Set("big.test", dns.TypeA, testdns.Behaviour{Addrs: []netip.Addr{testV4}, Truncate: true})
	addrs, err := r.LookupFamily(context.Background(), "big.test", race.IPv4)
	if err != nil || !slices.Equal(addrs, []netip.Addr{testV4}) {
		t.Fatalf("truncated answer: %v %v", addrs, err)
	}
	qs := srv.Queries("")
	if len(qs) != 2 || qs[0].Proto != "udp" || qs[1].Proto != "tcp" || r.Stats().TCPFallbacks != 1 {
		t.Errorf("queries %v, stats %+v", qs, r.Stats())
	}
}

// A server that rejects EDNS0 with FORMERR is asked again without it.
func TestDNSResolverNoEDNSServer(t *testing.T) {
	r, srv := newTestDNS(t, "", DNSConfig{})
	srv.Set("old.test", dns.TypeA, testdns.Behaviour{Addrs: []netip.Addr{testV4}, RejectEDNS: true})
	addrs, err := r.LookupFamily(context.Background(), "old.test", race.IPv4)
	if err != nil || !slices.Equal(addrs, []netip.Addr{testV4}) {
		t.Fatalf("old server: %v %v", addrs, err)
	}
	if n := srv.Count("old.test", dns.TypeA); n != 2 {
		t.Errorf("server asked %d times, want 2 (with EDNS0, then without)", n)
	}
}

func TestDNSResolverSearchList(t *testing.T) {
	r, srv := newTestDNS(t, "search corp.test lab.test\noptions ndots:2\n", DNSConfig{})
	srv.Set("db.lab.test", dns.TypeA, testdns.Behaviour{Addrs: []netip.Addr{testV4}})
	addrs, err := r.LookupFamily(context.Background(), "db", race.IPv4)
	if err != nil || !slices.Equal(addrs, []netip.Addr{testV4}) {
		t.Fatalf("db via search: %v %v", addrs, err)
	}
	var names []string
	for _, q := range srv.Queries("") {
		names = append(names, q.Name)
	}
	if !slices.Equal(names, []string{"db.corp.test", "db.lab.test"}) {
		t.Errorf("asked %v", names)
	}
	// "x.y" has fewer than 2 dots: search domains first, then as given.
	if got := r.settings().candidates("x.y"); !slices.Equal(got, []string{"x.y.corp.test.", "x.y.lab.test.", "x.y."}) {
		t.Errorf("candidates %v", got)
	}
	if got := r.settings().candidates("x.y.z"); got[0] != "x.y.z." {
		t.Errorf("candidates %v", got)
	}
}

// A canceled lookup stops for real: the caller is released at once, its
// socket is closed at once and nothing more is sent.
func TestDNSResolverCancelStops(t *testing.T) {
	r, srv := newTestDNS(t, "", DNSConfig{Timeout: 5 * time.Second, Attempts: 2})
	srv.Set("silent.test", 0, testdns.Behaviour{Never: true})
	fdsBefore, goBefore := resolverTestFDs(t), runtime.NumGoroutine()
	ctx, cancel := context.WithCancel(context.Background())
	// Cancel once the query has reached the server.
	var canceledAt atomic.Int64
	go func() {
		for deadline := time.Now().Add(10 * time.Second); srv.Count("silent.test", dns.TypeAAAA) == 0 && time.Now().Before(deadline); {
			time.Sleep(time.Millisecond)
		}
		canceledAt.Store(time.Now().UnixNano())
		cancel()
	}()
	_, err := r.LookupFamily(ctx, "silent.test", race.IPv6)
	returned := time.Since(time.Unix(0, canceledAt.Load()))
	if !errors.Is(err, context.Canceled) {
		t.Fatalf("got %v, want context.Canceled", err)
	}
	// At once; the bound leaves a loaded machine room and lies far
	// below the 5 s the query would have waited.
	if returned > 500*time.Millisecond {
		t.Errorf("returned %v after the cancel", returned)
	}
	if n := r.Stats().OpenSockets; n != 0 {
		t.Errorf("%d sockets still open after return", n)
	}
	if fds := resolverTestFDs(t); fds > fdsBefore {
		t.Errorf("fds %d -> %d", fdsBefore, fds)
	}
	// Its socket is closed (above), so nothing more can be sent.
	if n := srv.Count("silent.test", dns.TypeAAAA); n != 1 {
		t.Errorf("server saw %d queries, want 1 (nothing after cancel)", n)
	}
	for deadline := time.Now().Add(time.Second); runtime.NumGoroutine() > goBefore && time.Now().Before(deadline); {
		time.Sleep(5 * time.Millisecond)
	}
	if n := runtime.NumGoroutine(); n > goBefore {
		t.Errorf("goroutines %d -> %d", goBefore, n)
	}
}

func TestDNSResolverConfigErrors(t *testing.T) {
	dir := t.TempDir()
	empty := filepath.Join(dir, "resolv.conf")
	os.WriteFile(empty, []byte("search x.test\n"), 0o644)
	if _, err := NewDNSResolver(DNSConfig{ResolvConf: empty}); err == nil {
		t.Error("no name server: no error")
	}
	if _, err := NewDNSResolver(DNSConfig{ResolvConf: empty, Nameservers: []string{"not-an-ip"}}); err == nil {
		t.Error("bad name server: no error")
	}
	bad := filepath.Join(dir, "bad.conf")
	os.WriteFile(bad, []byte("nameserver 127.0.0.1\noptions timeout:x\n"), 0o644)
	if _, err := NewDNSResolver(DNSConfig{ResolvConf: bad}); err == nil {
		t.Error("bad option: no error")
	}
	r, err := NewDNSResolver(DNSConfig{ResolvConf: empty, Nameservers: []string{"127.0.0.1", "[::1]:5353", "198.18.0.1:53"}})
	if err != nil {
		t.Fatal(err)
	}
	want := []netip.AddrPort{netip.MustParseAddrPort("127.0.0.1:53"), netip.MustParseAddrPort("[::1]:5353"), netip.MustParseAddrPort("198.18.0.1:53")}
	if !slices.Equal(r.Nameservers(), want) {
		t.Errorf("nameservers %v", r.Nameservers())
	}
}

func resolverTestFDs(t *testing.T) int {
	entries, err := os.ReadDir("/proc/self/fd")
	if err != nil {
		t.Fatal(err)
	}
	return len(entries)
}

// A silent server is given up on after Timeout and the next one is asked.
func TestDNSResolverFailover(t *testing.T) {
	silent, err := testdns.ServeLoopback()
	if err != nil {
		t.Fatal(err)
	}
	defer silent.Close()
	silent.Set("x.test", 0, testdns.Behaviour{Never: true})
	r, srv := newTestDNS(t, "", DNSConfig{Nameservers: []string{silent.Addr.String()}, Timeout: 100 * time.Millisecond, Attempts: 1})
	srv.Set("x.test", dns.TypeA, testdns.Behaviour{Addrs: []netip.Addr{testV4}})
	start := time.Now()
	addrs, err := r.LookupFamily(context.Background(), "x.test", race.IPv4)
	took := time.Since(start)
	if err != nil || !slices.Equal(addrs, []netip.Addr{testV4}) {
		t.Fatalf("failover: %v %v", addrs, err)
	}
	if took < 100*time.Millisecond || silent.Count("x.test", dns.TypeA) != 1 || srv.Count("x.test", dns.TypeA) != 1 {
		t.Errorf("answered after %v; silent server asked %d times, second %d", took, silent.Count("x.test", dns.TypeA), srv.Count("x.test", dns.TypeA))
	}
}

// A changed resolv.conf is read again (checked at most once a second; the
// test skips the wait); a file that turns bad keeps the last good settings.
func TestDNSResolverReloadsResolvConf(t *testing.T) {
	r, srv := newTestDNS(t, "search one.test\n", DNSConfig{})
	srv.Set("db.two.test", dns.TypeA, testdns.Behaviour{Addrs: []netip.Addr{testV4}})
	if _, err := r.LookupFamily(context.Background(), "db", race.IPv4); err == nil {
		t.Fatal("db found with search one.test")
	}
	recheck := func(content string) {
		if err := os.WriteFile(r.conf.path, []byte(content), 0o644); err != nil {
			t.Fatal(err)
		}
		r.conf.mu.Lock()
		r.conf.checked = time.Time{}
		r.conf.mu.Unlock()
	}
	recheck("search three.test two.test\n")
	addrs, err := r.LookupFamily(context.Background(), "db", race.IPv4)
	if err != nil || !slices.Equal(addrs, []netip.Addr{testV4}) {
		t.Fatalf("after the change: %v %v", addrs, err)
	}
	recheck("options ndots:x\n")
	if _, err := r.LookupFamily(context.Background(), "db", race.IPv4); err != nil {
		t.Errorf("a bad file replaced good settings: %v", err)
	}
}
