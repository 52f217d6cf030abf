package resolve

import (
	"bytes"
	"encoding/binary"
	"net/netip"
	"reflect"
	"testing"

	"github.com/miekg/dns"
	"golang.org/x/net/dns/dnsmessage"

	"github.com/hev2/hev2/internal/race"
	"github.com/hev2/hev2/tests/testdns"
)

// FuzzServiceAnswer feeds two HTTPS records of any RDATA, beside a good
// one, through the wire path an HTTPS answer takes (parseReply, then
// serviceAnswer) and checks the outcome against refRecord, a second
// decoder written from RFC 9460 alone: a record that does not decode is
// dropped and counted, and only it (the good record after it is read);
// one that does reads as the reference reads it; no RDATA fails the
// answer.
func FuzzServiceAnswer(f *testing.F) {
	good := httpsRData(f, goodHTTPS)
	f.Add(good, httpsRData(f, plainHTTPS), byte(0))
	f.Add(httpsRData(f, testdns.HTTPSRecord{Target: "alias.test."}), good, byte(1))
	for _, kind := range testdns.MalformedHTTPSKinds() {
		rec, _ := testdns.MalformedHTTPS(kind)
		f.Add(rec.RData, good, byte(len(kind)))
	}
	f.Add([]byte{}, []byte{0}, byte(2))
	f.Add([]byte{0, 1, 0xc0, 12}, []byte{0, 1, 0x40}, byte(4)) // a pointer, a reserved label type
	f.Add([]byte{0, 1, 1, '.', 0}, []byte{0, 1, 3, 'A', 'b', 'C', 0}, byte(8))
	f.Fuzz(func(t *testing.T, rdata1, rdata2 []byte, flags byte) {
		if len(rdata1)+len(rdata2) > 8000 {
			return
		}
		// flags: 1 the records sit behind a CNAME; 2 the second record
		// belongs to another name; 4 the good record comes first; 8 the
		// owner names are compressed.
		owner := "ask.test."
		var rrs []dns.RR
		if flags&1 != 0 {
			rrs = append(rrs, rrCNAME("ask.test.", "c1.test."))
			owner = "C1.test."
		}
		second := owner
		if flags&2 != 0 {
			second = "other.test."
		}
		goodRR := rrHTTPS(owner, goodHTTPS)
		if flags&4 != 0 {
			rrs = append(rrs, goodRR)
		}
		rrs = append(rrs, rrHTTPSRaw(owner, rdata1), rrHTTPSRaw(second, rdata2))
		if flags&4 == 0 {
			rrs = append(rrs, goodRR)
		}
		m := new(dns.Msg)
		m.SetQuestion("ask.test.", dns.TypeHTTPS)
		m.Id, m.Response, m.Compress, m.Answer = 0x4242, true, flags&8 != 0, rrs
		wire, err := m.Pack()
		if err != nil {
			t.Fatalf("packing the answer: %v", err)
		}
		q := &dnsQuery{id: 0x4242, name: dnsmessage.MustNewName("ask.test."), qtype: dnsmessage.TypeHTTPS}
		resp, ours, err := parseReply(wire, q)
		if !ours || err != nil {
			t.Fatalf("an HTTPS record's data failed the answer: ours %v, %v", ours, err)
		}
		ans, err := serviceAnswer(resp, "ask.test.")
		if err != nil {
			t.Fatal(err)
		}

		// What the reference makes of the RRset, in the answer's order.
		set := [][]byte{rdata1}
		if second == owner {
			set = append(set, rdata2)
		}
		if flags&4 != 0 {
			set = append([][]byte{good}, set...)
		} else {
			set = append(set, good)
		}
		var want race.ServiceAnswer
		var aliases []string
		unsure := false
		for _, rdata := range set {
			switch kind, rec := refRecord(rdata); kind {
			case refMalformed:
				want.Malformed++
			case refAlias:
				aliases = append(aliases, rec.Target)
			case refService:
				want.Records = append(want.Records, rec)
			case refUnsure:
				unsure = true
			}
		}
		if ans.Alias != "" && ans.Records != nil {
			t.Fatalf("an alias beside records: %+v", ans)
		}
		if unsure {
			// A compression pointer in a target reads a name elsewhere
			// in the message: the reference does not follow it, and
			// only the sum is sure.
			if n := len(ans.Records) + ans.Malformed; ans.Alias == "" && n != len(set) {
				t.Fatalf("%d records read and dropped of %d: %+v", n, len(set), ans)
			}
			return
		}
		if len(aliases) > 0 {
			found := false
			for _, a := range aliases {
				found = found || a == ans.Alias
			}
			if !found || ans.Malformed != want.Malformed {
				t.Fatalf("alias %q (malformed %d), want one of %q (malformed %d)", ans.Alias, ans.Malformed, aliases, want.Malformed)
			}
			return
		}
		if !reflect.DeepEqual(*ans, want) {
			t.Fatalf("read as\n %+v\nwant\n %+v", *ans, want)
		}
	})
}

// httpsRData is rec's RDATA as miekg/dns writes it.
func httpsRData(t testing.TB, rec testdns.HTTPSRecord) []byte {
	m := new(dns.Msg)
	m.SetQuestion("x.", dns.TypeHTTPS)
	m.Answer = []dns.RR{rrHTTPS("x.", rec)}
	wire, err := m.Pack()
	if err != nil {
		t.Fatal(err)
	}
	var p dnsmessage.Parser
	p.Start(wire)
	p.SkipAllQuestions()
	p.AnswerHeader()
	body, err := p.UnknownResource()
	if err != nil {
		t.Fatal(err)
	}
	return body.Data
}

// The reference's reading of one record.
const (
	refMalformed = iota
	refAlias
	refService
	refUnsure // a compression pointer in the target
)

// refRecord reads an HTTPS RDATA as RFC 9460 describes it (§2.2: the
// record, §7 and §8: the values of the keys the race knows), with the
// resolver's own rules for what it keeps (lower-case names, hints without
// IPv4-mapped or repeated addresses, at most maxAnswerAddrs), and
// dnsmessage's for names (no dot inside a label, 254 bytes at most).
func refRecord(rdata []byte) (int, race.ServiceRecord) {
	if len(rdata) < 3 {
		return refMalformed, race.ServiceRecord{}
	}
	rec := race.ServiceRecord{Priority: binary.BigEndian.Uint16(rdata)}
	var name []byte
	off := 2
	for {
		if off >= len(rdata) {
			return refMalformed, rec
		}
		c := int(rdata[off])
		off++
		if c == 0 {
			break
		}
		switch c & 0xC0 {
		case 0xC0:
			return refUnsure, rec
		case 0x40, 0x80:
			return refMalformed, rec
		}
		if off+c > len(rdata) || bytes.IndexByte(rdata[off:off+c], '.') >= 0 || len(name)+c >= 254 {
			return refMalformed, rec
		}
		for _, b := range rdata[off : off+c] {
			if 'A' <= b && b <= 'Z' { // ASCII only (RFC 4343)
				b += 'a' - 'A'
			}
			name = append(name, b)
		}
		name = append(name, '.')
		off += c
	}
	rec.Target = "."
	if len(name) > 0 {
		rec.Target = string(name)
	}
	last := -1
	var values [][]byte
	for off < len(rdata) {
		if off+4 > len(rdata) {
			return refMalformed, rec
		}
		key, size := int(binary.BigEndian.Uint16(rdata[off:])), int(binary.BigEndian.Uint16(rdata[off+2:]))
		off += 4
		if key <= last || off+size > len(rdata) {
			return refMalformed, rec
		}
		last = key
		rec.Keys = append(rec.Keys, race.SvcParamKey(key))
		values = append(values, rdata[off:off+size])
		off += size
	}
	if rec.Priority == 0 {
		return refAlias, race.ServiceRecord{Target: rec.Target}
	}
	for i, key := range rec.Keys {
		v := values[i]
		switch key {
		case race.KeyMandatory:
			if len(v) == 0 || len(v)%2 != 0 {
				return refMalformed, rec
			}
			seen := map[race.SvcParamKey]bool{0: true}
			for j := 0; j < len(v); j += 2 {
				k := race.SvcParamKey(binary.BigEndian.Uint16(v[j:]))
				if seen[k] {
					return refMalformed, rec
				}
				seen[k] = true
				rec.Mandatory = append(rec.Mandatory, k)
			}
		case race.KeyALPN:
			if len(v) == 0 {
				return refMalformed, rec
			}
			for j := 0; j < len(v); {
				n := int(v[j])
				if n == 0 || j+1+n > len(v) {
					return refMalformed, rec
				}
				rec.ALPN = append(rec.ALPN, string(v[j+1:j+1+n]))
				j += 1 + n
			}
		case race.KeyNoDefaultALPN:
			if len(v) != 0 {
				return refMalformed, rec
			}
			rec.NoDefaultALPN = true
		case race.KeyPort:
			if len(v) != 2 {
				return refMalformed, rec
			}
			rec.Port = binary.BigEndian.Uint16(v)
		case race.KeyIPv4Hint, race.KeyIPv6Hint:
			size := 4
			if key == race.KeyIPv6Hint {
				size = 16
			}
			if len(v) == 0 || len(v)%size != 0 {
				return refMalformed, rec
			}
			var hints []netip.Addr
			for j := 0; j < len(v); j += size {
				a, _ := netip.AddrFromSlice(v[j : j+size])
				if !a.Is4In6() && !containsAddr(hints, a) && len(hints) < maxAnswerAddrs {
					hints = append(hints, a)
				}
			}
			if key == race.KeyIPv4Hint {
				rec.IPv4Hint = hints
			} else {
				rec.IPv6Hint = hints
			}
		case race.KeyECH:
			rec.ECH = append([]byte{}, v...)
		}
	}
	return refService, rec
}

func containsAddr(addrs []netip.Addr, a netip.Addr) bool {
	for _, b := range addrs {
		if a == b {
			return true
		}
	}
	return false
}
