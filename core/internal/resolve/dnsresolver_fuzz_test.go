package resolve

import (
	"net/netip"
	"slices"
	"testing"

	"github.com/miekg/dns"
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
		owner := fuzzNames[int(script[1])%len(fuzzNames)]
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
			rrs = append(rrs, &dns.AAAA{Hdr: hdr, AAAA: netip.AddrFrom4([4]byte{192, 0, 2, script[2]}).AsSlice()})
		}
	}
	return rrs
}

// checkAnswerAddrs checks what answerAddrs made of resp against properties
// that hold whatever the answer held.
func checkAnswerAddrs(t *testing.T, resp *dns.Msg, qname string, qtype uint16) []netip.Addr {
	t.Helper()
	addrs, err := answerAddrs(resp, qname, qtype)
	// The names qname leads to through CNAMEs (any of them, any order).
	reach := map[string]bool{dns.CanonicalName(qname): true}
	ownsCNAME := false
	for changed := true; changed; {
		changed = false
		for _, rr := range resp.Answer {
			if c, ok := rr.(*dns.CNAME); ok && c.Hdr.Class == dns.ClassINET && reach[dns.CanonicalName(c.Hdr.Name)] {
				ownsCNAME = ownsCNAME || dns.CanonicalName(c.Hdr.Name) == dns.CanonicalName(qname)
				if t := dns.CanonicalName(c.Target); !reach[t] {
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
		if qtype == dns.TypeA && !a.Is4() || qtype == dns.TypeAAAA && (!a.Is6() || a.Is4In6()) {
			t.Fatalf("%v for a %s query", a, dns.TypeToString[qtype])
		}
		// Every address is a class IN record of the type asked, owned by
		// the name asked or a name it leads to.
		found := false
		for _, rr := range resp.Answer {
			h := rr.Header()
			if h.Rrtype == qtype && h.Class == dns.ClassINET && reach[dns.CanonicalName(h.Name)] {
				var b netip.Addr
				switch rr := rr.(type) {
				case *dns.A:
					b, _ = netip.AddrFromSlice(rr.A.To4())
				case *dns.AAAA:
					b, _ = netip.AddrFromSlice(rr.AAAA.To16())
				}
				found = found || a == b
			}
		}
		if !found {
			t.Fatalf("%v is no %s record of %s or its CNAME targets in %v", a, dns.TypeToString[qtype], qname, resp.Answer)
		}
	}
	// Without CNAMEs, the addresses are exactly the asked name's records.
	if !ownsCNAME {
		var want []netip.Addr
		for _, rr := range resp.Answer {
			h := rr.Header()
			if h.Rrtype != qtype || h.Class != dns.ClassINET || dns.CanonicalName(h.Name) != dns.CanonicalName(qname) {
				continue
			}
			var b netip.Addr
			switch rr := rr.(type) {
			case *dns.A:
				b, _ = netip.AddrFromSlice(rr.A.To4())
			case *dns.AAAA:
				if b, _ = netip.AddrFromSlice(rr.AAAA.To16()); b.Is4In6() {
					continue
				}
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
		addrs := checkAnswerAddrs(t, resp, "ASK.test.", qtype)
		// Records of names the asked one does not lead to change nothing.
		more := resp.Copy()
		more.Answer = append(more.Answer,
			&dns.A{Hdr: dns.RR_Header{Name: "unrelated.invalid.", Rrtype: dns.TypeA, Class: dns.ClassINET}, A: []byte{192, 0, 2, 1}},
			&dns.CNAME{Hdr: dns.RR_Header{Name: "unrelated.invalid.", Rrtype: dns.TypeCNAME, Class: dns.ClassINET}, Target: "ask.test."})
		if again := checkAnswerAddrs(t, more, "ASK.test.", qtype); !slices.Equal(again, addrs) {
			t.Fatalf("unrelated records: %v became %v", addrs, again)
		}
		// Through the wire and back, the same addresses.
		wire, err := resp.Pack()
		if err != nil {
			return
		}
		var back dns.Msg
		if err := back.Unpack(wire); err != nil {
			t.Fatalf("own packing does not unpack: %v", err)
		}
		if again := checkAnswerAddrs(t, &back, "ask.test.", qtype); !slices.Equal(again, addrs) {
			t.Fatalf("through the wire: %v became %v", addrs, again)
		}
	})
}

func FuzzParseReply(f *testing.F) {
	q := new(dns.Msg)
	q.SetQuestion("www.example.test.", dns.TypeAAAA)
	q.Id = 0x4242
	q.SetEdns0(dnsUDPSize, false)
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
		resp, ours, err := parseReply(msg, q)
		switch {
		case !ours:
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
		if resp.Id != q.Id || !resp.Response || len(resp.Question) != 1 || !sameQuestion(resp.Question[0], q.Question[0]) {
			t.Fatalf("taken as ours: %v", resp)
		}
		addrs := checkAnswerAddrs(t, resp, q.Question[0].Name, dns.TypeAAAA)
		// What was taken reads the same once packed again.
		resp.Compress = true
		wire, err := resp.Pack()
		if err != nil {
			return // unpacked but does not pack (a record miekg cannot write)
		}
		again, ours, err := parseReply(wire, q)
		if !ours || err != nil {
			t.Fatalf("repacked: ours %v, %v", ours, err)
		}
		if got := checkAnswerAddrs(t, again, q.Question[0].Name, dns.TypeAAAA); !slices.Equal(got, addrs) {
			t.Fatalf("repacked: %v became %v", addrs, got)
		}
	})
}
