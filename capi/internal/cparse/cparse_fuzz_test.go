package cparse

import (
	"maps"
	"net/netip"
	"slices"
	"strings"
	"testing"
)

// The seeds are the shapes callers send (and the C suite's bad inputs);
// `make fuzz` runs each target longer (see mk/fuzz.mk).

const maxHostLen = 253 // HEV2_MAX_HOSTLEN; capi passes the header's value

func FuzzStaticHosts(f *testing.F) {
	for _, s := range []string{
		"name.test:198.18.0.1",
		"a.test:198.18.0.1,2001:db8::1;b.test:[::1] c:127.0.0.1\n",
		"dup:1.2.3.4 dup:1.2.3.4,1.2.3.4",
		"ll.test:fe80::1%eth0,[fe80::2%lo]",
		"map.test:::ffff:198.18.0.1",
		"name.test", "name.test:", ":1.2.3.4", "", " ; \t", "a:1.2.3.4,",
		"a:1.2.3.4:5", "a\x00b:1.2.3.4", "a:1.2.3.4\x00", strings.Repeat("x", 254) + ":1.2.3.4",
		"[::1]:::1", "a:256.1.1.1", "é.test:1.1.1.1",
	} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		hosts, err := StaticHosts(s, maxHostLen)
		if err != nil {
			if hosts != nil || !strings.HasPrefix(err.Error(), "static_hosts ") {
				t.Fatalf("%q: %v with %v", s, err, hosts)
			}
			return
		}
		if len(hosts) == 0 {
			t.Fatalf("%q: accepted with no entry", s)
		}
		var text []string
		for _, name := range slices.Sorted(maps.Keys(hosts)) {
			addrs := hosts[name]
			if name == "" || len(name) > maxHostLen || hasControl(name) || strings.ContainsAny(name, ":; \t\r\n") {
				t.Fatalf("%q: bad name %q", s, name)
			}
			if len(addrs) == 0 {
				t.Fatalf("%q: %q has no address", s, name)
			}
			list := make([]string, len(addrs))
			for i, a := range addrs {
				if !a.IsValid() {
					t.Fatalf("%q: %q -> %v", s, name, a)
				}
				list[i] = a.String()
			}
			text = append(text, name+":"+strings.Join(list, ","))
		}
		// Round trip: written back as NAME:ADDR,... entries, the list
		// reads as the same table.
		again, err := StaticHosts(strings.Join(text, ";"), maxHostLen)
		if err != nil || !maps.EqualFunc(hosts, again, slices.Equal) {
			t.Fatalf("%q: %v read back from %q as %v %v", s, hosts, text, again, err)
		}
	})
}

func FuzzNameservers(f *testing.F) {
	for _, s := range []string{
		"127.0.0.1", "127.0.0.1:5353, [::1]:53,2001:db8::53", "[fe80::1%eth0]:53",
		"fe80::1%eth0", "127.0.0.1:0", "not-a-server", "", ",", "1.2.3.4:65536",
		"[::1]", "::1:53", " 198.18.0.1 ", "1.2.3.4\x00:53",
	} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		ns, err := Nameservers(s)
		if err != nil {
			if ns != nil || !strings.HasPrefix(err.Error(), "nameserver ") {
				t.Fatalf("%q: %v with %v", s, err, ns)
			}
			return
		}
		if len(ns) != strings.Count(s, ",")+1 {
			t.Fatalf("%q: %d servers for %d fields", s, len(ns), strings.Count(s, ",")+1)
		}
		text := make([]string, len(ns))
		for i, ap := range ns {
			if !ap.IsValid() || ap.Port() == 0 {
				t.Fatalf("%q: server %v", s, ap)
			}
			text[i] = ap.String()
		}
		again, err := Nameservers(strings.Join(text, ","))
		if err != nil || !slices.Equal(ns, again) {
			t.Fatalf("%q: %v read back as %v %v", s, ns, again, err)
		}
	})
}

func FuzzLocalHost(f *testing.F) {
	for _, s := range []string{
		"127.0.0.1", "::1", "[::1]", "[2001:db8::1", "fe80::1%eth0", "[fe80::1%2]",
		"not-an-ip", "", "0.0.0.0", "::ffff:127.0.0.1", "1.2.3.4\x00",
	} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		a, err := LocalHost(s)
		if err != nil {
			if a.IsValid() || !strings.HasPrefix(err.Error(), "local_host ") {
				t.Fatalf("%q: %v with %v", s, err, a)
			}
			return
		}
		if !a.IsValid() || strings.IndexByte(a.String(), 0) >= 0 && strings.IndexByte(s, 0) < 0 {
			t.Fatalf("%q: %v", s, a)
		}
		// Both spellings read back as the same address.
		for _, text := range []string{a.String(), "[" + a.String() + "]"} {
			if b, err := LocalHost(text); err != nil || b != a {
				t.Fatalf("%q: %v read back from %q as %v %v", s, a, text, b, err)
			}
		}
		if b, err := netip.ParseAddr(unbracket(s)); err != nil || b != a {
			t.Fatalf("%q: %v, netip says %v %v", s, a, b, err)
		}
	})
}

func FuzzALPN(f *testing.F) {
	for _, s := range []string{"h2,http/1.1", "h2", "", ",", "h2,,h3", "a\x00b", "http/1.1,h2,h3"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		got, err := ALPN(s)
		if err != nil {
			return
		}
		if strings.Join(got, ",") != s {
			t.Fatalf("ALPN(%q) = %q: the list does not join back", s, got)
		}
		for _, p := range got {
			if p == "" || hasControl(p) {
				t.Fatalf("ALPN(%q) accepted protocol %q", s, p)
			}
		}
	})
}
