package testbed

import (
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/tls"
	"crypto/x509"
	"crypto/x509/pkix"
	"fmt"
	"math/big"
	"net"
	"net/http"
	"net/netip"
	"strconv"
	"time"

	"github.com/miekg/dns"

	"github.com/hev2/hev2/tests/testdns"
)

// The web server's HTTPS-record redirect (Happy Eyeballs v3 through the
// HTTP clients): RedirectHost's HTTPS record, asked for the web server's
// HTTPS port (_<HTTPSPort>._https.RedirectHost), sends the connection to
// RedirectTarget on the redirect port, where the web server serves HTTPS
// too, with a certificate for RedirectHost alone and only to a client
// whose TLS server name (SNI) is RedirectHost. RedirectHost's own
// addresses (V4RedirectOrigin, V6RedirectOrigin) refuse the HTTPS port
// (TCP RST), so only a client that follows the record gets the page, and
// only if its TLS still names the origin.
const (
	RedirectHost        = "https-redirect.hev2.test"
	RedirectTarget      = "svc." + RedirectHost
	DefaultRedirectPort = 8444
)

// The redirect origin's own addresses: in the server namespace, nothing
// but the web server's HTTPS port refused on them.
var (
	V4RedirectOrigin = netip.MustParseAddr("198.18.0.60")
	V6RedirectOrigin = netip.MustParseAddr("2001:db8::60")
)

// Redirect describes the redirect to a client (EnvHTTPSRedirect, JSON).
type Redirect struct {
	// Host is the origin: a client fetches https://Host:<HTTPSPort>/ with
	// HTTPS records on for the HTTPS port.
	Host string `json:"host"`
	// Port is where the record sends the connection; Target the record's
	// target, Winners its addresses (where the server sees the request).
	Port    int      `json:"port"`
	Target  string   `json:"target"`
	Winners []string `json:"winners"`
	// Origin are Host's own addresses, refusing the HTTPS port.
	Origin []string `json:"origin"`
}

// ServeHTTPSRedirect adds the redirect to w (started by ServeHTTP) on port
// (0: DefaultRedirectPort): the origin's addresses (refusing w's HTTPS
// port), the DNS names (RedirectHost: its addresses and its HTTPS record;
// RedirectTarget: V6Good1 and V4Good1) and the HTTPS server on port, in
// the server namespace on the wildcard address; w.Close stops it too.
func (b *Bed) ServeHTTPSRedirect(w *WebServer, port uint16) (*Redirect, error) {
	if port == 0 {
		port = DefaultRedirectPort
	}
	if port == w.HTTPPort || port == w.HTTPSPort {
		return nil, fmt.Errorf("testbed: redirect port %d is one of the web server's", port)
	}
	cert, err := w.leafCert(RedirectHost)
	if err != nil {
		return nil, err
	}
	for _, a := range []netip.Addr{V4RedirectOrigin, V6RedirectOrigin} {
		if err := b.Impair(a, Refuse()); err != nil {
			return nil, err
		}
		if err := run(b.rejectPort(a, w.HTTPSPort)...); err != nil {
			return nil, err
		}
	}
	var ln net.Listener
	err = b.InServer(func() error {
		var err error
		ln, err = net.Listen("tcp", ":"+strconv.Itoa(int(port)))
		return err
	})
	if err != nil {
		return nil, fmt.Errorf("testbed: redirect web server: %w", err)
	}
	// The certificate goes only to a client that names the origin: one
	// that sends the target's name (or none) fails its handshake.
	conf := &tls.Config{GetCertificate: func(hello *tls.ClientHelloInfo) (*tls.Certificate, error) {
		if hello.ServerName != RedirectHost {
			return nil, fmt.Errorf("no certificate for server name %q (only %s)", hello.ServerName, RedirectHost)
		}
		return &cert, nil
	}}
	w.serve(&http.Server{Handler: http.HandlerFunc(answerSeen), ReadHeaderTimeout: 10 * time.Second},
		tls.NewListener(ln, conf))

	b.DNS.SetHost(RedirectHost, Answer(V6RedirectOrigin), Answer(V4RedirectOrigin))
	b.DNS.Set(fmt.Sprintf("_%d._https.%s", w.HTTPSPort, RedirectHost), dns.TypeHTTPS, testdns.AnswerHTTPS(
		testdns.HTTPSRecord{Priority: 1, Target: RedirectTarget, Params: []dns.SVCBKeyValue{
			&dns.SVCBAlpn{Alpn: []string{"http/1.1"}}, &dns.SVCBPort{Port: port}}}))
	b.DNS.SetHost(RedirectTarget, Answer(V6Good1), Answer(V4Good1))
	r := &Redirect{Host: RedirectHost, Port: int(port), Target: RedirectTarget,
		Winners: []string{V6Good1.String(), V4Good1.String()},
		Origin:  []string{V6RedirectOrigin.String(), V4RedirectOrigin.String()}}
	w.Redirect = r
	return r, nil
}

// rejectPort builds the rule that answers every TCP connect to a's port
// with a reset (in the server namespace), whatever listens there.
func (b *Bed) rejectPort(a netip.Addr, port uint16) []string {
	tool := "iptables"
	if a.Is6() {
		tool = "ip6tables"
	}
	return []string{"ip", "netns", "exec", b.ServerNS, tool, "-w", "-A", "INPUT",
		"-d", a.String(), "-p", "tcp", "--dport", strconv.Itoa(int(port)), "-j", "REJECT", "--reject-with", "tcp-reset"}
}

// leafCert makes a P-256 certificate for name alone, issued by w's
// certificate (the one clients trust).
func (w *WebServer) leafCert(name string) (tls.Certificate, error) {
	ca, err := x509.ParseCertificate(w.ca.Certificate[0])
	if err != nil {
		return tls.Certificate{}, err
	}
	key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		return tls.Certificate{}, err
	}
	now := time.Now()
	tmpl := &x509.Certificate{
		SerialNumber: big.NewInt(now.UnixNano()),
		Subject:      pkix.Name{CommonName: name},
		NotBefore:    now.Add(-time.Hour),
		NotAfter:     now.Add(24 * time.Hour),
		KeyUsage:     x509.KeyUsageDigitalSignature,
		ExtKeyUsage:  []x509.ExtKeyUsage{x509.ExtKeyUsageServerAuth},
		DNSNames:     []string{name},
	}
	der, err := x509.CreateCertificate(rand.Reader, tmpl, ca, &key.PublicKey, w.ca.PrivateKey)
	if err != nil {
		return tls.Certificate{}, err
	}
	return tls.Certificate{Certificate: [][]byte{der}, PrivateKey: key}, nil
}
