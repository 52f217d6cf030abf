package resolve

import (
	"context"
	"errors"
	"net/netip"
	"sync"
	"testing"
	"time"

	"github.com/hev2/hev2/internal/netstate"
	"github.com/hev2/hev2/internal/race"
)

// fakeIPv4Only answers ipv4only.arpa from a script: each call takes the
// next answer (the last one repeats), blocking until release is closed.
type fakeIPv4Only struct {
	mu      sync.Mutex
	calls   int
	answers []fakeAnswer
	release chan struct{}
}

type fakeAnswer struct {
	prefix netip.Prefix // zero: NXDOMAIN
	ttl    time.Duration
	err    error
}

func (f *fakeIPv4Only) LookupFamily(ctx context.Context, host string, family race.Family) ([]netip.Addr, error) {
	addrs, _, err := f.LookupIPv4Only(ctx)
	return addrs, err
}

func (f *fakeIPv4Only) LookupIPv4Only(ctx context.Context) ([]netip.Addr, time.Duration, error) {
	<-f.release
	f.mu.Lock()
	a := f.answers[min(f.calls, len(f.answers)-1)]
	f.calls++
	f.mu.Unlock()
	switch {
	case a.err != nil:
		return nil, 0, a.err
	case !a.prefix.IsValid():
		return nil, 0, &race.ResolveError{Host: race.IPv4OnlyName, Family: race.IPv6, Code: race.EAI_NONAME}
	}
	return []netip.Addr{race.Embed(a.prefix, race.WKA1), race.Embed(a.prefix, race.WKA2)}, a.ttl, nil
}

func (f *fakeIPv4Only) callCount() int {
	f.mu.Lock()
	defer f.mu.Unlock()
	return f.calls
}

// await waits for the outcome of a pending start.
func await(t *testing.T, st NAT64Start) []netip.Prefix {
	t.Helper()
	if !st.Pending {
		t.Fatalf("want a pending discovery, got %+v", st)
	}
	got := make(chan []netip.Prefix, 1)
	st.Await(func(ps []netip.Prefix, _ error) { got <- ps })
	select {
	case ps := <-got:
		return ps
	case <-time.After(5 * time.Second):
		t.Fatal("discovery never delivered")
		return nil
	}
}

// waitIdle waits until a refresh has stored its outcome.
func waitIdle(t *testing.T) {
	t.Helper()
	key := fakeKey()
	for deadline := time.Now().Add(5 * time.Second); time.Now().Before(deadline); time.Sleep(5 * time.Millisecond) {
		pref64s.mu.Lock()
		e := pref64s.entries[key]
		idle := e != nil && e.flight == nil
		pref64s.mu.Unlock()
		if idle {
			return
		}
	}
	t.Fatal("the refresh never ended")
}

func expire() {
	pref64s.mu.Lock()
	pref64s.entries[fakeKey()].expires = time.Now().Add(-time.Second)
	pref64s.mu.Unlock()
}

// One discovery per network and resolver however many connects ask; the
// prefix is then cached; when it expires the next connect still gets it
// while a refresh runs, and the refresh's answer replaces it; a refresh
// that cannot reach the resolver keeps it.
func TestPrefix64DiscoveryCache(t *testing.T) {
	pref64s.flush()
	t.Cleanup(pref64s.flush)
	p1, p2 := netip.MustParsePrefix("2001:db8:64::/48"), netip.MustParsePrefix("2001:db8::64:0:0/96")
	f := &fakeIPv4Only{release: make(chan struct{}), answers: []fakeAnswer{
		{prefix: p1, ttl: time.Hour}, {prefix: p2, ttl: time.Hour}, {err: context.DeadlineExceeded}}}
	a, b := NAT64(f), NAT64(f)
	if !NAT64Wanted() {
		t.Fatal("no A query wanted while discovery runs")
	}
	close(f.release)
	if pa, pb := await(t, a), await(t, b); len(pa) != 1 || pa[0] != p1 || len(pb) != 1 || pb[0] != p1 {
		t.Fatalf("the two waiters got %v and %v, want [%v]", pa, pb, p1)
	}
	if n := f.callCount(); n != 1 {
		t.Fatalf("%d queries for two connects, want 1", n)
	}
	if st := NAT64(f); st.Pending || len(st.Prefixes) != 1 || st.Prefixes[0] != p1 {
		t.Fatalf("cached: %+v", st)
	}

	expire()
	if st := NAT64(f); st.Pending || st.Prefixes[0] != p1 {
		t.Fatalf("expired: %+v, want %v still used while refreshing", st, p1)
	}
	waitIdle(t)
	if st := NAT64(f); st.Prefixes[0] != p2 {
		t.Fatalf("after the refresh: %+v, want %v", st, p2)
	}

	expire()
	NAT64(f)
	waitIdle(t)
	if st := NAT64(f); len(st.Prefixes) != 1 || st.Prefixes[0] != p2 {
		t.Fatalf("after a refresh that timed out: %+v, want %v kept", st, p2)
	}
}

// "No NAT64 here" is cached too: no second query, no A query wanted.
func TestPrefix64NegativeAnswerCached(t *testing.T) {
	pref64s.flush()
	t.Cleanup(pref64s.flush)
	f := &fakeIPv4Only{release: make(chan struct{}), answers: []fakeAnswer{{}}}
	close(f.release)
	if ps := await(t, NAT64(f)); len(ps) != 0 {
		t.Fatalf("NXDOMAIN gave %v", ps)
	}
	st := NAT64(f)
	if st.Pending || len(st.Prefixes) != 0 || f.callCount() != 1 {
		t.Fatalf("negative answer not cached: %+v after %d queries", st, f.callCount())
	}
	if NAT64Wanted() {
		t.Fatal("an A query is wanted without NAT64")
	}
	var re *race.ResolveError
	if e := pref64s.entries[fakeKey()]; !errors.As(e.err, &re) {
		t.Fatalf("the cached negative answer lost its reason: %v", e.err)
	}
}

// fakeKey is the cache key of a resolver that is not one of hev2's own
// (they share one entry per network).
func fakeKey() pref64Key { return pref64Key{network: netstate.Current().Network} }
