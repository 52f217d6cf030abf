package race

import (
	"net/netip"
	"testing"
)

// The query kinds and the families agree on their order (AAAA, then A),
// so that arrays kept per kind and per family (Result.Lookups) line up.
func TestAddressQueriesAreTheFamiliesInTheirOrder(t *testing.T) {
	for i, q := range AddressQueries {
		f := LookupFamilies[i]
		if !q.Valid() || q.Index() != i || q.Family() != f || QueryFor(f) != q || q.String() != f.QueryType() {
			t.Errorf("%v: index %d family %v, want %d %v", q, q.Index(), q.Family(), i, f)
		}
	}
	if QueryKind(0).Valid() || QueryKind(NumQueryKinds+1).Valid() {
		t.Error("a kind outside the list is valid")
	}
}

// An answer that names no lookup (the zero QueryKind) answers none.
func TestAnswerWithoutQueryIsIgnored(t *testing.T) {
	h := newHarness(t, testConfig())
	h.start()
	acts := h.step(1, Event{Kind: EventLookupDone, Addrs: []netip.Addr{v4a}})
	h.wantStarted(acts)
	if !h.m.lookups[QueryAAAA.Index()].pending || !h.m.lookups[QueryA.Index()].pending {
		t.Fatalf("lookups %+v", h.m.lookups)
	}
}
