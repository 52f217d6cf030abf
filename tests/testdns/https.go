package testdns

import (
	"encoding/binary"
	"encoding/hex"
	"fmt"
	"slices"
	"sort"

	"github.com/miekg/dns"
)

// HTTPSRecord is one record of an HTTPS RRset (RFC 9460) the server
// answers an HTTPS query with.
type HTTPSRecord struct {
	// Priority is SvcPriority: 0 makes an AliasMode record, 1 or more a
	// ServiceMode one.
	Priority uint16
	// Target is TargetName ("" or "." for the owner name); a final dot is
	// added if missing.
	Target string
	// Params are the SvcParams, in miekg/dns's types (&dns.SVCBAlpn{...},
	// &dns.SVCBLocal{KeyCode: 65000, ...} for a key of no name), written
	// in increasing key order whatever their order here.
	Params []dns.SVCBKeyValue
	// RData, when not nil, is the record's whole RDATA, written byte for
	// byte instead of Priority, Target and Params: the way to serve a
	// malformed record, which miekg/dns refuses to pack (see
	// MalformedHTTPS).
	RData []byte
}

// AnswerHTTPS answers an HTTPS query at once with records (none: NODATA).
func AnswerHTTPS(records ...HTTPSRecord) Behaviour { return Behaviour{HTTPS: records} }

// rr is the record as owner's answer record.
func (r HTTPSRecord) rr(owner string) dns.RR {
	hdr := dns.RR_Header{Name: owner, Rrtype: dns.TypeHTTPS, Class: dns.ClassINET, Ttl: 1}
	if r.RData != nil {
		// miekg/dns writes an RFC 3597 record's data as it is, under
		// the type its header names.
		return &dns.RFC3597{Hdr: hdr, Rdata: hex.EncodeToString(r.RData)}
	}
	return &dns.HTTPS{SVCB: dns.SVCB{Hdr: hdr, Priority: r.Priority, Target: dns.Fqdn(r.Target), Value: r.Params}}
}

// Check reports whether the record can be written: miekg/dns packs it
// only when every parameter is well formed (an empty ALPN, a key twice,
// a 4-byte IPv6 hint are refused). The server would write no answer at all
// for a record that does not pack, so a test sets only records that do.
func (r HTTPSRecord) Check() error {
	m := new(dns.Msg)
	m.SetQuestion("check.test.", dns.TypeHTTPS)
	m.Answer = []dns.RR{r.rr("check.test.")}
	if _, err := m.Pack(); err != nil {
		return fmt.Errorf("HTTPS record %v: %w", m.Answer[0], err)
	}
	return nil
}

func (r HTTPSRecord) String() string {
	if r.RData != nil {
		return fmt.Sprintf("rdata %x", r.RData)
	}
	s := fmt.Sprintf("%d %s", r.Priority, dns.Fqdn(r.Target))
	for _, p := range r.Params {
		s += " " + p.Key().String()
		if v := p.String(); v != "" {
			s += "=" + v
		}
	}
	return s
}

// The malformed records MalformedHTTPS serves: each a ServiceMode record
// (SvcPriority 1, TargetName ".") with one fault in its SvcParams, the
// faults RFC 9460 makes a client drop a record for. The values are the
// SvcParams' wire bytes after the target.
var malformedHTTPS = map[string][]byte{
	// Section 2.2: a parameter runs past the end of the RDATA.
	"truncated": {0, 1, 0, 10, 2, 'h', '2'},
	// Section 2.2: keys out of order, a key twice.
	"keys-unordered": cat(param(3, 0x01, 0xbb), param(1, 2, 'h', '2')),
	"keys-duplicate": cat(param(3, 0x01, 0xbb), param(3, 0x20, 0xfb)),
	// Section 7.1.1: alpn is one or more non-empty length-prefixed ids.
	"alpn-empty":    param(1),
	"alpn-empty-id": param(1, 0),
	"alpn-overflow": param(1, 5, 'h', '2'),
	// Section 7.1.1: no-default-alpn has no value.
	"no-default-alpn-value": cat(param(1, 2, 'h', '2'), param(2, 1)),
	// Section 7.2: port is 2 bytes.
	"port3": param(3, 0x01, 0xbb, 0x00),
	// Section 7.3: hints are one or more addresses of 4 or 16 bytes.
	"ipv4hint5":      param(4, 198, 18, 0, 10, 1),
	"ipv4hint-empty": param(4),
	"ipv6hint15":     param(6, 0x20, 0x01, 0x0d, 0xb8, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0),
	// Section 8: mandatory lists one or more keys, 2 bytes each, never
	// itself, none twice.
	"mandatory-empty":     cat(param(0), param(1, 2, 'h', '2')),
	"mandatory-odd":       cat(param(0, 0, 1, 0), param(1, 2, 'h', '2')),
	"mandatory-self":      cat(param(0, 0, 0, 0, 1), param(1, 2, 'h', '2')),
	"mandatory-duplicate": cat(param(0, 0, 1, 0, 1), param(1, 2, 'h', '2')),
}

// MalformedHTTPSKinds lists the kinds MalformedHTTPS knows, sorted.
func MalformedHTTPSKinds() []string {
	kinds := make([]string, 0, len(malformedHTTPS))
	for k := range malformedHTTPS {
		kinds = append(kinds, k)
	}
	sort.Strings(kinds)
	return kinds
}

// MalformedHTTPS is a malformed ServiceMode record of the given kind
// (MalformedHTTPSKinds): "port3" is a port parameter of 3 bytes,
// "truncated" a parameter longer than the RDATA, and so on.
func MalformedHTTPS(kind string) (HTTPSRecord, error) {
	params, ok := malformedHTTPS[kind]
	if !ok {
		return HTTPSRecord{}, fmt.Errorf("unknown malformed HTTPS record %q (one of %v)", kind, MalformedHTTPSKinds())
	}
	rdata := []byte{0, 1, 0} // SvcPriority 1, TargetName "."
	return HTTPSRecord{RData: append(rdata, params...)}, nil
}

// param is one SvcParam's wire form: key, length, value.
func param(key uint16, value ...byte) []byte {
	b := binary.BigEndian.AppendUint16(nil, key)
	b = binary.BigEndian.AppendUint16(b, uint16(len(value)))
	return append(b, value...)
}

func cat(parts ...[]byte) []byte { return slices.Concat(parts...) }
