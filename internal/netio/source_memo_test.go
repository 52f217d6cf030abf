package netio

import (
	"net/netip"
	"testing"
)

// fakeNetwork stands for netstate.Changes and the kernel: a count the test
// moves, and the questions the memo asked.
type fakeNetwork struct {
	count   uint64
	watched bool
	asked   []netip.Addr
}

func (f *fakeNetwork) memo() *sourceMemo {
	return &sourceMemo{
		changes: func() (uint64, bool) { return f.count, f.watched },
		ask: func(dst netip.Addr) (netip.Addr, bool) {
			f.asked = append(f.asked, dst)
			if dst.Is4() {
				return netip.MustParseAddr("198.18.0.2"), true
			}
			return netip.Addr{}, false // no route: an answer worth keeping too
		},
	}
}

func TestSourceMemoAsksOncePerDestinationWhileTheNetworkStays(t *testing.T) {
	f := &fakeNetwork{count: 7, watched: true}
	m := f.memo()
	v4, v6 := netip.MustParseAddr("198.18.0.9"), netip.MustParseAddr("2001:db8::9")
	for range 3 {
		if src, ok := m.source(v4); !ok || src != netip.MustParseAddr("198.18.0.2") {
			t.Fatalf("source(%v) = %v, %v", v4, src, ok)
		}
		if _, ok := m.source(v6); ok {
			t.Fatalf("source(%v): the kernel's no became a yes", v6)
		}
	}
	if len(f.asked) != 2 {
		t.Fatalf("asked the kernel %v; want each destination once", f.asked)
	}
	f.count++ // the kernel announced a change
	m.source(v4)
	m.source(v4)
	if len(f.asked) != 3 || f.asked[2] != v4 {
		t.Fatalf("after a change, asked %v; want %v asked once more", f.asked, v4)
	}
}

func TestSourceMemoKeepsNothingWhenChangesAreNotWatched(t *testing.T) {
	f := &fakeNetwork{watched: false}
	m := f.memo()
	dst := netip.MustParseAddr("198.18.0.9")
	for range 3 {
		m.source(dst)
	}
	if len(f.asked) != 3 || len(m.answers) != 0 {
		t.Fatalf("asked %d times, kept %d answers; want 3 and none", len(f.asked), len(m.answers))
	}
}

func TestSourceMemoIsBounded(t *testing.T) {
	f := &fakeNetwork{watched: true}
	m := f.memo()
	base := netip.MustParseAddr("2001:db8::").As16()
	for i := range 3 * sourceMemoMax {
		a := base
		a[14], a[15] = byte(i>>8), byte(i)
		m.source(netip.AddrFrom16(a))
		if len(m.answers) > sourceMemoMax {
			t.Fatalf("%d answers kept; the bound is %d", len(m.answers), sourceMemoMax)
		}
	}
}

// The process-wide memo gives what the kernel says (loopback: the
// destination itself).
func TestKernelSourcesAnswerAsTheKernel(t *testing.T) {
	for _, s := range []string{"127.0.0.1", "::1"} {
		dst := netip.MustParseAddr(s)
		want, wantOK := kernelSource(dst)
		for range 2 {
			if got, ok := kernelSources.source(dst); got != want || ok != wantOK {
				t.Fatalf("kernelSources.source(%v) = %v, %v; the kernel says %v, %v", dst, got, ok, want, wantOK)
			}
		}
	}
}
