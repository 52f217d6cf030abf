package race

import (
	"net/netip"
	"testing"
)

func mustAddrs(s ...string) []netip.Addr {
	out := make([]netip.Addr, len(s))
	for i, x := range s {
		out[i] = netip.MustParseAddr(x)
	}
	return out
}

func TestSortRFC6724(t *testing.T) {
	globalSources := func(dst netip.Addr) (netip.Addr, bool) {
		switch {
		case dst.Is4():
			return netip.MustParseAddr("198.18.0.2"), true
		case netip.MustParsePrefix("fc00::/7").Contains(dst):
			return netip.MustParseAddr("fd00::2"), true
		case dst.IsLoopback():
			return dst, true
		}
		return netip.MustParseAddr("2001:db8::2"), true
	}
	noV6Route := func(dst netip.Addr) (netip.Addr, bool) {
		if dst.Is4() {
			return netip.MustParseAddr("198.18.0.2"), true
		}
		return netip.Addr{}, false
	}
	cases := []struct {
		name   string
		in     []netip.Addr
		source SourceFunc
		want   []netip.Addr
	}{
		{"global IPv6 before IPv4 (rule 6)", mustAddrs("198.18.0.1", "2001:db8::1"), globalSources,
			mustAddrs("2001:db8::1", "198.18.0.1")},
		{"ULA after IPv4 (precedence 3 < 35)", mustAddrs("fd00::1", "198.18.0.1"), globalSources,
			mustAddrs("198.18.0.1", "fd00::1")},
		{"unreachable destinations last (rule 1)", mustAddrs("2001:db8::1", "198.18.0.1"), noV6Route,
			mustAddrs("198.18.0.1", "2001:db8::1")},
		{"loopback first (precedence 50)", mustAddrs("127.0.0.1", "::1"), globalSources,
			mustAddrs("::1", "127.0.0.1")},
		{"longest matching prefix (rule 9)", mustAddrs("2001:db9::1", "2001:db8::1"), globalSources,
			mustAddrs("2001:db8::1", "2001:db9::1")},
		{"ties keep resolver order (rule 10)", mustAddrs("198.18.0.3", "198.18.0.1"), globalSources,
			mustAddrs("198.18.0.3", "198.18.0.1")},
	}
	for _, c := range cases {
		got := SortRFC6724(c.in, c.source)
		for i := range c.want {
			if got[i] != c.want[i] {
				t.Errorf("%s: got %v, want %v", c.name, got, c.want)
				break
			}
		}
	}
}
