// Package resolvertest holds what the resolver tests and benchmarks share: a
// DNS server whose answers (and silences) each test scripts, and helpers to
// put sockets and processes into the project's own network namespaces.
//
// It must not import core: core's own tests use it.
package resolvertest

import (
	"fmt"
	"net"
	"net/netip"
	"strings"
	"sync"
	"time"

	"github.com/miekg/dns"
)

// Rule says how the server answers one name and query type.
type Rule struct {
	Addrs    []netip.Addr  // answer records (those of the query's family)
	Rcode    int           // dns.RcodeSuccess unless set
	Delay    time.Duration // wait before answering
	Drop     bool          // never answer
	Truncate bool          // over UDP answer with TC set and no records
	// RejectEDNS answers FORMERR to queries with an EDNS0 record, as
	// servers that predate EDNS0 do.
	RejectEDNS bool
	TTL        uint32
}

// Query is one question the server received.
type Query struct {
	Name  string // lower case, without the final dot
	Type  uint16
	Proto string // "udp" or "tcp"
	At    time.Time
}

// Server is a DNS server on given sockets. Names without a rule get
// NXDOMAIN. A rule for "*.example" matches every name below example.
type Server struct {
	mu      sync.Mutex
	rules   map[ruleKey]Rule
	queries []Query
	servers []*dns.Server
	Addr    netip.AddrPort // where it listens (UDP and TCP)
}

type ruleKey struct {
	name  string
	qtype uint16
}

// Serve answers on udp and tcp (either may be nil) until Close.
func Serve(udp net.PacketConn, tcp net.Listener) *Server {
	s := &Server{rules: make(map[ruleKey]Rule)}
	if udp != nil {
		s.Addr = netip.MustParseAddrPort(udp.LocalAddr().String())
		s.start(&dns.Server{PacketConn: udp, Handler: s})
	}
	if tcp != nil {
		s.Addr = netip.MustParseAddrPort(tcp.Addr().String())
		s.start(&dns.Server{Listener: tcp, Handler: s})
	}
	return s
}

// ServeLoopback listens on 127.0.0.1 on one random port for UDP and TCP.
func ServeLoopback() (*Server, error) {
	for try := 0; try < 20; try++ {
		udp, err := net.ListenPacket("udp4", "127.0.0.1:0")
		if err != nil {
			return nil, err
		}
		tcp, err := net.Listen("tcp4", udp.LocalAddr().String())
		if err != nil {
			udp.Close() // the TCP port is taken: try another one
			continue
		}
		return Serve(udp, tcp), nil
	}
	return nil, fmt.Errorf("no free port for UDP and TCP on 127.0.0.1")
}

func (s *Server) start(srv *dns.Server) {
	started := make(chan struct{})
	srv.NotifyStartedFunc = func() { close(started) }
	go srv.ActivateAndServe()
	<-started
	s.servers = append(s.servers, srv)
}

// Close stops the server and closes its sockets.
func (s *Server) Close() {
	for _, srv := range s.servers {
		srv.Shutdown()
	}
}

// Set scripts the answer to name (both families when qtype is 0).
func (s *Server) Set(name string, qtype uint16, r Rule) {
	name = canonical(name)
	s.mu.Lock()
	defer s.mu.Unlock()
	if qtype == 0 {
		s.rules[ruleKey{name, dns.TypeA}] = r
		s.rules[ruleKey{name, dns.TypeAAAA}] = r
		return
	}
	s.rules[ruleKey{name, qtype}] = r
}

// Queries returns the questions received so far.
func (s *Server) Queries() []Query {
	s.mu.Lock()
	defer s.mu.Unlock()
	return append([]Query(nil), s.queries...)
}

// Count returns how many questions for name and qtype arrived.
func (s *Server) Count(name string, qtype uint16) int {
	name = canonical(name)
	n := 0
	for _, q := range s.Queries() {
		if q.Name == name && q.Type == qtype {
			n++
		}
	}
	return n
}

func canonical(name string) string {
	return strings.TrimSuffix(strings.ToLower(name), ".")
}

func (s *Server) rule(name string, qtype uint16) (Rule, bool) {
	if r, ok := s.rules[ruleKey{name, qtype}]; ok {
		return r, true
	}
	for n := name; ; {
		i := strings.IndexByte(n, '.')
		if i < 0 {
			return Rule{}, false
		}
		n = n[i+1:]
		if r, ok := s.rules[ruleKey{"*." + n, qtype}]; ok {
			return r, true
		}
	}
}

// ServeDNS implements dns.Handler.
func (s *Server) ServeDNS(w dns.ResponseWriter, req *dns.Msg) {
	if len(req.Question) != 1 {
		m := new(dns.Msg)
		m.SetRcode(req, dns.RcodeFormatError)
		w.WriteMsg(m)
		return
	}
	q := req.Question[0]
	name := canonical(q.Name)
	proto := "udp"
	if _, ok := w.RemoteAddr().(*net.TCPAddr); ok {
		proto = "tcp"
	}
	s.mu.Lock()
	s.queries = append(s.queries, Query{Name: name, Type: q.Qtype, Proto: proto, At: time.Now()})
	r, ok := s.rule(name, q.Qtype)
	if !ok {
		// A rule for the other type means the name exists: NODATA.
		other := dns.TypeA
		if q.Qtype == dns.TypeA {
			other = dns.TypeAAAA
		}
		if _, exists := s.rule(name, other); !exists {
			r.Rcode = dns.RcodeNameError
		}
	}
	s.mu.Unlock()

	if r.Drop {
		return
	}
	if r.Delay > 0 {
		time.Sleep(r.Delay)
	}
	m := new(dns.Msg)
	if r.RejectEDNS && req.IsEdns0() != nil {
		m.SetRcode(req, dns.RcodeFormatError)
		w.WriteMsg(m)
		return
	}
	m.SetRcode(req, r.Rcode)
	m.Authoritative = true
	m.RecursionAvailable = true
	if r.Truncate && proto == "udp" {
		m.Truncated = true
		w.WriteMsg(m)
		return
	}
	if r.Rcode == dns.RcodeSuccess {
		m.Answer = records(q, r)
	}
	w.WriteMsg(m)
}

func records(q dns.Question, r Rule) []dns.RR {
	var rrs []dns.RR
	hdr := dns.RR_Header{Name: q.Name, Class: dns.ClassINET, Ttl: r.TTL}
	for _, a := range r.Addrs {
		switch {
		case q.Qtype == dns.TypeA && a.Is4():
			hdr.Rrtype = dns.TypeA
			rrs = append(rrs, &dns.A{Hdr: hdr, A: a.AsSlice()})
		case q.Qtype == dns.TypeAAAA && a.Is6():
			hdr.Rrtype = dns.TypeAAAA
			rrs = append(rrs, &dns.AAAA{Hdr: hdr, AAAA: a.AsSlice()})
		}
	}
	return rrs
}
