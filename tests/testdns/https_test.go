package testdns

import (
	"net"
	"net/netip"
	"strings"
	"testing"
	"time"

	"github.com/miekg/dns"
	"golang.org/x/net/dns/dnsmessage"
)

// The HTTPS answers are read here with dnsmessage, not miekg/dns: miekg/dns
// refuses a whole message for one malformed record, and the point of a
// malformed record beside good ones is that a client can read the others.

// askHTTPS sends an HTTPS query for name over UDP and returns the raw answer.
func askHTTPS(t *testing.T, srv *Server, name string) []byte {
	t.Helper()
	q := new(dns.Msg)
	q.SetQuestion(dns.Fqdn(name), dns.TypeHTTPS)
	wire, err := q.Pack()
	if err != nil {
		t.Fatal(err)
	}
	conn, err := net.Dial("udp", srv.Addr.String())
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close()
	conn.SetDeadline(time.Now().Add(10 * time.Second))
	if _, err := conn.Write(wire); err != nil {
		t.Fatal(err)
	}
	buf := make([]byte, 65535)
	n, err := conn.Read(buf)
	if err != nil {
		t.Fatal(err)
	}
	return buf[:n]
}

// httpsAnswers reads msg's answer section: each HTTPS record as
// "target key...", or "malformed" when it does not decode (dnsmessage
// reads its structure, rfcValid its values); the header's RCODE first.
func httpsAnswers(t *testing.T, msg []byte) []string {
	t.Helper()
	var p dnsmessage.Parser
	h, err := p.Start(msg)
	if err != nil {
		t.Fatal(err)
	}
	if err := p.SkipAllQuestions(); err != nil {
		t.Fatal(err)
	}
	out := []string{h.RCode.String()}
	for {
		rh, err := p.AnswerHeader()
		if err == dnsmessage.ErrSectionDone {
			return out
		}
		if err != nil {
			t.Fatal(err)
		}
		if rh.Type != dnsmessage.TypeHTTPS {
			t.Fatalf("a %v record in the answer", rh.Type)
		}
		rr, err := p.HTTPSResource()
		if err != nil {
			if err := p.SkipAnswer(); err != nil {
				t.Fatal(err)
			}
		}
		if err != nil || !rfcValid(rr.Params) {
			out = append(out, "malformed")
			continue
		}
		s := []string{rr.Target.String()}
		for _, kv := range rr.Params {
			s = append(s, kv.Key.String())
		}
		out = append(out, strings.Join(s, " "))
	}
}

func TestServeHTTPS(t *testing.T) {
	srv, err := ServeLoopback()
	if err != nil {
		t.Fatal(err)
	}
	defer srv.Close()
	good := HTTPSRecord{Priority: 1, Target: ".", Params: []dns.SVCBKeyValue{
		&dns.SVCBPort{Port: 8443}, // given out of order: written in order
		&dns.SVCBAlpn{Alpn: []string{"h2", "h3"}},
		&dns.SVCBLocal{KeyCode: 65000, Data: []byte("x")},
	}}
	if err := good.Check(); err != nil {
		t.Fatal(err)
	}
	port3, err := MalformedHTTPS("port3")
	if err != nil {
		t.Fatal(err)
	}
	srv.Set("svc.test", dns.TypeHTTPS, AnswerHTTPS(good, port3, HTTPSRecord{Priority: 2, Target: "alt.test"}))
	srv.Set("alias.test", dns.TypeHTTPS, AnswerHTTPS(HTTPSRecord{Target: "svc.test."}))
	srv.Set("addr.test", dns.TypeA, Answer(netip.MustParseAddr("198.18.0.1")))
	for name, want := range map[string]string{
		"svc.test":   "RCodeSuccess|. ALPN Port 65000|malformed|alt.test.",
		"alias.test": "RCodeSuccess|svc.test.",
		"addr.test":  "RCodeSuccess",   // NODATA
		"nx.test":    "RCodeNameError", // NXDOMAIN
	} {
		if got := strings.Join(httpsAnswers(t, askHTTPS(t, srv, name)), "|"); got != want {
			t.Errorf("%s: %s, want %s", name, got, want)
		}
	}
	if n := srv.Count("svc.test", dns.TypeHTTPS); n != 1 {
		t.Errorf("svc.test: %d HTTPS queries logged", n)
	}
}

// Every malformed kind is refused by a decoder that follows RFC 9460, and
// only that record: dnsmessage reads the record structure (lengths, key
// order), the SvcParam values are checked here as a client must.
func TestMalformedHTTPSKinds(t *testing.T) {
	for _, kind := range MalformedHTTPSKinds() {
		rec, err := MalformedHTTPS(kind)
		if err != nil {
			t.Fatal(err)
		}
		m := new(dns.Msg)
		m.SetQuestion("m.test.", dns.TypeHTTPS)
		m.Response = true
		m.Answer = []dns.RR{rec.rr("m.test."), HTTPSRecord{Priority: 1}.rr("m.test.")}
		wire, err := m.Pack()
		if err != nil {
			t.Fatalf("%s: %v", kind, err)
		}
		var p dnsmessage.Parser
		p.Start(wire)
		p.SkipAllQuestions()
		p.AnswerHeader()
		rr, err := p.HTTPSResource()
		if err == nil && rfcValid(rr.Params) {
			t.Errorf("%s: read as a valid record %v", kind, rr.GoString())
		}
		if err != nil {
			if err := p.SkipAnswer(); err != nil {
				t.Fatalf("%s: %v", kind, err)
			}
		}
		if _, err := p.AnswerHeader(); err != nil {
			t.Fatalf("%s: the record after it: %v", kind, err)
		}
		if _, err := p.HTTPSResource(); err != nil {
			t.Errorf("%s: the good record after it: %v", kind, err)
		}
	}
	if _, err := MalformedHTTPS("nope"); err == nil {
		t.Error("unknown kind: no error")
	}
}

// rfcValid checks the SvcParam values of the keys RFC 9460 defines.
func rfcValid(params []dnsmessage.SVCParam) bool {
	for _, kv := range params {
		v := kv.Value
		switch kv.Key {
		case dnsmessage.SVCParamMandatory:
			if len(v) == 0 || len(v)%2 != 0 {
				return false
			}
			seen := map[uint16]bool{}
			for i := 0; i < len(v); i += 2 {
				k := uint16(v[i])<<8 | uint16(v[i+1])
				if k == 0 || seen[k] {
					return false
				}
				seen[k] = true
			}
		case dnsmessage.SVCParamALPN:
			if len(v) == 0 {
				return false
			}
			for len(v) > 0 {
				n := int(v[0])
				if n == 0 || 1+n > len(v) {
					return false
				}
				v = v[1+n:]
			}
		case dnsmessage.SVCParamNoDefaultALPN:
			if len(v) != 0 {
				return false
			}
		case dnsmessage.SVCParamPort:
			if len(v) != 2 {
				return false
			}
		case dnsmessage.SVCParamIPv4Hint:
			if len(v) == 0 || len(v)%4 != 0 {
				return false
			}
		case dnsmessage.SVCParamIPv6Hint:
			if len(v) == 0 || len(v)%16 != 0 {
				return false
			}
		}
	}
	return true
}
