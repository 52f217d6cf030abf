package resolve

import (
	"context"
	"encoding/binary"
	"errors"
	"fmt"
	"net/netip"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/hev2/hev2/internal/race"
	"github.com/hev2/hev2/tests/testdns"
	"github.com/miekg/dns"
)

// The built-in resolver against a hostile or broken server (testdns's Raw
// and Forge behaviours write whatever bytes a test wants): it ignores what
// is not an answer to its query, refuses a malformed answer, follows a
// bounded CNAME chain, takes no record for a name it did not ask about, and
// gives up at its own timeout. The per-query timeout is short (yet long
// enough for a loaded machine to answer a good query in time); every
// lookup also runs under an outer deadline 20 times longer, so a resolver
// that hangs fails the test with that deadline's error.

const hostileTimeout = 500 * time.Millisecond

var (
	forgedV4 = netip.MustParseAddr("198.18.6.66")
	forgedV6 = netip.MustParseAddr("2001:db8::666")
)

func newHostileDNS(t *testing.T, cfg DNSConfig) (*DNSResolver, *testdns.Server) {
	t.Helper()
	cfg.Timeout, cfg.Attempts = hostileTimeout, 1
	return newTestDNS(t, "", cfg)
}

// lookupBounded runs one lookup under the outer deadline and fails the
// test if the resolver was still busy when it passed.
func lookupBounded(t *testing.T, r *DNSResolver, host string, family race.Family) ([]netip.Addr, error) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 20*hostileTimeout)
	defer cancel()
	addrs, err := r.LookupFamily(ctx, host, family)
	if errors.Is(err, context.DeadlineExceeded) {
		t.Fatalf("%s %v: still busy when the outer deadline passed (a hang)", host, family)
	}
	if n := r.Stats().OpenSockets; n != 0 {
		t.Errorf("%s %v: %d sockets open after the lookup", host, family, n)
	}
	return addrs, err
}

// reply is the answer to q carrying rrs (NOERROR, authoritative).
func reply(q *dns.Msg, rrs ...dns.RR) *dns.Msg {
	m := new(dns.Msg)
	m.SetReply(q)
	m.Authoritative = true
	m.Compress = true
	m.Answer = rrs
	return m
}

// pack runs on the server's goroutines too: it reports, never stops.
func pack(t testing.TB, m *dns.Msg) []byte {
	b, err := m.Pack()
	if err != nil || len(b) > maxDNSMessage {
		t.Errorf("packing a test answer: %d bytes, %v", len(b), err)
	}
	return b
}

func rrA(name string, a netip.Addr) dns.RR {
	return &dns.A{Hdr: dns.RR_Header{Name: dns.Fqdn(name), Rrtype: dns.TypeA, Class: dns.ClassINET, Ttl: 1}, A: a.AsSlice()}
}

func rrAAAA(name string, a netip.Addr) dns.RR {
	return &dns.AAAA{Hdr: dns.RR_Header{Name: dns.Fqdn(name), Rrtype: dns.TypeAAAA, Class: dns.ClassINET, Ttl: 1}, AAAA: a.AsSlice()}
}

func rrCNAME(name, target string) dns.RR {
	return &dns.CNAME{Hdr: dns.RR_Header{Name: dns.Fqdn(name), Rrtype: dns.TypeCNAME, Class: dns.ClassINET, Ttl: 1}, Target: dns.Fqdn(target)}
}

// raw answers every query with the messages msgs makes of it.
func raw(msgs func(q *dns.Msg, proto string) [][]byte) testdns.Behaviour {
	return testdns.Behaviour{Raw: msgs}
}

func wantAddrs(t *testing.T, what string, addrs []netip.Addr, err error, want ...netip.Addr) {
	t.Helper()
	if err != nil || !slices.Equal(addrs, want) {
		t.Errorf("%s: %v %v, want %v", what, addrs, err, want)
	}
}

func wantFail(t *testing.T, what string, addrs []netip.Addr, err error, code int, text string) {
	t.Helper()
	var re *race.ResolveError
	if len(addrs) != 0 || !errors.As(err, &re) || re.Code != code || !strings.Contains(err.Error(), text) {
		t.Errorf("%s: %v %v, want code %d and %q", what, addrs, err, code, text)
	}
}

// Messages that are not an answer to the query (another ID, another
// question, a query instead of a response, noise too short or too mangled
// to read) are ignored, and the real answer after them is taken; when no
// real answer follows, the lookup gives up at its timeout.
func TestDNSHostileNotOurs(t *testing.T) {
	r, srv := newHostileDNS(t, DNSConfig{})
	decoys := func(q *dns.Msg) [][]byte {
		wrongID := reply(q, rrA(q.Question[0].Name, forgedV4))
		wrongID.Id = q.Id + 1
		wrongName := reply(q, rrA("other.test", forgedV4))
		wrongName.Question[0].Name = "other.test."
		wrongType := reply(q, rrA(q.Question[0].Name, forgedV4))
		wrongType.Question[0].Qtype = dns.TypeMX
		notResponse := reply(q, rrA(q.Question[0].Name, forgedV4))
		notResponse.Response = false
		// A question whose name is a compression pointer to itself.
		loop := binary.BigEndian.AppendUint16(nil, q.Id)
		loop = append(loop, 0x84, 0, 0, 1, 0, 0, 0, 0, 0, 0, 0xc0, 12, 0, 1, 0, 1)
		return [][]byte{
			pack(t, wrongID), pack(t, wrongName), pack(t, wrongType), pack(t, notResponse),
			{0xde, 0xad}, binary.BigEndian.AppendUint16(nil, q.Id), loop,
		}
	}
	srv.Set("decoys.test", dns.TypeA, raw(func(q *dns.Msg, _ string) [][]byte {
		return append(decoys(q), pack(t, reply(q, rrA("decoys.test", testV4))))
	}))
	srv.Set("onlydecoys.test", dns.TypeA, raw(func(q *dns.Msg, _ string) [][]byte { return decoys(q) }))

	addrs, err := lookupBounded(t, r, "decoys.test", race.IPv4)
	wantAddrs(t, "decoys, then the answer", addrs, err, testV4)
	timeouts := r.Stats().Timeouts
	addrs, err = lookupBounded(t, r, "onlydecoys.test", race.IPv4)
	wantFail(t, "decoys only", addrs, err, race.EAI_AGAIN, "timed out")
	if n := r.Stats().Timeouts - timeouts; n != 1 {
		t.Errorf("decoys only: %d timeouts counted, want 1", n)
	}
}

// An answer from another source port is never taken (the UDP socket is
// connected to the server), even when it comes first.
func TestDNSHostileWrongSource(t *testing.T) {
	r, srv := newHostileDNS(t, DNSConfig{})
	forge := func(q *dns.Msg) []byte {
		return pack(t, reply(q, rrAAAA(q.Question[0].Name, forgedV6)))
	}
	srv.Set("forged.test", dns.TypeAAAA, testdns.Behaviour{Addrs: []netip.Addr{testV6}, Forge: forge})
	srv.Set("forgedonly.test", dns.TypeAAAA, testdns.Behaviour{Never: true, Forge: forge})
	addrs, err := lookupBounded(t, r, "forged.test", race.IPv6)
	wantAddrs(t, "forged then real", addrs, err, testV6)
	addrs, err = lookupBounded(t, r, "forgedonly.test", race.IPv6)
	wantFail(t, "forged only", addrs, err, race.EAI_AGAIN, "timed out")
}

// An answer to the query that does not parse (cut short, a compression
// loop in a record, a record running past the end) fails that server at
// once, as a temporary failure, without waiting for the timeout.
func TestDNSHostileMalformed(t *testing.T) {
	r, srv := newHostileDNS(t, DNSConfig{})
	good := func(q *dns.Msg) []byte {
		return pack(t, reply(q, rrA(q.Question[0].Name, testV4), rrA(q.Question[0].Name, forgedV4)))
	}
	cases := map[string]func(q *dns.Msg) []byte{
		"cut.test": func(q *dns.Msg) []byte { b := good(q); return b[:len(b)-3] },
		"ptrloop.test": func(q *dns.Msg) []byte {
			b := pack(t, reply(q))
			b[7] = 1 // ANCOUNT 1: a record whose owner points to itself
			self := len(b)
			return append(b, 0xc0|byte(self>>8), byte(self), 0, 1, 0, 1, 0, 0, 0, 1, 0, 4, 198, 18, 6, 66)
		},
		"rdlen.test": func(q *dns.Msg) []byte {
			b := good(q)
			b[len(b)-6] = 0xff // the last A's RDLENGTH points past the end
			return b
		},
	}
	for name, msg := range cases {
		srv.Set(name, dns.TypeA, raw(func(q *dns.Msg, _ string) [][]byte { return [][]byte{msg(q)} }))
		timeouts := r.Stats().Timeouts
		addrs, err := lookupBounded(t, r, name, race.IPv4)
		wantFail(t, name, addrs, err, race.EAI_AGAIN, "malformed answer")
		if r.Stats().Timeouts != timeouts {
			t.Errorf("%s: waited for the timeout after a malformed answer", name)
		}
	}
}

// CNAME chains are followed through the answer, in any record order, up to
// maxCNAMEs; a longer chain or a loop fails the lookup (EAI_FAIL) and no
// address of it is returned.
func TestDNSHostileCNAMEs(t *testing.T) {
	r, srv := newHostileDNS(t, DNSConfig{})
	chain := func(name string, n int, last dns.RR) []dns.RR {
		var rrs []dns.RR
		for i := 0; i < n; i++ {
			target := fmt.Sprintf("c%d.%s", i, name)
			rrs = append(rrs, rrCNAME(name, target))
			name = target
		}
		if last != nil {
			rrs = append(rrs, last)
		}
		slices.Reverse(rrs) // the records in the worst order
		return rrs
	}
	answer := func(rrs []dns.RR) testdns.Behaviour {
		return raw(func(q *dns.Msg, _ string) [][]byte { return [][]byte{pack(t, reply(q, rrs...))} })
	}
	endOf := func(name string, n int) string {
		for i := 0; i < n; i++ {
			name = fmt.Sprintf("c%d.%s", i, name)
		}
		return name
	}
	srv.Set("longest.test", dns.TypeA, answer(chain("longest.test", maxCNAMEs, rrA(endOf("longest.test", maxCNAMEs), testV4))))
	srv.Set("toolong.test", dns.TypeA, answer(chain("toolong.test", maxCNAMEs+1, rrA(endOf("toolong.test", maxCNAMEs+1), testV4))))
	srv.Set("loop.test", dns.TypeA, answer([]dns.RR{
		rrCNAME("loop.test", "a.loop.test"), rrCNAME("a.loop.test", "b.loop.test"),
		rrCNAME("b.loop.test", "LOOP.test"), rrA("loop.test", testV4), rrA("a.loop.test", testV4),
	}))
	srv.Set("self.test", dns.TypeA, answer([]dns.RR{rrCNAME("self.test", "self.test"), rrA("self.test", testV4)}))
	// The chain's end has no address in the answer: NODATA, and the
	// intermediate names' addresses (not allowed beside a CNAME) are not
	// taken.
	srv.Set("dangling.test", dns.TypeA, answer([]dns.RR{
		rrCNAME("dangling.test", "end.test"), rrA("dangling.test", forgedV4),
	}))

	addrs, err := lookupBounded(t, r, "longest.test", race.IPv4)
	wantAddrs(t, "chain of maxCNAMEs", addrs, err, testV4)
	addrs, err = lookupBounded(t, r, "toolong.test", race.IPv4)
	wantFail(t, "chain of maxCNAMEs+1", addrs, err, race.EAI_FAIL, "CNAME chain longer")
	addrs, err = lookupBounded(t, r, "loop.test", race.IPv4)
	wantFail(t, "loop", addrs, err, race.EAI_FAIL, "CNAME loop")
	addrs, err = lookupBounded(t, r, "self.test", race.IPv4)
	wantFail(t, "self loop", addrs, err, race.EAI_FAIL, "CNAME loop")
	addrs, err = lookupBounded(t, r, "dangling.test", race.IPv4)
	wantFail(t, "dangling", addrs, err, race.EAI_NODATA, "")
}

// Records for names that were not asked about are never taken, whether
// they come alone, beside the asked name's or beside a CNAME chain's.
func TestDNSHostileOtherNames(t *testing.T) {
	r, srv := newHostileDNS(t, DNSConfig{})
	answer := func(rrs ...dns.RR) testdns.Behaviour {
		return raw(func(q *dns.Msg, _ string) [][]byte { return [][]byte{pack(t, reply(q, rrs...))} })
	}
	srv.Set("alone.test", dns.TypeAAAA, answer(rrAAAA("victim.test", forgedV6)))
	srv.Set("beside.test", dns.TypeAAAA, answer(rrAAAA("victim.test", forgedV6), rrAAAA("beside.test", testV6), rrAAAA("beside.test.victim.test", forgedV6)))
	srv.Set("chained.test", dns.TypeAAAA, answer(
		rrCNAME("chained.test", "target.test"), rrCNAME("victim.test", "target.test"),
		rrAAAA("victim.test", forgedV6), rrAAAA("TARGET.test", testV6), rrAAAA("chained.test", forgedV6)))
	// Records of the other family, another class, and an AAAA holding an
	// IPv4-mapped address are no IPv6 destination of the asked name.
	srv.Set("mixed.test", dns.TypeAAAA, answer(
		rrA("mixed.test", forgedV4), rrAAAA("mixed.test", netip.MustParseAddr("::ffff:198.18.6.66")),
		&dns.AAAA{Hdr: dns.RR_Header{Name: "mixed.test.", Rrtype: dns.TypeAAAA, Class: dns.ClassCHAOS, Ttl: 1}, AAAA: forgedV6.AsSlice()},
		rrAAAA("mixed.test", testV6)))

	addrs, err := lookupBounded(t, r, "alone.test", race.IPv6)
	wantFail(t, "alone", addrs, err, race.EAI_NODATA, "")
	addrs, err = lookupBounded(t, r, "beside.test", race.IPv6)
	wantAddrs(t, "beside", addrs, err, testV6)
	addrs, err = lookupBounded(t, r, "chained.test", race.IPv6)
	wantAddrs(t, "chained", addrs, err, testV6)
	addrs, err = lookupBounded(t, r, "mixed.test", race.IPv6)
	wantAddrs(t, "mixed", addrs, err, testV6)
}

// An answer larger than the EDNS0 size offered is read whole over UDP; a
// huge one over TCP too; at most maxAnswerAddrs addresses are taken.
func TestDNSHostileOversized(t *testing.T) {
	r, srv := newHostileDNS(t, DNSConfig{})
	many := func(name string, n int) []dns.RR {
		rrs := make([]dns.RR, n)
		for i := range rrs {
			rrs[i] = rrA(name, netip.AddrFrom4([4]byte{198, 18, byte(i >> 8), byte(i)}))
		}
		return rrs
	}
	srv.Set("bigudp.test", dns.TypeA, raw(func(q *dns.Msg, _ string) [][]byte {
		return [][]byte{pack(t, reply(q, many("bigudp.test", 300)...))} // about 5 KB
	}))
	srv.Set("hugetcp.test", dns.TypeA, raw(func(q *dns.Msg, proto string) [][]byte {
		if proto == "udp" {
			m := reply(q)
			m.Truncated = true
			return [][]byte{pack(t, m)}
		}
		return [][]byte{pack(t, reply(q, many("hugetcp.test", 4000)...))} // 64,029 bytes
	}))
	want := make([]netip.Addr, maxAnswerAddrs)
	for i := range want {
		want[i] = netip.AddrFrom4([4]byte{198, 18, 0, byte(i)})
	}
	for _, name := range []string{"bigudp.test", "hugetcp.test"} {
		addrs, err := lookupBounded(t, r, name, race.IPv4)
		wantAddrs(t, name, addrs, err, want...)
	}
	if qs := srv.Queries("bigudp.test"); len(qs) != 1 || qs[0].Proto != "udp" {
		t.Errorf("bigudp.test asked %v, want once over UDP", qs)
	}
	if n := len(srv.Queries("hugetcp.test")); n != 2 {
		t.Errorf("hugetcp.test asked %d times, want UDP then TCP", n)
	}
}

// TC over TCP means the answer is not whole and there is nowhere further
// to ask: the server fails (a temporary failure), and nothing of the
// partial answer is taken, whether TCP came after a truncated UDP answer
// or was the only transport (use-vc).
func TestDNSHostileTruncatedTCP(t *testing.T) {
	tcTCP := raw(func(q *dns.Msg, proto string) [][]byte {
		m := reply(q)
		m.Truncated = true
		if proto == "tcp" {
			m.Answer = []dns.RR{rrA(q.Question[0].Name, forgedV4)}
		}
		return [][]byte{pack(t, m)}
	})
	for _, useTCP := range []bool{false, true} {
		r, srv := newHostileDNS(t, DNSConfig{UseTCP: useTCP})
		srv.Set("tc.test", dns.TypeA, tcTCP)
		addrs, err := lookupBounded(t, r, "tc.test", race.IPv4)
		wantFail(t, fmt.Sprintf("TC over TCP (use-vc %v)", useTCP), addrs, err, race.EAI_AGAIN, "truncated (TC) over TCP")
		if qs := srv.Queries("tc.test"); len(qs) == 0 || qs[len(qs)-1].Proto != "tcp" {
			t.Errorf("use-vc %v: queries %v", useTCP, qs)
		}
	}
}
