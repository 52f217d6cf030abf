package race

import (
	"net/netip"
	"testing"
)

// RFC 6052 §2.4's examples: 192.0.2.33 under each prefix length.
var rfc6052Examples = []struct{ prefix, addr string }{
	{"2001:db8::/32", "2001:db8:c000:221::"},
	{"2001:db8:100::/40", "2001:db8:1c0:2:21::"},
	{"2001:db8:122::/48", "2001:db8:122:c000:2:2100::"},
	{"2001:db8:122:300::/56", "2001:db8:122:3c0:0:221::"},
	{"2001:db8:122:344::/64", "2001:db8:122:344:c0:2:2100:0"},
	{"2001:db8:122:344::/96", "2001:db8:122:344::192.0.2.33"},
}

func TestEmbedExtractRFC6052Examples(t *testing.T) {
	v4 := netip.MustParseAddr("192.0.2.33")
	for _, ex := range rfc6052Examples {
		p := netip.MustParsePrefix(ex.prefix)
		if !ValidPrefix64(p) {
			t.Fatalf("%v: not a valid NAT64 prefix", p)
		}
		got := Embed(p, v4)
		if want := netip.MustParseAddr(ex.addr); got != want {
			t.Errorf("Embed(%v, %v) = %v, want %v", p, v4, got, want)
		}
		back, ok := Extract(p, got)
		if !ok || back != v4 {
			t.Errorf("Extract(%v, %v) = %v %v, want %v", p, got, back, ok, v4)
		}
	}
}

func TestExtractRejectsWhatRFC6052DoesNotProduce(t *testing.T) {
	p := netip.MustParsePrefix("2001:db8::/32")
	for _, a := range []string{
		"2001:db8::10",            // suffix bits set (a testbed server, not a synthesis)
		"2001:db8::8000:0:0:1",    // u-octet set
		"2001:db9:c000:221::",     // outside the prefix
		"::ffff:192.0.2.33",       // IPv4-mapped
		"2001:db8:c000:221::1",    // suffix set
		"2001:db8:c000:221:100::", // u-octet set
	} {
		if v4, ok := Extract(p, netip.MustParseAddr(a)); ok {
			t.Errorf("Extract(%v, %s) = %v, want no IPv4 address", p, a, v4)
		}
	}
}

func TestValidPrefix64(t *testing.T) {
	for _, s := range []string{"64:ff9b::/96", "64:ff9b:1::/48", "2001:db8::/32", "2001:db8:100::/40",
		"2001:db8:1::/48", "2001:db8:1:200::/56", "2001:db8:1:2::/64", "2001:db8:1:2::/96"} {
		if !ValidPrefix64(netip.MustParsePrefix(s)) {
			t.Errorf("%s: want valid", s)
		}
	}
	for _, s := range []string{"2001:db8::/33", "2001:db8::/128", "2001:db8::1/96", "198.18.0.0/24",
		"::ffff:0:0/96", "fe80::/64", "ff02::/96", "2001:db8:1:2:100::/96"} {
		if ValidPrefix64(netip.MustParsePrefix(s)) {
			t.Errorf("%s: want invalid", s)
		}
	}
}

func TestPrefixFromIPv4OnlyEveryLength(t *testing.T) {
	prefixes := []string{"2001:db8::/32", "2001:db8:6400::/40", "2001:db8:64::/48",
		"2001:db8:64:6400::/56", "2001:db8:64:64::/64", "2001:db8:64:64::/96", "64:ff9b::/96"}
	for _, s := range prefixes {
		p := netip.MustParsePrefix(s)
		for _, wka := range []netip.Addr{WKA1, WKA2} {
			got, ok := PrefixFromIPv4Only(Embed(p, wka))
			if !ok || got != p {
				t.Errorf("answer %v: prefix %v %v, want %v", Embed(p, wka), got, ok, p)
			}
		}
	}
	// An AAAA that embeds neither well-known address (a DNS64 that did
	// not synthesize, a real record) reveals nothing.
	for _, s := range []string{"2001:db8::10", "2001:db8:64:64::c000:2a9", "2001:db8:64:64::c000:aa:1"} {
		if p, ok := PrefixFromIPv4Only(netip.MustParseAddr(s)); ok {
			t.Errorf("%s: prefix %v, want none", s, p)
		}
	}
	// Both well-known addresses under one prefix, and a second prefix:
	// two distinct prefixes in answer order.
	p1, p2 := netip.MustParsePrefix("2001:db8:64:64::/96"), netip.MustParsePrefix("2001:db8:64::/48")
	got := PrefixesFromIPv4Only([]netip.Addr{Embed(p1, WKA1), Embed(p1, WKA2), netip.MustParseAddr("2001:db8::10"), Embed(p2, WKA1)})
	if len(got) != 2 || got[0] != p1 || got[1] != p2 {
		t.Errorf("PrefixesFromIPv4Only = %v, want [%v %v]", got, p1, p2)
	}
}

func TestSynthesizable(t *testing.T) {
	nsp := netip.MustParsePrefix("2001:db8:64:64::/96")
	for _, s := range []string{"127.0.0.1", "127.1.2.3", "0.0.0.0", "0.1.2.3", "169.254.1.1", "224.0.0.1", "255.255.255.255"} {
		a := netip.MustParseAddr(s)
		if Synthesizable(a, nsp) || Synthesizable(a, WellKnownPrefix) {
			t.Errorf("%s: synthesizable, want never", s)
		}
	}
	// Non-global IPv4 (RFC 6052 §3.1): a network-specific prefix may
	// carry it, the well-known prefix may not.
	for _, s := range []string{"198.18.0.10", "10.1.2.3", "192.168.1.1", "172.16.0.1", "100.64.0.1", "192.0.2.33"} {
		a := netip.MustParseAddr(s)
		if !Synthesizable(a, nsp) {
			t.Errorf("%s under %v: want synthesizable", s, nsp)
		}
		if Synthesizable(a, WellKnownPrefix) {
			t.Errorf("%s under the well-known prefix: want never", s)
		}
	}
	if !Synthesizable(netip.MustParseAddr("9.9.9.9"), WellKnownPrefix) {
		t.Error("a global IPv4 address under the well-known prefix: want synthesizable")
	}
}

// A DNS64 AAAA inside a discovered prefix sorts as the IPv4 address it
// embeds: after a real global IPv6 address, even when the resolver listed
// it first and RFC 6724 would otherwise tie them.
func TestSortTreatsTranslatedAsIPv4(t *testing.T) {
	p := netip.MustParsePrefix("2001:db8::64:0:0/96")
	real := netip.MustParseAddr("2001:db8::10")
	synth := Embed(p, netip.MustParseAddr("198.18.0.10"))
	src := func(netip.Addr) (netip.Addr, bool) { return netip.MustParseAddr("2001:db8::8000:0:0:1"), true }
	in := []netip.Addr{synth, real}
	if got := SortRFC6724NAT64(in, src, nil); got[0] != synth {
		t.Fatalf("without the prefix: %v, want the resolver's order (a tie)", got)
	}
	if got := SortRFC6724NAT64(in, src, []netip.Prefix{p}); got[0] != real || got[1] != synth {
		t.Fatalf("with the prefix: %v, want the real IPv6 first", got)
	}
	// The interleave counts it as IPv4 too: two real, two translated,
	// first family count 1 -> real, translated, real, translated.
	real2, synth2 := netip.MustParseAddr("2001:db8::11"), Embed(p, netip.MustParseAddr("198.18.0.11"))
	got := InterleaveNAT64([]netip.Addr{real, real2, synth, synth2}, 1, []netip.Prefix{p})
	want := []netip.Addr{real, synth, real2, synth2}
	for i := range want {
		if got[i] != want[i] {
			t.Fatalf("interleave = %v, want %v", got, want)
		}
	}
}
