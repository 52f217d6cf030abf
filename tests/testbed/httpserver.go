package testbed

import (
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/tls"
	"crypto/x509"
	"crypto/x509/pkix"
	"encoding/json"
	"encoding/pem"
	"errors"
	"fmt"
	"math/big"
	"net"
	"net/http"
	"net/netip"
	"strconv"
	"sync"
	"time"
)

// Default ports of the bed's web server (ServeHTTP), beside the plain
// listeners' DefaultPort.
const (
	DefaultHTTPPort  = 8081
	DefaultHTTPSPort = 8443
)

// WebServer is an HTTP and an HTTPS server in the server namespace,
// listening on every server address (wildcard, both families): a client
// reaches it at whatever address its race picks, and the impairments
// (blackhole, delay) apply as they do to the plain listeners. Every
// request is answered with a Seen, so the client learns over which family
// and to which address the server saw it connect.
type WebServer struct {
	HTTPPort, HTTPSPort uint16
	// CertPEM is the HTTPS server's self-signed certificate (made at
	// start, valid for *.hev2.test and the server addresses): clients
	// trust exactly it.
	CertPEM []byte
	// Redirect is the HTTPS-record redirect (ServeHTTPSRedirect), nil
	// until added.
	Redirect *Redirect

	ca      tls.Certificate
	servers []*http.Server
	wg      sync.WaitGroup
}

// Seen is the body of every answer, as JSON.
type Seen struct {
	// Peer is the client's address as the server saw it, Local the server
	// address it connected to, Family "ipv4" or "ipv6" (of Peer).
	Peer   string `json:"peer"`
	Local  string `json:"local"`
	Family string `json:"family"`
	TLS    bool   `json:"tls"`
	Path   string `json:"path"`
	// Port is the server port the client connected to; SNI the TLS
	// server name the client sent (absent without TLS or a name).
	Port int    `json:"port"`
	SNI  string `json:"sni,omitempty"`
}

// ServeHTTP starts the web server in the server namespace on httpPort and
// httpsPort (0: the defaults). Close stops it (Bed.Close does not).
func (b *Bed) ServeHTTP(httpPort, httpsPort uint16) (*WebServer, error) {
	if httpPort == 0 {
		httpPort = DefaultHTTPPort
	}
	if httpsPort == 0 {
		httpsPort = DefaultHTTPSPort
	}
	certPEM, cert, err := selfSignedCert()
	if err != nil {
		return nil, err
	}
	w := &WebServer{HTTPPort: httpPort, HTTPSPort: httpsPort, CertPEM: certPEM, ca: cert}
	var plain, secure net.Listener
	// The sockets are made on a thread inside the server namespace; they
	// stay there whatever goroutine serves them.
	err = b.InServer(func() error {
		var err error
		if plain, err = net.Listen("tcp", ":"+strconv.Itoa(int(httpPort))); err != nil {
			return err
		}
		secure, err = net.Listen("tcp", ":"+strconv.Itoa(int(httpsPort)))
		return err
	})
	if err != nil {
		if plain != nil {
			plain.Close()
		}
		return nil, fmt.Errorf("testbed: web server: %w", err)
	}
	handler := http.HandlerFunc(answerSeen)
	w.serve(&http.Server{Handler: handler, ReadHeaderTimeout: 10 * time.Second}, plain)
	// HTTP/1.1 only over TLS (no ALPN "h2"): what every client tested speaks.
	w.serve(&http.Server{Handler: handler, ReadHeaderTimeout: 10 * time.Second},
		tls.NewListener(secure, &tls.Config{Certificates: []tls.Certificate{cert}}))
	return w, nil
}

func (w *WebServer) serve(s *http.Server, ln net.Listener) {
	w.servers = append(w.servers, s)
	w.wg.Add(1)
	go func() {
		defer w.wg.Done()
		if err := s.Serve(ln); err != nil && !errors.Is(err, http.ErrServerClosed) {
			fmt.Printf("testbed: web server on %v: %v\n", ln.Addr(), err)
		}
	}()
}

// Close stops both servers and their connections.
func (w *WebServer) Close() {
	for _, s := range w.servers {
		s.Close()
	}
	w.wg.Wait()
}

func answerSeen(rw http.ResponseWriter, r *http.Request) {
	peer, _ := netip.ParseAddrPort(r.RemoteAddr)
	seen := Seen{Peer: peer.Addr().Unmap().String(), Family: "ipv6", TLS: r.TLS != nil, Path: r.URL.Path}
	if peer.Addr().Unmap().Is4() {
		seen.Family = "ipv4"
	}
	if la, ok := r.Context().Value(http.LocalAddrContextKey).(net.Addr); ok {
		if ap, err := netip.ParseAddrPort(la.String()); err == nil {
			seen.Local = ap.Addr().Unmap().String()
			seen.Port = int(ap.Port())
		}
	}
	if r.TLS != nil {
		seen.SNI = r.TLS.ServerName
	}
	body, _ := json.Marshal(seen)
	rw.Header().Set("Content-Type", "application/json")
	rw.Header().Set("Content-Length", strconv.Itoa(len(body)))
	rw.Write(body)
}

// selfSignedCert makes a throwaway P-256 certificate for every name of the
// suite (*.hev2.test) and every server address, its own issuer.
func selfSignedCert() ([]byte, tls.Certificate, error) {
	key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		return nil, tls.Certificate{}, err
	}
	now := time.Now()
	tmpl := &x509.Certificate{
		SerialNumber:          big.NewInt(now.UnixNano()),
		Subject:               pkix.Name{CommonName: "hev2 test bed"},
		NotBefore:             now.Add(-time.Hour),
		NotAfter:              now.Add(24 * time.Hour),
		KeyUsage:              x509.KeyUsageDigitalSignature | x509.KeyUsageCertSign,
		ExtKeyUsage:           []x509.ExtKeyUsage{x509.ExtKeyUsageServerAuth},
		BasicConstraintsValid: true,
		IsCA:                  true,
		DNSNames:              []string{"*.hev2.test", "hev2.test"},
	}
	for a := range StandardLayout() {
		tmpl.IPAddresses = append(tmpl.IPAddresses, a.AsSlice())
	}
	der, err := x509.CreateCertificate(rand.Reader, tmpl, tmpl, &key.PublicKey, key)
	if err != nil {
		return nil, tls.Certificate{}, err
	}
	certPEM := pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: der})
	keyDER, err := x509.MarshalECPrivateKey(key)
	if err != nil {
		return nil, tls.Certificate{}, err
	}
	cert, err := tls.X509KeyPair(certPEM, pem.EncodeToMemory(&pem.Block{Type: "EC PRIVATE KEY", Bytes: keyDER}))
	return certPEM, cert, err
}
