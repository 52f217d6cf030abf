package core

import (
	"context"
	"errors"
	"fmt"
	"net/netip"
	"strings"
	"sync/atomic"
	"time"

	"github.com/miekg/dns"
)

// DNSConfig configures the built-in resolver. Zero fields take their value
// from resolv.conf, then from glibc's defaults.
type DNSConfig struct {
	// Nameservers are "ip" (port 53) or "ip:port" ("[ipv6]:port"); they
	// replace resolv.conf's name servers.
	Nameservers []string
	// ResolvConf is the resolv.conf(5) to read ("": /etc/resolv.conf).
	ResolvConf string
	// HostsFile is the hosts(5) file consulted first ("": /etc/hosts);
	// NoHostsFile skips it.
	HostsFile   string
	NoHostsFile bool
	// Search replaces resolv.conf's search list; Ndots its ndots (0: keep).
	Search []string
	Ndots  int
	// Timeout is the wait for one server's answer to one query
	// (resolv.conf's timeout, default 5 s); Attempts the number of rounds
	// over the servers (default 2).
	Timeout  time.Duration
	Attempts int
	// UseTCP sends every query over TCP (resolv.conf: options use-vc).
	UseTCP bool
	// NoAddrConfig asks DNS for every family, even one this host has no
	// usable address for (by default such a family is answered from the
	// hosts file only, see AddrConfigFamilies).
	NoAddrConfig bool
}

// DNSResolver is hev2's own stub resolver. Unlike getaddrinfo it is really
// canceled: a canceled lookup closes its sockets at once and sends nothing
// more. It answers from the hosts file first, skips a family the host has
// no usable address for (as SystemResolver does), then asks the name servers
// over UDP (TCP when an answer is truncated), walking the search list as
// glibc does. Each LookupFamily sends one query type, and the engine calls
// both families at once, so AAAA and A leave together.
type DNSResolver struct {
	servers  []netip.AddrPort
	search   []string
	ndots    int
	timeout  time.Duration
	attempts int
	rotate   bool
	useTCP   bool
	hosts    *hostsFile
	// addrConfig skips DNS for a family the host cannot reach.
	addrConfig bool

	nextServer atomic.Uint32
	stats      dnsCounters
}

// NewDNSResolver reads the configuration; it fails when a file or value is
// malformed or when no name server is known.
func NewDNSResolver(cfg DNSConfig) (*DNSResolver, error) {
	path := cfg.ResolvConf
	if path == "" {
		path = "/etc/resolv.conf"
	}
	rc, err := readResolvConf(path)
	if err != nil {
		return nil, err
	}
	if len(cfg.Nameservers) > 0 {
		rc.nameservers = nil
		for _, s := range cfg.Nameservers {
			ap, err := parseNameserver(s)
			if err != nil {
				return nil, err
			}
			rc.nameservers = append(rc.nameservers, ap)
		}
	}
	if len(rc.nameservers) == 0 {
		return nil, fmt.Errorf("hev2: no name server: none given and none in %s", path)
	}
	if cfg.Search != nil {
		rc.search = cfg.Search
	}
	if cfg.Ndots < 0 || cfg.Timeout < 0 || cfg.Attempts < 0 {
		return nil, fmt.Errorf("hev2: negative ndots, timeout or attempts")
	}
	if cfg.Ndots > 0 {
		rc.ndots = min(cfg.Ndots, maxNdots)
	}
	if cfg.Timeout > 0 {
		rc.timeout = cfg.Timeout
	}
	if cfg.Attempts > 0 {
		rc.attempts = cfg.Attempts
	}
	r := &DNSResolver{
		servers: rc.nameservers, ndots: rc.ndots, timeout: rc.timeout,
		attempts: rc.attempts, rotate: rc.rotate, useTCP: rc.useTCP || cfg.UseTCP,
		addrConfig: !cfg.NoAddrConfig,
	}
	for _, s := range rc.search {
		if s = strings.Trim(s, "."); s != "" {
			r.search = append(r.search, s)
		}
	}
	if !cfg.NoHostsFile {
		hosts := cfg.HostsFile
		if hosts == "" {
			hosts = "/etc/hosts"
		}
		r.hosts = &hostsFile{path: hosts}
	}
	return r, nil
}

func parseNameserver(s string) (netip.AddrPort, error) {
	if addr, err := netip.ParseAddr(s); err == nil {
		return netip.AddrPortFrom(addr, 53), nil
	}
	ap, err := netip.ParseAddrPort(s)
	if err != nil || ap.Port() == 0 {
		return netip.AddrPort{}, fmt.Errorf("hev2: name server %q is not \"ip\" or \"ip:port\"", s)
	}
	return ap, nil
}

// Nameservers returns the servers the resolver asks, in order.
func (r *DNSResolver) Nameservers() []netip.AddrPort {
	return append([]netip.AddrPort(nil), r.servers...)
}

// LookupFamily implements Resolver.
func (r *DNSResolver) LookupFamily(ctx context.Context, host string, family Family) ([]netip.Addr, error) {
	if family != IPv4 && family != IPv6 {
		return nil, &ResolveError{Host: host, Family: family, Code: EAI_FAMILY}
	}
	if addr, err := netip.ParseAddr(host); err == nil {
		if FamilyOf(addr) != family {
			return nil, &ResolveError{Host: host, Family: family, Code: EAI_ADDRFAMILY}
		}
		return []netip.Addr{addr}, nil
	}
	name := strings.ToLower(strings.TrimSuffix(host, "."))
	if _, ok := dns.IsDomainName(name); !ok || name == "" || strings.HasSuffix(host, "..") {
		return nil, &ResolveError{Host: host, Family: family, Code: EAI_NONAME}
	}
	if r.hosts != nil {
		if addrs := r.hosts.lookup(name, family); len(addrs) > 0 {
			return addrs, nil
		}
	}
	if name == "localhost" || strings.HasSuffix(name, ".localhost") {
		// RFC 6761 6.3: localhost is loopback and never asked of DNS.
		if family == IPv6 {
			return []netip.Addr{netip.IPv6Loopback()}, nil
		}
		return []netip.Addr{netip.AddrFrom4([4]byte{127, 0, 0, 1})}, nil
	}
	if r.addrConfig && !localFamilies.wants(family) {
		r.stats.skipped.Add(1)
		return nil, &ResolveError{Host: host, Family: family, Code: EAI_ADDRFAMILY, Err: errFamilyNotConfigured}
	}
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	qtype := dns.TypeA
	if family == IPv6 {
		qtype = dns.TypeAAAA
	}
	// Like res_search: try every candidate name; report NODATA if any
	// name exists, else a temporary failure if any server failed, else
	// NONAME.
	var noData, again bool
	var lastErr error
	for _, fqdn := range r.candidates(host) {
		addrs, code, err := r.query(ctx, fqdn, qtype)
		if ctxErr := ctx.Err(); ctxErr != nil {
			return nil, ctxErr
		}
		switch code {
		case 0:
			return addrs, nil
		case EAI_NODATA:
			noData = true
		case EAI_AGAIN:
			again, lastErr = true, err
		case EAI_FAIL:
			return nil, &ResolveError{Host: host, Family: family, Code: EAI_FAIL, Err: err}
		}
	}
	code := EAI_NONAME
	if noData {
		code = EAI_NODATA
	} else if again {
		code = EAI_AGAIN
	}
	return nil, &ResolveError{Host: host, Family: family, Code: code, Err: lastErr}
}

// candidates lists the names to ask, in resolv.conf(5)'s order: the name
// as given first when it has at least ndots dots, else after the search
// domains; a name ending in a dot is only ever asked as given.
func (r *DNSResolver) candidates(host string) []string {
	if strings.HasSuffix(host, ".") {
		return []string{host}
	}
	asIs := host + "."
	out := make([]string, 0, len(r.search)+1)
	dotted := strings.Count(host, ".") >= r.ndots
	if dotted {
		out = append(out, asIs)
	}
	for _, s := range r.search {
		out = append(out, host+"."+s+".")
	}
	if !dotted {
		out = append(out, asIs)
	}
	return out
}

// query asks the servers for one name and type. It returns the addresses,
// or 0 as code with addresses, or an EAI code.
func (r *DNSResolver) query(ctx context.Context, fqdn string, qtype uint16) ([]netip.Addr, int, error) {
	m := new(dns.Msg)
	m.SetQuestion(fqdn, qtype)
	m.SetEdns0(dnsUDPSize, false)
	first := 0
	if r.rotate {
		first = int(r.nextServer.Add(1))
	}
	var lastErr error
	for attempt := 0; attempt < r.attempts; attempt++ {
		for i := range r.servers {
			server := r.servers[(first+i)%len(r.servers)]
			m.Id = dns.Id()
			resp, err := r.exchange(ctx, m, server)
			if err == nil && resp.Rcode == dns.RcodeFormatError && m.IsEdns0() != nil {
				// An old server that does not know EDNS0: ask again
				// without it (a long answer then comes truncated,
				// and over TCP).
				m.Extra = nil
				m.Id = dns.Id()
				resp, err = r.exchange(ctx, m, server)
			}
			if err != nil {
				if ctx.Err() != nil {
					return nil, 0, ctx.Err()
				}
				lastErr = fmt.Errorf("%v: %w", server, err)
				continue
			}
			switch resp.Rcode {
			case dns.RcodeSuccess:
				addrs := answerAddrs(resp, qtype)
				if len(addrs) == 0 {
					return nil, EAI_NODATA, nil
				}
				return addrs, 0, nil
			case dns.RcodeNameError:
				return nil, EAI_NONAME, nil

			case dns.RcodeServerFailure, dns.RcodeRefused:
				// Another server may know better (glibc moves on too).
				lastErr = fmt.Errorf("%v answered %s", server, dns.RcodeToString[resp.Rcode])
			default:
				return nil, EAI_FAIL, fmt.Errorf("%v answered %s", server, dns.RcodeToString[resp.Rcode])
			}
		}
	}
	if lastErr == nil {
		lastErr = errors.New("no answer")
	}
	return nil, EAI_AGAIN, lastErr
}

// answerAddrs collects the records of qtype (a CNAME chain's targets come
// with their addresses in the same answer).
func answerAddrs(resp *dns.Msg, qtype uint16) []netip.Addr {
	var addrs []netip.Addr
	for _, rr := range resp.Answer {
		switch rr := rr.(type) {
		case *dns.A:
			if a, ok := netip.AddrFromSlice(rr.A.To4()); ok && qtype == dns.TypeA {
				addrs = appendUnique(addrs, a)
			}
		case *dns.AAAA:
			if a, ok := netip.AddrFromSlice(rr.AAAA.To16()); ok && qtype == dns.TypeAAAA {
				addrs = appendUnique(addrs, a)
			}
		}
	}
	return addrs
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
