// Package testdns is the project's test DNS server: a real DNS server
// (miekg/dns) on real sockets whose answers, delays and silences each test
// scripts per name and query type, and which logs every query it gets.
//
// The test bed serves it inside its server namespace; the resolver tests
// serve it on a namespace's or this machine's loopback. It must not import
// core: core's own tests use it.
package testdns

import (
	"fmt"
	"net"
	"net/netip"
	"strings"
	"sync"
	"time"

	"github.com/miekg/dns"
)

// Server answers every name from a table set by the test: an unknown name
// is NXDOMAIN, a known name asked for a type it has no entry for is NODATA.
// An entry for "*.example" covers every name below example.
type Server struct {
	mu      sync.Mutex
	table   map[key]Behaviour
	queries []Query

	// Addr is where it listens (UDP and TCP) when it serves on one
	// address; with several, the last one it was given.
	Addr netip.AddrPort

	servers []*dns.Server
	pending sync.WaitGroup // delayed answers still to be written
	closed  chan struct{}

	// For AfterAAAA and AfterName: per (name, type), the gated queries
	// that arrived and the answers written, and a channel closed (and
	// replaced) at each answer someone waits for.
	gated, answers map[key]int
	written        map[key]chan struct{}
}

type key struct {
	name  string
	qtype uint16
}

// Query is one query the server received.
type Query struct {
	Name  string // lower case, without the final dot
	Type  uint16
	Proto string // "udp" or "tcp"
	At    time.Time
}

// New returns a server with an empty table that serves nothing yet.
func New() *Server {
	return &Server{table: map[key]Behaviour{}, closed: make(chan struct{}),
		gated: map[key]int{}, answers: map[key]int{}, written: map[key]chan struct{}{}}
}

// Serve starts a server answering on udp and tcp (either may be nil) until
// Close.
func Serve(udp net.PacketConn, tcp net.Listener) *Server {
	s := New()
	s.Serve(udp, tcp)
	return s
}

// ServeLoopback serves on 127.0.0.1, on one random port for UDP and TCP.
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
	return nil, fmt.Errorf("testdns: no free port for UDP and TCP on 127.0.0.1")
}

// Serve also answers on udp and tcp (either may be nil); Close closes them.
func (s *Server) Serve(udp net.PacketConn, tcp net.Listener) {
	if udp != nil {
		s.Addr = netip.MustParseAddrPort(udp.LocalAddr().String())
		s.start(&dns.Server{PacketConn: udp, Handler: s})
	}
	if tcp != nil {
		s.Addr = netip.MustParseAddrPort(tcp.Addr().String())
		s.start(&dns.Server{Listener: tcp, Handler: s})
	}
}

func (s *Server) start(srv *dns.Server) {
	started := make(chan struct{})
	srv.NotifyStartedFunc = func() { close(started) }
	s.servers = append(s.servers, srv)
	go srv.ActivateAndServe()
	<-started
}

// Close stops serving, closes the sockets and drops the delayed answers not
// yet written.
func (s *Server) Close() {
	close(s.closed) // delayed answers give up
	for _, srv := range s.servers {
		srv.Shutdown()
	}
	s.pending.Wait()
}

// Set makes the server answer qtype (dns.TypeA, dns.TypeAAAA,
// dns.TypeHTTPS, ...) queries for name with b; qtype 0 sets both A and
// AAAA. name may end in a dot.
func (s *Server) Set(name string, qtype uint16, b Behaviour) {
	name = canonical(name)
	s.mu.Lock()
	defer s.mu.Unlock()
	if qtype == 0 {
		s.table[key{name, dns.TypeA}] = b
		s.table[key{name, dns.TypeAAAA}] = b
		return
	}
	s.table[key{name, qtype}] = b
}

// SetHost sets the AAAA and A behaviours of name at once.
func (s *Server) SetHost(name string, aaaa, a Behaviour) {
	s.Set(name, dns.TypeAAAA, aaaa)
	s.Set(name, dns.TypeA, a)
}

// Remove forgets every behaviour of name (it becomes NXDOMAIN).
func (s *Server) Remove(name string) {
	name = canonical(name)
	s.mu.Lock()
	defer s.mu.Unlock()
	for k := range s.table {
		if k.name == name {
			delete(s.table, k)
		}
	}
}

// Queries returns the queries received so far for name (all names if name
// is empty), oldest first.
func (s *Server) Queries(name string) []Query {
	name = canonical(name)
	s.mu.Lock()
	defer s.mu.Unlock()
	var out []Query
	for _, q := range s.queries {
		if name == "" || q.Name == name {
			out = append(out, q)
		}
	}
	return out
}

// Count returns how many qtype queries for name arrived.
func (s *Server) Count(name string, qtype uint16) int {
	n := 0
	for _, q := range s.Queries(name) {
		if q.Type == qtype {
			n++
		}
	}
	return n
}

func canonical(name string) string {
	return strings.TrimSuffix(strings.ToLower(name), ".")
}

// ServeDNS answers one query according to the table.
func (s *Server) ServeDNS(w dns.ResponseWriter, r *dns.Msg) {
	if len(r.Question) != 1 {
		m := new(dns.Msg)
		m.SetRcode(r, dns.RcodeFormatError)
		w.WriteMsg(m)
		return
	}
	q := r.Question[0]
	proto := w.LocalAddr().Network()
	b := s.behaviourFor(q, proto)
	if b.Never {
		return
	}
	if b.Forge != nil && proto == "udp" {
		forge(w, b.Forge(r))
	}
	// AfterAAAA, AfterName: the answer this one waits for, and its count.
	var after key
	var pair int
	switch {
	case b.AfterName != "":
		after = key{canonical(b.AfterName), b.AfterType}
	case b.AfterAAAA && q.Qtype == dns.TypeA:
		after = key{canonical(q.Name), dns.TypeAAAA}
	}
	if after.name != "" {
		pair = s.countGated(key{canonical(q.Name), q.Qtype})
	}
	if b.Delay > 0 || pair > 0 {
		// Answer later from another goroutine: a TCP connection must stay
		// able to carry other queries meanwhile.
		s.pending.Add(1)
		go func() {
			defer s.pending.Done()
			if pair > 0 && !s.await(after, pair) {
				return
			}
			select {
			case <-time.After(b.Delay):
			case <-s.closed:
				return
			}
			s.reply(w, r, q, b, proto)
		}()
		return
	}
	s.reply(w, r, q, b, proto)
}

// reply is the package's reply that also counts the answers written
// (AfterAAAA, AfterName).
func (s *Server) reply(w dns.ResponseWriter, r *dns.Msg, q dns.Question, b Behaviour, proto string) {
	reply(w, r, q, b, proto)
	k := key{canonical(q.Name), q.Qtype}
	s.mu.Lock()
	defer s.mu.Unlock()
	s.answers[k]++
	if c, ok := s.written[k]; ok {
		close(c)
		delete(s.written, k)
	}
}

// countGated counts a gated query of k; the count is the answer its own
// waits for.
func (s *Server) countGated(k key) int {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.gated[k]++
	return s.gated[k]
}

// await waits until k has had n answers, AfterAAAAWait at most (then the
// count is taken as reached, so that a client that asked the gated type
// alone once does not make every later one wait); false if the server
// closed meanwhile.
func (s *Server) await(k key, n int) bool {
	limit := time.NewTimer(AfterAAAAWait)
	defer limit.Stop()
	for {
		s.mu.Lock()
		if s.answers[k] >= n {
			s.mu.Unlock()
			return true
		}
		c, ok := s.written[k]
		if !ok {
			c = make(chan struct{})
			s.written[k] = c
		}
		s.mu.Unlock()
		select {
		case <-c:
		case <-limit.C:
			s.mu.Lock()
			s.answers[k] = max(s.answers[k], n)
			s.mu.Unlock()
			return true
		case <-s.closed:
			return false
		}
	}
}

// reply writes b's answer to r: Raw's messages as they are, else the
// table's answer.
func reply(w dns.ResponseWriter, r *dns.Msg, q dns.Question, b Behaviour, proto string) {
	if b.Raw == nil {
		w.WriteMsg(answer(r, q, b, proto))
		return
	}
	for _, msg := range b.Raw(r, proto) {
		w.Write(msg)
	}
}

// forge sends msg to w's client from a socket that is not the server's.
func forge(w dns.ResponseWriter, msg []byte) {
	local, ok := w.LocalAddr().(*net.UDPAddr)
	if !ok {
		return
	}
	c, err := net.ListenUDP("udp", &net.UDPAddr{IP: local.IP})
	if err != nil {
		return
	}
	defer c.Close()
	c.WriteTo(msg, w.RemoteAddr())
}

func (s *Server) behaviourFor(q dns.Question, proto string) Behaviour {
	name := canonical(q.Name)
	s.mu.Lock()
	defer s.mu.Unlock()
	s.queries = append(s.queries, Query{Name: name, Type: q.Qtype, Proto: proto, At: time.Now()})
	if b, ok := s.lookup(name, func(k key) bool { return k.qtype == q.Qtype }); ok {
		return b
	}
	if _, exists := s.lookup(name, func(key) bool { return true }); exists {
		return NoData()
	}
	return NXDomain()
}

// lookup finds the entry for name, or else for the closest wildcard above
// it, among the entries that match wants. s.mu is held.
func (s *Server) lookup(name string, wants func(key) bool) (Behaviour, bool) {
	for n, wild := name, false; ; {
		want := n
		if wild {
			want = "*." + n
		}
		for k, b := range s.table {
			if k.name == want && wants(k) {
				return b, true
			}
		}
		i := strings.IndexByte(n, '.')
		if i < 0 {
			return Behaviour{}, false
		}
		n, wild = n[i+1:], true
	}
}

func answer(r *dns.Msg, q dns.Question, b Behaviour, proto string) *dns.Msg {
	m := new(dns.Msg)
	m.SetReply(r)
	if b.RejectEDNS && r.IsEdns0() != nil {
		m.Rcode = dns.RcodeFormatError
		return m
	}
	// Authoritative and recursion-available: Go's resolver treats an
	// empty, non-authoritative answer as a lame referral.
	m.Authoritative = true
	m.RecursionAvailable = true
	m.Rcode = b.Rcode
	if b.Truncate && proto == "udp" {
		m.Truncated = true
		return m
	}
	if b.Rcode != dns.RcodeSuccess {
		return m
	}
	if q.Qtype == dns.TypeHTTPS {
		for _, rec := range b.HTTPS {
			m.Answer = append(m.Answer, rec.rr(q.Name))
		}
		return m
	}
	hdr := dns.RR_Header{Name: q.Name, Class: dns.ClassINET, Ttl: 1}
	for _, a := range b.Addrs {
		switch {
		case q.Qtype == dns.TypeA && a.Is4():
			h := hdr
			h.Rrtype = dns.TypeA
			m.Answer = append(m.Answer, &dns.A{Hdr: h, A: a.AsSlice()})
		case q.Qtype == dns.TypeAAAA && a.Is6() && !a.Is4In6():
			h := hdr
			h.Rrtype = dns.TypeAAAA
			m.Answer = append(m.Answer, &dns.AAAA{Hdr: h, AAAA: a.AsSlice()})
		}
	}
	return m
}
