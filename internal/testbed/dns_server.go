package testbed

import (
	"fmt"
	"net"
	"strings"
	"sync"
	"time"

	"github.com/miekg/dns"
	"github.com/vishvananda/netns"
)

// DNSServer is a real DNS server (miekg/dns) on UDP and TCP port 53 of
// DNSServerV4 and DNSServerV6 in the server namespace. It answers every name
// from a table set by the test: an unknown name is NXDOMAIN, a known name
// asked for a type it has no entry for is NODATA.
type DNSServer struct {
	mu      sync.Mutex
	table   map[dnsKey]Behaviour
	queries []Query
	start   time.Time

	servers []*dns.Server
	pending sync.WaitGroup // delayed answers still to be written
	closed  chan struct{}
}

type dnsKey struct {
	name  string
	qtype uint16
}

// Query is one query the server received.
type Query struct {
	At    time.Duration // since the server started
	Name  string        // lower case, fully qualified
	Type  uint16
	Proto string // "udp" or "tcp"
}

// Set makes the server answer qtype (dns.TypeA, dns.TypeAAAA, ...) queries
// for name with b. name may omit the final dot.
func (s *DNSServer) Set(name string, qtype uint16, b Behaviour) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.table[dnsKey{fqdn(name), qtype}] = b
}

// SetHost sets the AAAA and A behaviours of name at once.
func (s *DNSServer) SetHost(name string, aaaa, a Behaviour) {
	s.Set(name, dns.TypeAAAA, aaaa)
	s.Set(name, dns.TypeA, a)
}

// Remove forgets every behaviour of name (it becomes NXDOMAIN).
func (s *DNSServer) Remove(name string) {
	s.mu.Lock()
	defer s.mu.Unlock()
	n := fqdn(name)
	for k := range s.table {
		if k.name == n {
			delete(s.table, k)
		}
	}
}

// Queries returns the queries received so far for name (all names if name
// is empty), oldest first.
func (s *DNSServer) Queries(name string) []Query {
	s.mu.Lock()
	defer s.mu.Unlock()
	var out []Query
	for _, q := range s.queries {
		if name == "" || q.Name == fqdn(name) {
			out = append(out, q)
		}
	}
	return out
}

func fqdn(name string) string { return dns.Fqdn(strings.ToLower(name)) }

func newDNSServer() *DNSServer {
	return &DNSServer{table: map[dnsKey]Behaviour{}, start: time.Now(), closed: make(chan struct{})}
}

// listen opens the sockets inside the server namespace and starts serving.
func (s *DNSServer) listen(server netns.NsHandle) error {
	var conns []net.PacketConn
	var lns []net.Listener
	err := inNamespace(server, func() error {
		for _, host := range []string{DNSServerV4.String(), DNSServerV6.String()} {
			addr := net.JoinHostPort(host, "53")
			pc, err := net.ListenPacket("udp", addr)
			if err != nil {
				return err
			}
			conns = append(conns, pc)
			ln, err := net.Listen("tcp", addr)
			if err != nil {
				return err
			}
			lns = append(lns, ln)
		}
		return nil
	})
	if err != nil {
		for _, c := range conns {
			c.Close()
		}
		for _, l := range lns {
			l.Close()
		}
		return fmt.Errorf("testbed: DNS server sockets: %w", err)
	}
	for _, pc := range conns {
		s.serve(&dns.Server{PacketConn: pc, Handler: s})
	}
	for _, ln := range lns {
		s.serve(&dns.Server{Listener: ln, Handler: s})
	}
	return nil
}

func (s *DNSServer) serve(srv *dns.Server) {
	started := make(chan struct{})
	srv.NotifyStartedFunc = func() { close(started) }
	s.servers = append(s.servers, srv)
	go srv.ActivateAndServe()
	<-started
}

func (s *DNSServer) close() {
	close(s.closed) // delayed answers give up
	for _, srv := range s.servers {
		srv.Shutdown()
	}
	s.pending.Wait()
}

// ServeDNS answers one query according to the table.
func (s *DNSServer) ServeDNS(w dns.ResponseWriter, r *dns.Msg) {
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
	if b.Delay > 0 {
		// Answer later from another goroutine: a TCP connection must stay
		// able to carry other queries meanwhile.
		s.pending.Add(1)
		go func() {
			defer s.pending.Done()
			select {
			case <-time.After(b.Delay):
				w.WriteMsg(answer(r, q, b, proto))
			case <-s.closed:
			}
		}()
		return
	}
	w.WriteMsg(answer(r, q, b, proto))
}

func (s *DNSServer) behaviourFor(q dns.Question, proto string) Behaviour {
	name := strings.ToLower(q.Name)
	s.mu.Lock()
	defer s.mu.Unlock()
	s.queries = append(s.queries, Query{At: time.Since(s.start), Name: name, Type: q.Qtype, Proto: proto})
	if b, ok := s.table[dnsKey{name, q.Qtype}]; ok {
		return b
	}
	for k := range s.table {
		if k.name == name {
			return NoData()
		}
	}
	return NXDomain()
}

func answer(r *dns.Msg, q dns.Question, b Behaviour, proto string) *dns.Msg {
	m := new(dns.Msg)
	m.SetReply(r)
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
