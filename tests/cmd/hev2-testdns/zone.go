package main

import (
	"bytes"
	"encoding/json"
	"fmt"
	"net/netip"
	"sort"
	"strings"
	"sync"
	"time"

	"github.com/miekg/dns"

	"github.com/hev2/hev2/tests/testdns"
)

// zone is a ZONE of the command's doc: name → query type → entry.
type zone map[string]map[string]entry

// entry is how one (name, type) is answered: a list of addresses or of
// HTTPS records, or an object (see the command's doc).
type entry struct {
	Addrs      []string      `json:"addrs"`
	Records    []httpsRecord `json:"records"`
	Rcode      string        `json:"rcode"`
	Never      bool          `json:"never"`
	Delay      float64       `json:"delay"`
	HoldUntil  *trigger      `json:"hold_until"`
	AfterAAAA  bool          `json:"after_aaaa"`
	Truncate   bool          `json:"truncate"`
	RejectEDNS bool          `json:"reject_edns"`
}

// trigger is the query a held answer waits for.
type trigger struct {
	Name string `json:"name"`
	Type string `json:"type"`
}

func (e *entry) UnmarshalJSON(text []byte) error {
	if t := bytes.TrimSpace(text); len(t) > 0 && t[0] == '[' {
		*e = entry{}
		// A list of objects is one of HTTPS records, else of addresses.
		if inner := bytes.TrimSpace(t[1:]); len(inner) > 0 && inner[0] == '{' {
			return json.Unmarshal(t, &e.Records)
		}
		return json.Unmarshal(t, &e.Addrs)
	}
	type plain entry // without this method
	d := json.NewDecoder(bytes.NewReader(text))
	d.DisallowUnknownFields()
	return d.Decode((*plain)(e))
}

type key struct {
	name  string
	qtype uint16
}

func canonical(name string) string {
	return strings.TrimSuffix(strings.ToLower(name), ".")
}

func parseType(t string) (uint16, error) {
	if q, ok := dns.StringToType[strings.ToUpper(t)]; ok && q != dns.TypeNone {
		return q, nil
	}
	return 0, fmt.Errorf("unknown query type %q", t)
}

// behaviour turns the entry of (name, type) into the test server's terms,
// and the key of the query a held answer waits for (hold false if none).
func (e entry) behaviour(name string, qtype uint16) (b testdns.Behaviour, until key, hold bool, err error) {
	for _, s := range e.Addrs {
		a, err := netip.ParseAddr(s)
		if err != nil {
			return b, until, false, err
		}
		switch {
		case qtype == dns.TypeA && a.Is4(), qtype == dns.TypeAAAA && a.Is6() && !a.Is4In6():
		default:
			return b, until, false, fmt.Errorf("%s is no address of a %s record", a, dns.Type(qtype))
		}
		b.Addrs = append(b.Addrs, a)
	}
	switch {
	case len(e.Records) > 0 && qtype != dns.TypeHTTPS:
		return b, until, false, fmt.Errorf("records are for HTTPS entries")
	case qtype == dns.TypeHTTPS:
		for _, r := range e.Records {
			b.HTTPS = append(b.HTTPS, r.HTTPSRecord)
		}
	}
	if e.Rcode != "" {
		rcode, ok := dns.StringToRcode[strings.ToUpper(e.Rcode)]
		if !ok {
			return b, until, false, fmt.Errorf("unknown rcode %q", e.Rcode)
		}
		b.Rcode = rcode
	}
	if e.Delay < 0 {
		return b, until, false, fmt.Errorf("negative delay %v", e.Delay)
	}
	if e.AfterAAAA && qtype != dns.TypeA {
		return b, until, false, fmt.Errorf("after_aaaa is for A entries")
	}
	b.Delay = time.Duration(e.Delay * float64(time.Second))
	b.Never, b.AfterAAAA, b.Truncate, b.RejectEDNS = e.Never, e.AfterAAAA, e.Truncate, e.RejectEDNS
	if t := e.HoldUntil; t != nil {
		until = key{canonical(t.Name), 0}
		if t.Name == "" {
			until.name = name
		}
		if until.qtype, err = parseType(t.Type); err != nil {
			return b, until, false, fmt.Errorf("hold_until: %w", err)
		}
		hold = true
	}
	return b, until, hold, nil
}

// server is the test DNS server with the answers held until a query
// arrived (hold_until), which package testdns does not know: it sees each
// query before the test server does, and holds back the answer the test
// server writes.
type server struct {
	dns     *testdns.Server
	servers []*dns.Server

	mu      sync.Mutex
	holds   map[key]key   // (name, type) → the query its answer waits for
	seen    map[key]bool  // the queries that arrived
	arrived chan struct{} // closed (and replaced) at each query
	closed  chan struct{} // closed when the server stops (under mu)
	pending sync.WaitGroup
}

func newServer() *server {
	return &server{dns: testdns.New(), holds: map[key]key{}, seen: map[key]bool{},
		arrived: make(chan struct{}), closed: make(chan struct{})}
}

// setZone sets every entry of z, or none if one is wrong.
func (s *server) setZone(z zone) error {
	type set struct {
		k     key
		b     testdns.Behaviour
		until key
		hold  bool
	}
	var sets []set
	for name, types := range z {
		for t, e := range types {
			qtype, err := parseType(t)
			if err != nil {
				return fmt.Errorf("%s: %w", name, err)
			}
			k := key{canonical(name), qtype}
			b, until, hold, err := e.behaviour(k.name, qtype)
			if err != nil {
				return fmt.Errorf("%s %s: %w", name, t, err)
			}
			sets = append(sets, set{k, b, until, hold})
		}
	}
	sort.Slice(sets, func(i, j int) bool { // the same order on every run
		return sets[i].k.name < sets[j].k.name || sets[i].k.name == sets[j].k.name && sets[i].k.qtype < sets[j].k.qtype
	})
	s.mu.Lock()
	defer s.mu.Unlock()
	for _, x := range sets {
		// The hold first: a query arriving in between is never answered
		// without the hold its entry asks for.
		if x.hold {
			s.holds[x.k] = x.until
		} else {
			delete(s.holds, x.k)
		}
		s.dns.Set(x.k.name, x.k.qtype, x.b)
	}
	return nil
}

// ServeDNS notes the query's arrival and lets the test server answer it,
// through a writer that holds the answer back if the entry says so.
func (s *server) ServeDNS(w dns.ResponseWriter, r *dns.Msg) {
	if len(r.Question) == 1 {
		q := r.Question[0]
		k := key{canonical(q.Name), q.Qtype}
		s.mu.Lock()
		s.seen[k] = true
		close(s.arrived)
		s.arrived = make(chan struct{})
		until, held := s.holds[k]
		s.mu.Unlock()
		if held {
			w = &heldWriter{ResponseWriter: w, s: s, until: until}
		}
	}
	s.dns.ServeDNS(w, r)
}

// heldWriter writes its answer once the query until has arrived.
type heldWriter struct {
	dns.ResponseWriter
	s     *server
	until key
}

func (w *heldWriter) WriteMsg(m *dns.Msg) error {
	s := w.s
	s.mu.Lock()
	if s.seen[w.until] {
		s.mu.Unlock()
		return w.ResponseWriter.WriteMsg(m)
	}
	select {
	case <-s.closed:
		s.mu.Unlock()
		return nil
	default:
	}
	s.pending.Add(1)
	s.mu.Unlock()
	// From another goroutine: a TCP connection goes on carrying queries,
	// the trigger among them perhaps.
	go func() {
		defer s.pending.Done()
		if s.await(w.until) {
			w.ResponseWriter.WriteMsg(m)
		}
	}()
	return nil
}

// await waits until the query k has arrived; false if the server stopped
// first.
func (s *server) await(k key) bool {
	for {
		s.mu.Lock()
		seen, arrived := s.seen[k], s.arrived
		s.mu.Unlock()
		if seen {
			return true
		}
		select {
		case <-arrived:
		case <-s.closed:
			return false
		}
	}
}
