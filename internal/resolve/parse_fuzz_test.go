package resolve

import (
	"fmt"
	"slices"
	"strings"
	"testing"
	"time"
	"unicode"
)

// Fuzz targets of the hosts(5) and resolv.conf(5) parsers. The seeds run
// in every `go test`; `make fuzz` runs each target longer (mk/fuzz.mk).

func FuzzParseHosts(f *testing.F) {
	for _, s := range []string{
		"127.0.0.1 localhost\n::1 localhost ip6-localhost\n",
		"198.18.0.7 Pinned.TEST. alias # comment\n2001:db8::7\tpinned.test\n",
		"# only a comment\n\n   \n",
		"fe80::1%eth0 ll.test\n1.2.3.4 dup dup DUP.\n1.2.3.4 dup\n",
		"not-an-ip name\n1.2.3.4\n256.0.0.1 bad\n",
		"1.2.3.4 a..\n1.2.3.4 .\n1.2.3.4 a\x00b\n\xff\xfe 1.1.1.1\n",
		"::ffff:1.2.3.4 mapped\r\n1.2.3.4 crlf\r\n",
	} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		names := parseHosts(data)
		var text strings.Builder
		for name, addrs := range names {
			if strings.ToLower(name) != name || strings.ContainsFunc(name, unicode.IsSpace) || strings.Contains(name, "#") {
				t.Fatalf("name %q", name)
			}
			if len(addrs) == 0 {
				t.Fatalf("%q has no address", name)
			}
			for i, a := range addrs {
				if !a.IsValid() || slices.Contains(addrs[:i], a) {
					t.Fatalf("%q: addresses %v", name, addrs)
				}
			}
			if name == "" || strings.HasSuffix(name, ".") {
				continue // "." and "a..": never asked (LookupFamily refuses them)
			}
			for _, a := range addrs {
				fmt.Fprintf(&text, "%v %s\n", a, name)
			}
		}
		// Round trip: the table written as "address name" lines reads
		// back the same (for every name a lookup can ask).
		again := parseHosts([]byte(text.String()))
		for name, addrs := range names {
			if name == "" || strings.HasSuffix(name, ".") {
				continue
			}
			if !slices.Equal(again[name], addrs) {
				t.Fatalf("%q: %v read back as %v from %q", name, addrs, again[name], text.String())
			}
			delete(again, name)
		}
		if len(again) != 0 {
			t.Fatalf("read back extra names %v", again)
		}
	})
}

func FuzzParseResolvConf(f *testing.F) {
	for _, s := range []string{
		"nameserver 127.0.0.1\nnameserver ::1\nsearch a.test b.test\noptions ndots:2 timeout:1 attempts:3 rotate use-vc\n",
		"domain corp.test\nsearch x.test\ndomain last.test extra\n",
		"nameserver 1.1.1.1\nnameserver 2.2.2.2\nnameserver 3.3.3.3\nnameserver 4.4.4.4\n",
		"nameserver fe80::1%eth0 # link-local\n; comment\n",
		"options ndots:99 timeout:0 attempts:0 attempts:999 inet6 edns0\n",
		"options ndots:x\n", "options timeout\n", "nameserver\n", "nameserver 1.2.3.4:53\n",
		"options ndots:-1\n", "search\n", "nameserver\t198.18.0.1\r\n", "\x00nameserver 1.1.1.1\n",
	} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		rc, err := parseResolvConf(strings.NewReader(s), "fuzz.conf")
		if err != nil {
			if !strings.HasPrefix(err.Error(), "fuzz.conf:") && !strings.Contains(err.Error(), "too long") {
				t.Fatalf("%q: error %q does not say where", s, err)
			}
			return
		}
		if len(rc.nameservers) > maxNameservers || rc.ndots < 0 || rc.ndots > maxNdots ||
			rc.timeout < time.Second || rc.timeout > maxTimeoutSecs*time.Second ||
			rc.attempts < 1 || rc.attempts > maxAttempts {
			t.Fatalf("%q: out of bounds: %+v", s, rc)
		}
		for _, ns := range rc.nameservers {
			if !ns.IsValid() || ns.Port() != 53 {
				t.Fatalf("%q: name server %v", s, ns)
			}
		}
		for _, d := range rc.search {
			if d == "" || strings.ContainsAny(d, "#;") || strings.ContainsFunc(d, unicode.IsSpace) {
				t.Fatalf("%q: search domain %q", s, d)
			}
		}
		// Round trip: written back as resolv.conf, it reads the same.
		var text strings.Builder
		for _, ns := range rc.nameservers {
			fmt.Fprintf(&text, "nameserver %v\n", ns.Addr())
		}
		if len(rc.search) > 0 {
			fmt.Fprintf(&text, "search %s\n", strings.Join(rc.search, " "))
		}
		fmt.Fprintf(&text, "options ndots:%d timeout:%d attempts:%d", rc.ndots, rc.timeout/time.Second, rc.attempts)
		if rc.rotate {
			text.WriteString(" rotate")
		}
		if rc.useTCP {
			text.WriteString(" use-vc")
		}
		again, err := parseResolvConf(strings.NewReader(text.String()+"\n"), "again.conf")
		if err != nil || !slices.Equal(again.nameservers, rc.nameservers) || !slices.Equal(again.search, rc.search) ||
			again.ndots != rc.ndots || again.timeout != rc.timeout || again.attempts != rc.attempts ||
			again.rotate != rc.rotate || again.useTCP != rc.useTCP {
			t.Fatalf("%q: %+v read back from %q as %+v %v", s, rc, text.String(), again, err)
		}
	})
}
