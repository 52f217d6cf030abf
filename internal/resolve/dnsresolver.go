package resolve

import (
	"context"
	"errors"
	"fmt"
	"net/netip"
	"strings"
	"sync/atomic"
	"time"

	"golang.org/x/net/dns/dnsmessage"

	"github.com/hev2/hev2/internal/race"
)

// DNSResolver is hev2's own stub resolver. Unlike getaddrinfo it is really
// canceled: a canceled lookup closes its sockets at once and sends nothing
// more. It answers from the hosts file first, skips a family the host has
// no usable address for (as SystemResolver does), then asks the name servers
// over UDP (TCP when an answer is truncated), walking the search list as
// glibc does. Each LookupFamily sends one query type, and the engine calls
// both families at once, so AAAA and A leave together.
//
// resolv.conf and the hosts file are re-read when they change (checked at
// most once a second), as glibc does, so a long-lived resolver follows the
// host's configuration.
type DNSResolver struct {
	cfg        DNSConfig
	conf       confFile
	hosts      *hostsFile
	addrConfig bool // skip DNS for a family the host cannot reach

	nextServer atomic.Uint32
	stats      dnsCounters
}

// LookupFamily implements Resolver.
func (r *DNSResolver) LookupFamily(ctx context.Context, host string, family race.Family) ([]netip.Addr, error) {
	if family != race.IPv4 && family != race.IPv6 {
		return nil, &race.ResolveError{Host: host, Family: family, Code: race.EAI_FAMILY}
	}
	if addr, err := netip.ParseAddr(host); err == nil {
		if race.FamilyOf(addr) != family {
			return nil, &race.ResolveError{Host: host, Family: family, Code: race.EAI_ADDRFAMILY}
		}
		return []netip.Addr{addr}, nil
	}
	name := strings.ToLower(strings.TrimSuffix(host, "."))
	if !validHostname(name) || strings.HasSuffix(host, "..") {
		return nil, &race.ResolveError{Host: host, Family: family, Code: race.EAI_NONAME}
	}
	if r.hosts != nil {
		if addrs := r.hosts.lookup(name, family); len(addrs) > 0 {
			return addrs, nil
		}
	}
	if name == "localhost" || strings.HasSuffix(name, ".localhost") {
		// RFC 6761 6.3: localhost is loopback and never asked of DNS.
		if family == race.IPv6 {
			return []netip.Addr{netip.IPv6Loopback()}, nil
		}
		return []netip.Addr{netip.AddrFrom4([4]byte{127, 0, 0, 1})}, nil
	}
	if r.addrConfig && !addrConfigWants(family) {
		r.stats.skipped.Add(1)
		return nil, &race.ResolveError{Host: host, Family: family, Code: race.EAI_ADDRFAMILY, Err: errFamilyNotConfigured}
	}
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	qtype := dnsmessage.TypeA
	if family == race.IPv6 {
		qtype = dnsmessage.TypeAAAA
	}
	// Like res_search: try every candidate name; report NODATA if any
	// name exists, else a temporary failure if any server failed, else
	// NONAME.
	set := r.settings()
	var noData, again bool
	var lastErr error
	for _, fqdn := range set.candidates(host) {
		addrs, _, code, err := r.query(ctx, set, fqdn, qtype)
		if ctxErr := ctx.Err(); ctxErr != nil {
			return nil, ctxErr
		}
		switch code {
		case 0:
			return addrs, nil
		case race.EAI_NODATA:
			noData = true
		case race.EAI_AGAIN:
			again, lastErr = true, err
		case race.EAI_FAIL:
			return nil, &race.ResolveError{Host: host, Family: family, Code: race.EAI_FAIL, Err: err}
		}
	}
	code := race.EAI_NONAME
	if noData {
		code = race.EAI_NODATA
	} else if again {
		code = race.EAI_AGAIN
	}
	return nil, &race.ResolveError{Host: host, Family: family, Code: code, Err: lastErr}
}

// candidates lists the names to ask, in resolv.conf(5)'s order: the name
// as given first when it has at least ndots dots, else after the search
// domains; a name ending in a dot is only ever asked as given.
func (set *dnsSettings) candidates(host string) []string {
	if strings.HasSuffix(host, ".") {
		return []string{host}
	}
	asIs := host + "."
	out := make([]string, 0, len(set.search)+1)
	dotted := strings.Count(host, ".") >= set.ndots
	if dotted {
		out = append(out, asIs)
	}
	for _, s := range set.search {
		out = append(out, host+"."+s+".")
	}
	if !dotted {
		out = append(out, asIs)
	}
	return out
}

// query asks the servers for one name's addresses of qtype. It returns
// the addresses and the smallest TTL of the answer's records, with 0 as
// code, or an EAI code.
func (r *DNSResolver) query(ctx context.Context, set *dnsSettings, fqdn string, qtype dnsmessage.Type) ([]netip.Addr, time.Duration, int, error) {
	resp, server, code, err := r.ask(ctx, set, fqdn, qtype)
	if resp == nil {
		return nil, 0, code, err
	}
	addrs, err := answerAddrs(resp.answers, fqdn, qtype)
	if err != nil {
		return nil, 0, race.EAI_FAIL, fmt.Errorf("%v: %w", server, err)
	}
	if len(addrs) == 0 {
		return nil, 0, race.EAI_NODATA, nil
	}
	return addrs, answerTTL(resp.answers), 0, nil
}

// ask sends one question to the servers, in resolv.conf's order (rotated
// with options rotate) for its attempts, and returns the first NOERROR
// answer and the server that gave it; what the answer holds is the
// caller's to read. Otherwise it returns no answer and an EAI code:
// EAI_NONAME for NXDOMAIN, EAI_AGAIN when every server failed (silence,
// SERVFAIL, REFUSED, a malformed answer), EAI_FAIL for another RCODE; or
// code 0 and ctx's error once ctx is done.
func (r *DNSResolver) ask(ctx context.Context, set *dnsSettings, fqdn string, qtype dnsmessage.Type) (*dnsReply, netip.AddrPort, int, error) {
	m, err := newDNSQuery(fqdn, qtype)
	if err != nil {
		// A search domain made the name too long: no such name exists
		// (res_search moves on to the next candidate too).
		return nil, netip.AddrPort{}, race.EAI_NONAME, err
	}
	first := 0
	if set.rotate {
		first = int(r.nextServer.Add(1))
	}
	var lastErr error
	for attempt := 0; attempt < set.attempts; attempt++ {
		for i := range set.servers {
			server := set.servers[(first+i)%len(set.servers)]
			m.id = newDNSID()
			resp, err := r.exchange(ctx, set, m, server)
			if err == nil && resp.header.RCode == dnsmessage.RCodeFormatError && m.edns {
				// An old server that does not know EDNS0: ask again
				// without it (a long answer then comes truncated,
				// and over TCP).
				m.edns = false
				m.id = newDNSID()
				resp, err = r.exchange(ctx, set, m, server)
			}
			if err != nil {
				if ctx.Err() != nil {
					return nil, netip.AddrPort{}, 0, ctx.Err()
				}
				lastErr = fmt.Errorf("%v: %w", server, err)
				continue
			}
			switch resp.header.RCode {
			case dnsmessage.RCodeSuccess:
				return resp, server, 0, nil
			case dnsmessage.RCodeNameError:
				return nil, server, race.EAI_NONAME, nil

			case dnsmessage.RCodeServerFailure, dnsmessage.RCodeRefused:
				// Another server may know better (glibc moves on too).
				lastErr = fmt.Errorf("%v answered %s", server, rcodeText(resp.header.RCode))
			default:
				return nil, server, race.EAI_FAIL, fmt.Errorf("%v answered %s", server, rcodeText(resp.header.RCode))
			}
		}
	}
	if lastErr == nil {
		lastErr = errors.New("no answer")
	}
	return nil, netip.AddrPort{}, race.EAI_AGAIN, lastErr
}

// answerTTL is the smallest TTL in the answer section: how long the
// answer as a whole may be kept.
func answerTTL(answers []dnsmessage.Resource) time.Duration {
	var least uint32
	for i, rr := range answers {
		if ttl := rr.Header.TTL; i == 0 || ttl < least {
			least = ttl
		}
	}
	return time.Duration(least) * time.Second
}

// LookupIPv4Only asks the name servers for ipv4only.arpa's AAAA records
// (RFC 7050 NAT64 discovery), as a fully qualified name (no search list,
// no hosts file), and gives the answer's TTL with it.
func (r *DNSResolver) LookupIPv4Only(ctx context.Context) ([]netip.Addr, time.Duration, error) {
	addrs, ttl, code, err := r.query(ctx, r.settings(), race.IPv4OnlyName+".", dnsmessage.TypeAAAA)
	if ctxErr := ctx.Err(); ctxErr != nil {
		return nil, 0, ctxErr
	}
	if code != 0 {
		return nil, 0, &race.ResolveError{Host: race.IPv4OnlyName, Family: race.IPv6, Code: code, Err: err}
	}
	return addrs, ttl, nil
}

// The bounds on what one answer can make the resolver do.
const (
	// maxCNAMEs is the longest CNAME chain followed (BIND and Unbound
	// stop at about as many); a longer one, or a loop, fails the lookup.
	maxCNAMEs = 8
	// maxAnswerAddrs is the most addresses taken from one answer: more
	// would only lengthen a race that tries one every 250 ms.
	maxAnswerAddrs = 64
)

var (
	errCNAMELoop  = errors.New("CNAME loop in the answer")
	errCNAMEChain = fmt.Errorf("CNAME chain longer than %d in the answer", maxCNAMEs)
)

// answerAddrs collects the addresses of qtype that answer qname: it
// follows qname's CNAME chain through the answer (see chainEnd) and takes
// the class IN records of qtype owned by the chain's last name, and only
// those: a record for a name that was not asked about is ignored, whatever
// the server meant by it. An AAAA holding an IPv4-mapped address is not an
// IPv6 destination and is dropped too.
func answerAddrs(answers []dnsmessage.Resource, qname string, qtype dnsmessage.Type) ([]netip.Addr, error) {
	name, err := chainEnd(answers, qname)
	if err != nil {
		return nil, err
	}
	var addrs []netip.Addr
	for _, rr := range answers {
		h := rr.Header
		if h.Type != qtype || !ownedBy(h, name) {
			continue
		}
		var a netip.Addr
		switch body := rr.Body.(type) {
		case *dnsmessage.AResource:
			a = netip.AddrFrom4(body.A)
		case *dnsmessage.AAAAResource:
			if a = netip.AddrFrom16(body.AAAA); a.Is4In6() {
				continue
			}
		}
		if a.IsValid() {
			if addrs = appendUnique(addrs, a); len(addrs) == maxAnswerAddrs {
				break
			}
		}
	}
	return addrs, nil
}

// chainEnd follows qname's CNAME chain through the answer and returns its
// last name (qname itself without a CNAME), canonical: the name whose
// records answer the question. A chain longer than maxCNAMEs, or a loop,
// is an error.
func chainEnd(answers []dnsmessage.Resource, qname string) (string, error) {
	name := canonicalName(qname)
	seen := map[string]bool{name: true}
	for hops := 0; ; hops++ {
		next := ""
		for _, rr := range answers {
			if c, ok := rr.Body.(*dnsmessage.CNAMEResource); ok && ownedBy(rr.Header, name) {
				next = canonicalName(c.CNAME.String())
				break
			}
		}
		if next == "" {
			return name, nil
		}
		if seen[next] {
			return "", errCNAMELoop
		}
		if hops == maxCNAMEs {
			return "", errCNAMEChain
		}
		seen[next], name = true, next
	}
}

// ownedBy reports whether a record is of class IN and owned by name
// (canonical).
func ownedBy(h dnsmessage.ResourceHeader, name string) bool {
	return h.Class == dnsmessage.ClassINET && canonicalName(h.Name.String()) == name
}

// DNSResolverStats counts what a DNSResolver sent.
type DNSResolverStats struct {
	Queries      uint64 // messages sent (UDP and TCP)
	TCPFallbacks uint64 // truncated UDP answers asked again over TCP
	Timeouts     uint64 // queries a server did not answer in time
	Skipped      uint64 // lookups answered at once by the AI_ADDRCONFIG policy
	OpenSockets  int64  // sockets open now
}

type dnsCounters struct {
	queries, tcpFallbacks, timeouts, skipped atomic.Uint64
	openSockets                              atomic.Int64
}

// Stats returns a snapshot of r's counters.
func (r *DNSResolver) Stats() DNSResolverStats {
	return DNSResolverStats{
		Queries:      r.stats.queries.Load(),
		TCPFallbacks: r.stats.tcpFallbacks.Load(),
		Timeouts:     r.stats.timeouts.Load(),
		Skipped:      r.stats.skipped.Load(),
		OpenSockets:  r.stats.openSockets.Load(),
	}
}
