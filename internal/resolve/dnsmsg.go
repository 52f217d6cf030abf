package resolve

import (
	"encoding/binary"
	"errors"
	"fmt"
	"math/rand/v2"

	"golang.org/x/net/dns/dnsmessage"
)

// The DNS messages of the built-in resolver, through the Go team's
// golang.org/x/net/dns/dnsmessage (the codec Go's own resolver uses, already
// linked through net): a query of one question, and the parts of an answer
// the resolver reads. Using it rather than a full DNS library keeps
// libhev2 small and quick to load: github.com/miekg/dns brought 1.5 MB of
// the library's 5.8 MB, and crypto's initialisers, into every process that
// loads it, for the few messages a stub resolver sends and reads.

// dnsQuery is one question as sent, and what an answer must match.
type dnsQuery struct {
	id    uint16
	name  dnsmessage.Name // fully qualified, as asked
	qtype dnsmessage.Type
	edns  bool // offers dnsUDPSize in an EDNS0 OPT record
}

// newDNSQuery is a query for fqdn (ending in a dot) and qtype, with EDNS0.
// A name too long to encode cannot exist: the error says so.
func newDNSQuery(fqdn string, qtype dnsmessage.Type) (*dnsQuery, error) {
	name, err := dnsmessage.NewName(fqdn)
	if err != nil {
		return nil, fmt.Errorf("name %q: %w", fqdn, err)
	}
	return &dnsQuery{id: newDNSID(), name: name, qtype: qtype, edns: true}, nil
}

// newDNSID is a fresh transaction ID: random, so that an off-path forger
// must guess it (with the source port) to have an answer taken.
func newDNSID() uint16 { return uint16(rand.Uint32()) }

// pack is the query's wire form: recursion desired, one question of class
// IN, and the OPT record when q.edns.
func (q *dnsQuery) pack() ([]byte, error) {
	b := dnsmessage.NewBuilder(make([]byte, 0, 64), dnsmessage.Header{ID: q.id, RecursionDesired: true})
	if err := b.StartQuestions(); err != nil {
		return nil, err
	}
	if err := b.Question(dnsmessage.Question{Name: q.name, Type: q.qtype, Class: dnsmessage.ClassINET}); err != nil {
		return nil, err
	}
	if q.edns {
		if err := b.StartAdditionals(); err != nil {
			return nil, err
		}
		var opt dnsmessage.ResourceHeader
		if err := opt.SetEDNS0(dnsUDPSize, dnsmessage.RCodeSuccess, false); err != nil {
			return nil, err
		}
		if err := b.OPTResource(opt, dnsmessage.OPTResource{}); err != nil {
			return nil, err
		}
	}
	return b.Finish()
}

// dnsReply is what the resolver reads of an answer: its header and its
// answer section.
type dnsReply struct {
	header  dnsmessage.Header
	answers []dnsmessage.Resource
	// dropped are the headers of the HTTPS records left out of answers
	// because their data did not decode (see readAnswers).
	dropped []dnsmessage.ResourceHeader
}

// parseReply reads one message received for query q. It returns ours
// false for a message that is not an answer to q (another ID, another
// question, not a response, or too mangled to tell): the caller ignores
// it. A message that is an answer to q but does not parse beyond its
// question is an error: the server's answer is malformed (an HTTPS record
// that does not decode is not: see readAnswers). A truncated
// answer (TC) is taken with its header alone: it is asked again over TCP.
func parseReply(msg []byte, q *dnsQuery) (resp *dnsReply, ours bool, err error) {
	var p dnsmessage.Parser
	h, err := p.Start(msg)
	if err != nil || !h.Response || h.OpCode != 0 || h.ID != q.id {
		return nil, false, nil
	}
	questions, err := p.AllQuestions()
	if err != nil || len(questions) != 1 || !q.asks(questions[0]) {
		return nil, false, nil
	}
	if h.Truncated {
		return &dnsReply{header: h}, true, nil
	}
	answers, dropped, err := readAnswers(&p)
	if err == nil {
		err = p.SkipAllAuthorities()
	}
	if err == nil {
		err = p.SkipAllAdditionals()
	}
	if err == nil {
		err = recordsFit(msg)
	}
	for i := 0; err == nil && i < len(answers); i++ {
		err = addressLength(answers[i].Header)
	}
	if err != nil {
		return nil, true, fmt.Errorf("malformed answer: %w", err)
	}
	return &dnsReply{header: h, answers: answers, dropped: dropped}, true, nil
}

// readAnswers reads the answer section. An HTTPS record whose data does not
// decode is left out and its header kept in dropped: RFC 9460 has a client
// drop a malformed record and use the rest of the RRset, so one bad record
// must neither fail the answer nor send the query on to another server.
// Any other record that does not decode fails the answer, as it always
// has (a malformed A or CNAME is a broken server).
func readAnswers(p *dnsmessage.Parser) (answers []dnsmessage.Resource, dropped []dnsmessage.ResourceHeader, err error) {
	for {
		h, err := p.AnswerHeader()
		if err == dnsmessage.ErrSectionDone {
			return answers, dropped, nil
		}
		if err != nil {
			return nil, nil, err
		}
		if h.Type != dnsmessage.TypeHTTPS {
			rr, err := p.Answer() // reads the header again, then the data
			if err != nil {
				return nil, nil, err
			}
			answers = append(answers, rr)
			continue
		}
		body, err := p.HTTPSResource()
		if err != nil {
			// HTTPSResource fails without moving the parser: it still
			// stands after this record's header, and SkipAnswer steps
			// over the RDLENGTH bytes of its data (refusing an RDLENGTH
			// past the message's end: that answer is malformed).
			if err := p.SkipAnswer(); err != nil {
				return nil, nil, err
			}
			dropped = append(dropped, h)
			continue
		}
		answers = append(answers, dnsmessage.Resource{Header: h, Body: &body})
	}
}

var (
	errRecordPastEnd = errors.New("a record runs past the end of the message")
	errBadName       = errors.New("a name runs past the end of the message")
	errAddressLength = errors.New("an address record of the wrong length")
)

// recordsFit checks what dnsmessage leaves unchecked: that every record's
// RDLENGTH stays inside the message (dnsmessage reads an A, AAAA or CNAME
// record's data by its type and steps over RDLENGTH unchecked, so a last
// record claiming more bytes than there are would pass).
func recordsFit(msg []byte) error {
	counts := [4]int{}
	for i := range counts {
		counts[i] = int(binary.BigEndian.Uint16(msg[4+2*i:]))
	}
	off := 12
	var err error
	for range counts[0] { // questions: name, type, class
		if off, err = skipName(msg, off); err != nil {
			return err
		}
		off += 4
	}
	for range counts[1] + counts[2] + counts[3] { // name, type, class, TTL, RDLENGTH, data
		if off, err = skipName(msg, off); err != nil {
			return err
		}
		if off+10 > len(msg) {
			return errRecordPastEnd
		}
		off += 10 + int(binary.BigEndian.Uint16(msg[off+8:]))
		if off > len(msg) {
			return errRecordPastEnd
		}
	}
	return nil
}

// skipName returns the offset after the name at off: its labels up to the
// root label or a compression pointer (where the name ends in place).
func skipName(msg []byte, off int) (int, error) {
	for off < len(msg) {
		c := int(msg[off])
		switch {
		case c == 0:
			return off + 1, nil
		case c&0xC0 == 0xC0:
			if off+2 > len(msg) {
				return 0, errBadName
			}
			return off + 2, nil
		case c&0xC0 != 0:
			return 0, errBadName
		}
		off += 1 + c
	}
	return 0, errBadName
}

// addressLength refuses an A or AAAA record whose RDLENGTH is not an
// address's (dnsmessage reads the address and steps over the rest).
func addressLength(h dnsmessage.ResourceHeader) error {
	switch {
	case h.Type == dnsmessage.TypeA && h.Length != 4, h.Type == dnsmessage.TypeAAAA && h.Length != 16:
		return errAddressLength
	}
	return nil
}

// asks reports whether question is q's (the name compared as DNS does,
// without regard to ASCII case).
func (q *dnsQuery) asks(question dnsmessage.Question) bool {
	return question.Type == q.qtype && question.Class == dnsmessage.ClassINET &&
		canonicalName(question.Name.String()) == canonicalName(q.name.String())
}

// canonicalName is a name in the form names are compared in: ASCII
// letters in lower case (RFC 4343: only those), fully qualified.
func canonicalName(name string) string {
	b := []byte(name)
	for i, c := range b {
		if 'A' <= c && c <= 'Z' {
			b[i] = c + ('a' - 'A')
		}
	}
	if len(b) == 0 || b[len(b)-1] != '.' {
		b = append(b, '.')
	}
	return string(b)
}

// rcodeText is an RCODE's mnemonic (RFC 1035, RFC 2136), as dig prints it.
func rcodeText(rc dnsmessage.RCode) string {
	switch rc {
	case dnsmessage.RCodeSuccess:
		return "NOERROR"
	case dnsmessage.RCodeFormatError:
		return "FORMERR"
	case dnsmessage.RCodeServerFailure:
		return "SERVFAIL"
	case dnsmessage.RCodeNameError:
		return "NXDOMAIN"
	case dnsmessage.RCodeNotImplemented:
		return "NOTIMP"
	case dnsmessage.RCodeRefused:
		return "REFUSED"
	}
	return fmt.Sprintf("RCODE%d", int(rc))
}

// validHostname reports whether name (lower case, no final dot) can be a
// DNS name: labels of 1 to 63 bytes, 253 bytes in all (255 on the wire).
func validHostname(name string) bool {
	if name == "" || len(name) > 253 {
		return false
	}
	label := 0
	for i := 0; i < len(name); i++ {
		if name[i] != '.' {
			label++
			continue
		}
		if label == 0 || label > 63 {
			return false
		}
		label = 0
	}
	return label >= 1 && label <= 63
}
