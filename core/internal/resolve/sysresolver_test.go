package core

import (
	"context"
	"errors"
	"net/netip"
	"testing"
)

// These never resolve a name (this machine's resolver is off limits); the
// getaddrinfo tests run inside namespaces, in internal/resolvertest.

func TestSystemResolverLiterals(t *testing.T) {
	var r SystemResolver // the zero value works
	addrs, err := r.LookupFamily(context.Background(), "198.18.0.1", IPv4)
	if err != nil || len(addrs) != 1 || addrs[0] != netip.MustParseAddr("198.18.0.1") {
		t.Fatalf("IPv4 literal: %v %v", addrs, err)
	}
	addrs, err = r.LookupFamily(context.Background(), "2001:db8::1", IPv6)
	if err != nil || len(addrs) != 1 || addrs[0] != netip.MustParseAddr("2001:db8::1") {
		t.Fatalf("IPv6 literal: %v %v", addrs, err)
	}
	_, err = r.LookupFamily(context.Background(), "198.18.0.1", IPv6)
	wantCode(t, err, EAI_ADDRFAMILY)
	if st := r.Stats(); st.Completed != 0 || st.InFlight != 0 {
		t.Errorf("a literal made a getaddrinfo call: %+v", st)
	}
}

func TestSystemResolverBadInput(t *testing.T) {
	r := NewSystemResolver(4)
	_, err := r.LookupFamily(context.Background(), "", IPv4)
	wantCode(t, err, EAI_NONAME)
	_, err = r.LookupFamily(context.Background(), "a\x00b", IPv4)
	wantCode(t, err, EAI_NONAME)
	_, err = r.LookupFamily(context.Background(), "example.test", FamilyUnspec)
	wantCode(t, err, EAI_FAMILY)
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	r.NoAddrConfig = true
	if _, err := r.LookupFamily(ctx, "example.test", IPv4); !errors.Is(err, context.Canceled) {
		t.Errorf("canceled context: %v", err)
	}
}

func wantCode(t *testing.T, err error, code int) {
	t.Helper()
	var re *ResolveError
	if !errors.As(err, &re) || re.Code != code {
		t.Errorf("got %v, want %s", err, EAIMessage(code))
	}
}
