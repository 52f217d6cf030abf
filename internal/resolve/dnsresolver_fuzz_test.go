package resolve

import (
	"net/netip"
	"slices"
	"testing"

	"github.com/miekg/dns"
	"golang.org/x/net/dns/dnsmessage"
)

// Fuzz targets of what turns a server's reply into addresses: parseReply
// (wire bytes: is this an answer to our query, is it well formed) and
// answerAddrs (which records of an answer are addresses of the name asked).

// fuzzNames are the owner names and targets a scripted answer draws from:
// the asked name (0), names of its possible chains, and names never asked.
var fuzzNames = []string{"ask.test.", "c1.test.", "c2.test.", "C3.Test.", "ask.test.evil.", "evil.", "c1.test"}

// scriptedAnswer makes an answer section from script, 3 bytes a record:
// kind (A, AAAA, CNAME, a record of another class, an IPv4-mapped AAAA),
// owner and target or address.
func scriptedAnswer(script []byte) []dns.RR {
	var rrs []dns.RR
	for ; len(script) >= 3; script = script[3:] {
		owner := dns.Fqdn(fuzzNames[int(script[1])%len(fuzzNames)]) // a wire name always is
		hdr := dns.RR_Header{Name: owner, Class: dns.ClassINET, Ttl: 1}
		switch script[0] % 5 {
		case 0:
			hdr.Rrtype = dns.TypeA
			rrs = append(rrs, &dns.A{Hdr: hdr, A: []byte{198, 18, script[1], script[2]}})
		case 1:
			hdr.Rrtype = dns.TypeAAAA
			rrs = append(rrs, &dns.AAAA{Hdr: hdr, AAAA: netip.AddrFrom16([16]byte{0x20, 1, 0xd, 0xb8, 15: script[2]}).AsSlice()})
		case 2:
			hdr.Rrtype = dns.TypeCNAME
			rrs = append(rrs, &dns.CNAME{Hdr: hdr, Target: dns.Fqdn(fuzzNames[int(script[2])%len(fuzzNames)])})
		case 3:
			hdr.Rrtype, hdr.Class = dns.TypeA, dns.ClassCHAOS
			rrs = append(rrs, &dns.A{Hdr: hdr, A: []byte{192, 0, 2, script[2]}})
		case 4:
			hdr.Rrtype = dns.TypeAAAA
			mapped := netip.AddrFrom4([4]byte{192, 0, 2, script[2]}).As16() // ::ffff:192.0.2.x
			rrs = append(rrs, &dns.AAAA{Hdr: hdr, AAAA: mapped[:]})
		}
	}
	return rrs
}

// wireAnswers is resp's answer section as the resolver reads it: packed by
// miekg/dns, parsed by dnsmessage (two codecs, each checking the other).
func wireAnswers(t *testing.T, resp *dns.Msg) []dnsmessage.Resource {
	t.Helper()
	wire, err := resp.Pack()
	if err != nil {
		t.Fatalf("miekg/dns does not pack the answer: %v", err)
	}
	var p dnsmessage.Parser
	if _, err := p.Start(wire); err != nil {
		t.Fatal(err)
	}
	if err := p.SkipAllQuestions(); err != nil {
		t.Fatal(err)
	}
	answers, err := p.AllAnswers()
	if err != nil {
		t.Fatalf("dnsmessage does not read what miekg/dns packed: %v", err)
	}
	return answers
}

// recordAddr is the address an A or AAAA record holds (invalid for any
// other record).
func recordAddr(rr dnsmessage.Resource) netip.Addr {
	switch body := rr.Body.(type) {
	case *dnsmessage.AResource:
		return netip.AddrFrom4(body.A)
	case *dnsmessage.AAAAResource:
		return netip.AddrFrom16(body.AAAA)
	}
	return netip.Addr{}
}

// checkAnswerAddrs checks what answerAddrs made of answers against
// properties that hold whatever the answer held.
func checkAnswerAddrs(t *testing.T, answers []dnsmessage.Resource, qname string, qtype dnsmessage.Type) []netip.Addr {
	t.Helper()
	addrs, err := answerAddrs(answers, qname, qtype)
	// The names qname leads to through CNAMEs (any of them, any order).
	reach := map[string]bool{canonicalName(qname): true}
	ownsCNAME := false
	for changed := true; changed; {
		changed = false
		for _, rr := range answers {
			c, ok := rr.Body.(*dnsmessage.CNAMEResource)
			if ok && rr.Header.Class == dnsmessage.ClassINET && reach[canonicalName(rr.Header.Name.String())] {
				ownsCNAME = ownsCNAME || canonicalName(rr.Header.Name.String()) == canonicalName(qname)
				if t := canonicalName(c.CNAME.String()); !reach[t] {
					reach[t], changed = true, true
				}
			}
		}
	}
	if err != nil {
		if addrs != nil || !ownsCNAME {
			t.Fatalf("%v with %v, and %s owns no CNAME", err, addrs, qname)
		}
		return nil
	}
	if len(addrs) > maxAnswerAddrs {
		t.Fatalf("%d addresses", len(addrs))
	}
	for i, a := range addrs {
		if slices.Contains(addrs[:i], a) {
			t.Fatalf("%v twice in %v", a, addrs)
		}
		if qtype == dnsmessage.TypeA && !a.Is4() || qtype == dnsmessage.TypeAAAA && (!a.Is6() || a.Is4In6()) {
			t.Fatalf("%v for a %v query", a, qtype)
		}
		// Every address is a class IN record of the type asked, owned by
		// the name asked or a name it leads to.
		found := false
		for _, rr := range answers {
			h := rr.Header
			if h.Type == qtype && h.Class == dnsmessage.ClassINET && reach[canonicalName(h.Name.String())] {
				found = found || a == recordAddr(rr)
			}
		}
		if !found {
			t.Fatalf("%v is no %v record of %s or its CNAME targets in %v", a, qtype, qname, answers)
		}
	}
	// Without CNAMEs, the addresses are exactly the asked name's records.
	if !ownsCNAME {
		var want []netip.Addr
		for _, rr := range answers {
			h := rr.Header
			if h.Type != qtype || h.Class != dnsmessage.ClassINET || canonicalName(h.Name.String()) != canonicalName(qname) {
				continue
			}
			b := recordAddr(rr)
			if b.Is4In6() {
				continue
			}
			if b.IsValid() && !slices.Contains(want, b) && len(want) < maxAnswerAddrs {
				want = append(want, b)
			}
		}
		if !slices.Equal(addrs, want) {
			t.Fatalf("%s: %v, its records say %v", qname, addrs, want)
		}
	}
	return addrs
}

func FuzzAnswerAddrs(f *testing.F) {
	f.Add([]byte{0, 0, 1, 0, 0, 2}, false)                           // two A of the name
	f.Add([]byte{2, 0, 1, 2, 1, 2, 0, 2, 9, 1, 2, 3}, true)          // chain, then AAAA
	f.Add([]byte{2, 0, 1, 2, 1, 0, 0, 1, 5}, false)                  // loop
	f.Add([]byte{2, 0, 0, 0, 0, 7}, false)                           // self loop
	f.Add([]byte{0, 5, 1, 0, 4, 2, 3, 0, 3, 4, 0, 4, 0, 0, 9}, true) // other names, class, mapped
	f.Add([]byte{2, 0, 6, 0, 6, 1, 0, 1, 1}, false)                  // target without final dot
	f.Fuzz(func(t *testing.T, script []byte, v6 bool) {
		qtype := dns.TypeA
		if v6 {
			qtype = dns.TypeAAAA
		}
		resp := new(dns.Msg)
		resp.SetQuestion("ASK.test.", qtype)
		resp.Response = true
		resp.Answer = scriptedAnswer(script)
		addrs := checkAnswerAddrs(t, wireAnswers(t, resp), "ASK.test.", dnsmessage.Type(qtype))
		// Records of names the asked one does not lead to change nothing.
		more := resp.Copy()
		more.Answer = append(more.Answer,
			&dns.A{Hdr: dns.RR_Header{Name: "unrelated.invalid.", Rrtype: dns.TypeA, Class: dns.ClassINET}, A: []byte{192, 0, 2, 1}},
			&dns.CNAME{Hdr: dns.RR_Header{Name: "unrelated.invalid.", Rrtype: dns.TypeCNAME, Class: dns.ClassINET}, Target: "ask.test."})
		if again := checkAnswerAddrs(t, wireAnswers(t, more), "ASK.test.", dnsmessage.Type(qtype)); !slices.Equal(again, addrs) {
			t.Fatalf("unrelated records: %v became %v", addrs, again)
		}
		// Compressed, and asked in lower case: the same addresses.
		resp.Compress = true
		if again := checkAnswerAddrs(t, wireAnswers(t, resp), "ask.test.", dnsmessage.Type(qtype)); !slices.Equal(again, addrs) {
			t.Fatalf("compressed: %v became %v", addrs, again)
		}
	})
}

func FuzzParseReply(f *testing.F) {
	q := new(dns.Msg)
	q.SetQuestion("www.example.test.", dns.TypeAAAA)
	q.Id = 0x4242
	q.SetEdns0(dnsUDPSize, false)
	ours := &dnsQuery{id: 0x4242, name: dnsmessage.MustNewName("www.example.test."), qtype: dnsmessage.TypeAAAA, edns: true}
	if wire, err := ours.pack(); err != nil || !bytesEqualQuery(f, wire, q) {
		f.Fatalf("the query packs as %x (%v), not as miekg/dns packs the same query", wire, err)
	}
	add := func(m *dns.Msg) {
		b, err := m.Pack()
		if err != nil {
			f.Fatal(err)
		}
		f.Add(b)
	}
	r := new(dns.Msg)
	r.SetReply(q)
	r.Compress = true
	r.Answer = []dns.RR{
		&dns.CNAME{Hdr: dns.RR_Header{Name: "www.example.test.", Rrtype: dns.TypeCNAME, Class: dns.ClassINET}, Target: "cdn.example.test."},
		&dns.AAAA{Hdr: dns.RR_Header{Name: "cdn.example.test.", Rrtype: dns.TypeAAAA, Class: dns.ClassINET}, AAAA: testV6.AsSlice()},
		&dns.AAAA{Hdr: dns.RR_Header{Name: "other.test.", Rrtype: dns.TypeAAAA, Class: dns.ClassINET}, AAAA: forgedV6.AsSlice()},
	}
	add(r)
	add(q) // a query, not a response
	r2 := r.Copy()
	r2.Id++
	add(r2)
	wire, _ := r.Pack()
	f.Add(wire[:len(wire)-5])
	f.Add(append(wire[:12:12], 0xc0, 12, 0, 28, 0, 1)) // the question points to itself
	f.Add([]byte{0x42, 0x42, 0x80})
	f.Fuzz(func(t *testing.T, msg []byte) {
		resp, isOurs, err := parseReply(msg, ours)
		switch {
		case !isOurs:
			if resp != nil || err != nil {
				t.Fatalf("not ours, yet %v %v", resp, err)
			}
			return
		case err != nil:
			if resp != nil {
				t.Fatalf("malformed, yet %v", resp)
			}
			return
		}
		if resp.header.ID != ours.id || !resp.header.Response {
			t.Fatalf("taken as ours: %+v", resp.header)
		}
		var p dnsmessage.Parser
		p.Start(msg)
		if qs, err := p.AllQuestions(); err != nil || len(qs) != 1 || !ours.asks(qs[0]) {
			t.Fatalf("taken as ours with the questions %v (%v)", qs, err)
		}
		if resp.header.Truncated {
			if resp.answers != nil {
				t.Fatalf("truncated, yet answers read: %v", resp.answers)
			}
			return
		}
		addrs := checkAnswerAddrs(t, resp.answers, "www.example.test.", dnsmessage.TypeAAAA)
		// What was taken reads the same once packed again.
		m := dnsmessage.Message{
			Header:    resp.header,
			Questions: []dnsmessage.Question{{Name: ours.name, Type: ours.qtype, Class: dnsmessage.ClassINET}},
			Answers:   resp.answers,
		}
		wire, err := m.Pack()
		if err != nil {
			return // read but does not pack (a record dnsmessage cannot write)
		}
		again, isOurs, err := parseReply(wire, ours)
		if !isOurs || err != nil {
			t.Fatalf("repacked: ours %v, %v", isOurs, err)
		}
		if got := checkAnswerAddrs(t, again.answers, "www.example.test.", dnsmessage.TypeAAAA); !slices.Equal(got, addrs) {
			t.Fatalf("repacked: %v became %v", addrs, got)
		}
	})
}

// bytesEqualQuery reports whether wire is q packed by miekg/dns, the ID
// aside: the query the resolver sends is the one a reference DNS library
// makes.
func bytesEqualQuery(t testing.TB, wire []byte, q *dns.Msg) bool {
	t.Helper()
	want, err := q.Pack()
	if err != nil {
		t.Fatal(err)
	}
	return string(wire) == string(want)
}
