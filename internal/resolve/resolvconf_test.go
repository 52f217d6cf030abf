package resolve

import (
	"net/netip"
	"slices"
	"strings"
	"testing"
	"time"
)

func TestParseResolvConf(t *testing.T) {
	rc, err := parseResolvConf(strings.NewReader(`# comment
nameserver 198.18.0.53
nameserver 2001:db8::53 ; trailing comment
nameserver 198.18.0.54
nameserver 198.18.0.55
domain old.test
search a.test b.test
options ndots:3 timeout:2 attempts:9 rotate use-vc edns0 unknown-option
`), "test")
	if err != nil {
		t.Fatal(err)
	}
	// Like glibc, only the first three name servers count.
	want := []netip.AddrPort{netip.MustParseAddrPort("198.18.0.53:53"), netip.MustParseAddrPort("[2001:db8::53]:53"), netip.MustParseAddrPort("198.18.0.54:53")}
	if !slices.Equal(rc.nameservers, want) || !slices.Equal(rc.search, []string{"a.test", "b.test"}) ||
		rc.ndots != 3 || rc.timeout != 2*time.Second || rc.attempts != maxAttempts || !rc.rotate || !rc.useTCP ||
		!slices.Equal(rc.unmodelled, []string{"unknown-option"}) {
		t.Errorf("parsed %+v", rc)
	}
	// Options that only change how glibc asks are modelled; one that
	// changes its answers is named.
	rc, err = parseResolvConf(strings.NewReader("options trust-ad single-request-reopen no-aaaa timeout:1\n"), "test")
	if err != nil || !slices.Equal(rc.unmodelled, []string{"no-aaaa"}) {
		t.Errorf("unmodelled options %v (%v), want [no-aaaa]", rc.unmodelled, err)
	}
	d := defaultResolvConf()
	if d.ndots != 1 || d.timeout != 5*time.Second || d.attempts != 2 {
		t.Errorf("defaults %+v", d)
	}
	for _, bad := range []string{"nameserver\n", "nameserver example.test\n", "options ndots:-1\n", "options attempts\n"} {
		if _, err := parseResolvConf(strings.NewReader(bad), "bad"); err == nil {
			t.Errorf("%q: no error", bad)
		}
	}
}

func TestParseHosts(t *testing.T) {
	names := parseHosts([]byte(`127.0.0.1 localhost
::1 localhost ip6-localhost # comment
198.18.0.1 Web.Test web
not-an-ip ignored.test
198.18.0.1 web.test
`))
	if got := names["localhost"]; !slices.Equal(got, []netip.Addr{netip.MustParseAddr("127.0.0.1"), netip.IPv6Loopback()}) {
		t.Errorf("localhost %v", got)
	}
	if got := names["web.test"]; len(got) != 1 {
		t.Errorf("web.test %v (duplicates kept?)", got)
	}
	if _, ok := names["ignored.test"]; ok {
		t.Error("a line with a bad address was used")
	}
}
