package resolve

import (
	"context"
	"errors"
	"net/netip"
	"testing"

	"github.com/hev2/hev2/internal/race"
)

// These never resolve a name (this machine's resolver is off limits); the
// getaddrinfo tests run inside namespaces, in tests/resolvertest.

func TestSystemResolverLiterals(t *testing.T) {
	var r SystemResolver // the zero value works
	addrs, err := r.LookupFamily(context.Background(), "198.18.0.1", race.IPv4)
	if err != nil || len(addrs) != 1 || addrs[0] != netip.MustParseAddr("198.18.0.1") {
		t.Fatalf("IPv4 literal: %v %v", addrs, err)
	}
	addrs, err = r.LookupFamily(context.Background(), "2001:db8::1", race.IPv6)
	if err != nil || len(addrs) != 1 || addrs[0] != netip.MustParseAddr("2001:db8::1") {
		t.Fatalf("IPv6 literal: %v %v", addrs, err)
	}
	_, err = r.LookupFamily(context.Background(), "198.18.0.1", race.IPv6)
	wantCode(t, err, race.EAI_ADDRFAMILY)
	if st := r.Stats(); st.Completed != 0 || st.InFlight != 0 {
		t.Errorf("a literal made a getaddrinfo call: %+v", st)
	}
}

func TestSystemResolverBadInput(t *testing.T) {
	r := NewSystemResolver(4)
	_, err := r.LookupFamily(context.Background(), "", race.IPv4)
	wantCode(t, err, race.EAI_NONAME)
	_, err = r.LookupFamily(context.Background(), "a\x00b", race.IPv4)
	wantCode(t, err, race.EAI_NONAME)
	_, err = r.LookupFamily(context.Background(), "example.test", race.FamilyUnspec)
	wantCode(t, err, race.EAI_FAMILY)
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	r.NoAddrConfig = true
	if _, err := r.LookupFamily(ctx, "example.test", race.IPv4); !errors.Is(err, context.Canceled) {
		t.Errorf("canceled context: %v", err)
	}
}

func wantCode(t *testing.T, err error, code int) {
	t.Helper()
	var re *race.ResolveError
	if !errors.As(err, &re) || re.Code != code {
		t.Errorf("got %v, want %s", err, race.EAIMessage(code))
	}
}
