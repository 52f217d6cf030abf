package testdns

import (
	"fmt"
	"net/netip"
	"time"

	"github.com/miekg/dns"
)

// Behaviour is how the test DNS server answers one (name, query type).
type Behaviour struct {
	// Addrs are the answer records (only those of the query's family are
	// sent). Empty with Rcode success is NODATA.
	Addrs []netip.Addr
	// HTTPS are the records of an HTTPS answer (RFC 9460), in this
	// order; empty with Rcode success is NODATA.
	HTTPS []HTTPSRecord
	// Delay holds the answer back this long.
	Delay time.Duration
	// Never: the query is read and never answered.
	Never bool
	// Rcode is the response code (dns.RcodeSuccess, dns.RcodeNameError,
	// dns.RcodeServerFailure, ...).
	Rcode int
	// Truncate answers UDP queries with the TC bit and no records, so the
	// client must retry over TCP, where the full answer is given.
	Truncate bool
	// RejectEDNS answers FORMERR to queries that carry an EDNS0 record, as
	// servers that predate EDNS0 do; queries without one get the answer.
	RejectEDNS bool
	// AfterAAAA (for an A entry) holds the n-th A query's answer until
	// the name's n-th AAAA answer has been written, AfterAAAAWait at
	// most: a client that asks both at once then learns AAAA first,
	// however late a loaded machine runs the server, and no Resolution
	// Delay (RFC 8305's fixed 50 ms) decides its race.
	AfterAAAA bool
	// AfterName and AfterType, when AfterName is set, hold the n-th
	// query's answer of this entry until the n-th answer of (AfterName,
	// AfterType) has been written, AfterAAAAWait at most; Delay then
	// counts from there. A race's order is scripted so: a host's AAAA
	// answered only once its HTTPS query has been (the race knows its
	// services before its own addresses), or an HTTPS answer 200 ms after
	// the host's AAAA (a late answer that joins a started race). AfterAAAA
	// is AfterName = the entry's own name, AfterType = AAAA.
	AfterName string
	AfterType uint16

	// Hostile or broken servers (the built-in resolver's tests):

	// Raw, when set, replaces the answer: the server writes each message
	// Raw returns, byte for byte, over the protocol the query came by (a
	// TCP message gets its length prefix). A message may be malformed,
	// oversized, for another ID or question, anything.
	Raw func(query *dns.Msg, proto string) [][]byte
	// Forge, when set, is written before the answer to a UDP query from
	// another socket of the server's (same address, another port): an
	// answer from the wrong source, which a client must not take.
	Forge func(query *dns.Msg) []byte
}

// AfterAAAAWait bounds how long an AfterAAAA (or AfterName) answer waits
// for its AAAA (a client that never asks AAAA): below the one second a client of the
// test bed's resolv.conf waits for an answer.
const AfterAAAAWait = 500 * time.Millisecond

// Answer answers at once with addrs.
func Answer(addrs ...netip.Addr) Behaviour { return Behaviour{Addrs: addrs} }

// Delayed answers with addrs after d.
func Delayed(d time.Duration, addrs ...netip.Addr) Behaviour {
	return Behaviour{Addrs: addrs, Delay: d}
}

// NeverAnswer swallows the query.
func NeverAnswer() Behaviour { return Behaviour{Never: true} }

// NoData answers NOERROR with no records: the name exists, not this type.
func NoData() Behaviour { return Behaviour{} }

// NXDomain answers that the name does not exist.
func NXDomain() Behaviour { return Behaviour{Rcode: dns.RcodeNameError} }

// ServFail answers SERVFAIL.
func ServFail() Behaviour { return Behaviour{Rcode: dns.RcodeServerFailure} }

// Truncated sets TC on UDP and answers addrs over TCP.
func Truncated(addrs ...netip.Addr) Behaviour { return Behaviour{Addrs: addrs, Truncate: true} }

func (b Behaviour) String() string {
	var s string
	switch {
	case b.Never:
		return "never"
	case b.Raw != nil:
		s = "raw"
	case b.Rcode == dns.RcodeNameError:
		s = "NXDOMAIN"
	case b.Rcode != dns.RcodeSuccess:
		s = dns.RcodeToString[b.Rcode]
	case len(b.Addrs) == 0 && len(b.HTTPS) == 0:
		s = "NODATA"
	case len(b.HTTPS) > 0:
		s = fmt.Sprint(b.HTTPS)
	default:
		s = fmt.Sprint(b.Addrs)
	}
	if b.Forge != nil {
		s = "forged+" + s
	}
	if b.Truncate {
		s = "TC→TCP " + s
	}
	if b.RejectEDNS {
		s = "no-EDNS " + s
	}
	if b.Delay > 0 {
		s += fmt.Sprintf(" delayed %v", b.Delay)
	}
	if b.AfterAAAA {
		s += " after AAAA"
	}
	if b.AfterName != "" {
		s += fmt.Sprintf(" after %s %s", dns.TypeToString[b.AfterType], b.AfterName)
	}
	return s
}
