package testbed

import (
	"bufio"
	"crypto/tls"
	"crypto/x509"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/netip"
	"syscall"
	"testing"
	"time"

	"github.com/miekg/dns"
)

// TestHTTPSRedirect checks the web server's HTTPS-record redirect from
// the client namespace, by address (no resolver but the bed's DNS server,
// asked directly): the record, the origin refusing the HTTPS port, and
// the redirect port serving the origin's name only to a client that sends
// it.
func TestHTTPSRedirect(t *testing.T) {
	bed := startBed(t, Options{SkipSelfCheck: true})
	defer bed.Close()
	web, err := bed.ServeHTTP(0, 0)
	if err != nil {
		t.Fatal(err)
	}
	defer web.Close()
	r, err := bed.ServeHTTPSRedirect(web, 0)
	if err != nil {
		t.Fatal(err)
	}
	env, err := WebEnv(web, "/ca.pem")
	if err != nil {
		t.Fatal(err)
	}
	want, _ := json.Marshal(r)
	if got := env[len(env)-1]; got != EnvHTTPSRedirect+"="+string(want) {
		t.Errorf("env: %s, want %s=%s", got, EnvHTTPSRedirect, want)
	}
	roots := x509.NewCertPool()
	roots.AppendCertsFromPEM(web.CertPEM)

	ask := func(name string, qtype uint16) *dns.Msg {
		t.Helper()
		var in *dns.Msg
		err := bed.InClient(func() error {
			m := new(dns.Msg)
			m.SetQuestion(dns.Fqdn(name), qtype)
			var err error
			in, _, err = (&dns.Client{Timeout: 2 * time.Second}).Exchange(m, net.JoinHostPort(DNSServerV4.String(), "53"))
			return err
		})
		if err != nil {
			t.Fatal(err)
		}
		return in
	}
	ans := ask(fmt.Sprintf("_%d._https.%s", web.HTTPSPort, RedirectHost), dns.TypeHTTPS).Answer
	if len(ans) != 1 || ans[0].(*dns.HTTPS).Target != RedirectTarget+"." || !hasPort(ans[0].(*dns.HTTPS), uint16(r.Port)) {
		t.Errorf("HTTPS record: %v, want target %s port %d", ans, RedirectTarget, r.Port)
	}
	if ans := ask(RedirectHost, dns.TypeAAAA).Answer; len(ans) != 1 || ans[0].(*dns.AAAA).AAAA.String() != V6RedirectOrigin.String() {
		t.Errorf("origin AAAA: %v", ans)
	}
	if ans := ask(RedirectTarget, dns.TypeAAAA).Answer; len(ans) != 1 || ans[0].(*dns.AAAA).AAAA.String() != V6Good1.String() {
		t.Errorf("target AAAA: %v", ans)
	}

	// get makes its socket in the client namespace (a socket stays in the
	// namespace it was made in) and speaks TLS and HTTP/1.1 over it.
	get := func(addr netip.Addr, port uint16, serverName string) (Seen, error) {
		var seen Seen
		var conn net.Conn
		err := bed.InClient(func() error {
			var err error
			conn, err = net.DialTimeout("tcp", netip.AddrPortFrom(addr, port).String(), 3*time.Second)
			return err
		})
		if err != nil {
			return seen, err
		}
		defer conn.Close()
		conn.SetDeadline(time.Now().Add(3 * time.Second))
		tc := tls.Client(conn, &tls.Config{RootCAs: roots, ServerName: serverName})
		if _, err := io.WriteString(tc, "GET /r HTTP/1.1\r\nHost: "+serverName+"\r\nConnection: close\r\n\r\n"); err != nil {
			return seen, err
		}
		resp, err := http.ReadResponse(bufio.NewReader(tc), nil)
		if err != nil {
			return seen, err
		}
		defer resp.Body.Close()
		body, err := io.ReadAll(resp.Body)
		if err != nil {
			return seen, err
		}
		return seen, json.Unmarshal(body, &seen)
	}
	for _, a := range []netip.Addr{V6RedirectOrigin, V4RedirectOrigin} {
		if _, err := get(a, web.HTTPSPort, RedirectHost); !errors.Is(err, syscall.ECONNREFUSED) {
			t.Errorf("origin %v port %d: %v, want connection refused", a, web.HTTPSPort, err)
		}
	}
	for _, a := range []netip.Addr{V6Good1, V4Good1} {
		seen, err := get(a, uint16(r.Port), RedirectHost)
		if err != nil {
			t.Errorf("redirect %v port %d: %v", a, r.Port, err)
			continue
		}
		if seen.Local != a.String() || seen.Port != r.Port || seen.SNI != RedirectHost || !seen.TLS {
			t.Errorf("redirect %v: server saw %+v", a, seen)
		}
		// The target's own name gets no certificate.
		if _, err := get(a, uint16(r.Port), RedirectTarget); err == nil {
			t.Errorf("redirect %v with server name %s: connected, want a failed handshake", a, RedirectTarget)
		}
	}
	// The web server's other names are unchanged: SNI and port reported.
	if seen, err := get(V6Good1, web.HTTPSPort, "v4-only.hev2.test"); err != nil || seen.SNI != "v4-only.hev2.test" || seen.Port != int(web.HTTPSPort) {
		t.Errorf("HTTPS port: %+v, %v", seen, err)
	}
}

func hasPort(rr *dns.HTTPS, port uint16) bool {
	for _, kv := range rr.Value {
		if p, ok := kv.(*dns.SVCBPort); ok && p.Port == port {
			return true
		}
	}
	return false
}
