package resolve

import (
	"context"
	"errors"
	"fmt"
	"net/netip"
	"strings"

	"golang.org/x/net/dns/dnsmessage"

	"github.com/hev2/hev2/internal/race"
)

// HTTPSResolver is a resolver that also asks a name's HTTPS records (RFC
// 9460, type 65), the lookup Happy Eyeballs v3 adds beside A and AAAA.
// DNSResolver and SystemResolver both are; the race's drivers assert it on
// their resolver and ask HTTPS only of one that is.
//
// LookupHTTPS asks for name's HTTPS RRset, name taken as given: fully
// qualified, never expanded with the search list (the name is an origin's
// host, and an HTTPS record found under a search domain would describe
// another service). Its failures are *race.ResolveError with the codes an
// address lookup gives (Family FamilyUnspec): EAI_NONAME for NXDOMAIN,
// EAI_NODATA for a name without HTTPS records, EAI_AGAIN when every server
// failed (SERVFAIL, REFUSED, a malformed message) or was silent (then its
// Err has Timeout() true), EAI_FAIL for another RCODE or a CNAME loop; a
// canceled ctx returns ctx's error. A malformed record is no failure: it
// is dropped and counted in Malformed, and never sends the query on to
// another server. An answer whose every record was malformed is no error
// either: it comes with Malformed set and nothing else, and means to a
// client what NODATA means.
//
// A name the hosts file lists, and localhost (RFC 6761), get EAI_NODATA
// without a query: their addresses are set on this host, and an HTTPS
// record's alias or address hints must not take the race elsewhere. An
// address literal has no HTTPS records to ask for: EAI_NONAME.
type HTTPSResolver interface {
	LookupHTTPS(ctx context.Context, name string) (*race.ServiceAnswer, error)
}

var (
	_ HTTPSResolver = (*DNSResolver)(nil)
	_ HTTPSResolver = (*SystemResolver)(nil)
)

var (
	errHTTPSLiteral = errors.New("an address literal has no HTTPS records")
	errHTTPSPinned  = errors.New("the hosts file lists the name: its HTTPS records are not asked")
	errHTTPSLocal   = errors.New("localhost is never asked of DNS (RFC 6761)")
)

// LookupHTTPS implements HTTPSResolver: one HTTPS query, through the same
// servers, transports, timeouts and attempts as LookupFamily's queries.
func (r *DNSResolver) LookupHTTPS(ctx context.Context, name string) (*race.ServiceAnswer, error) {
	if err := httpsPrecheck(name); err != nil {
		return nil, err
	}
	if r.hosts != nil && r.hosts.lists(name) {
		return nil, httpsError(name, race.EAI_NODATA, errHTTPSPinned)
	}
	return r.lookupHTTPS(ctx, name)
}

// lookupHTTPS asks the servers for name's HTTPS RRset (name checked).
func (r *DNSResolver) lookupHTTPS(ctx context.Context, name string) (*race.ServiceAnswer, error) {
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	fqdn := strings.TrimSuffix(name, ".") + "."
	resp, server, code, err := r.ask(ctx, r.settings(), fqdn, dnsmessage.TypeHTTPS)
	if ctxErr := ctx.Err(); ctxErr != nil {
		return nil, ctxErr
	}
	if resp == nil {
		return nil, httpsError(name, code, err)
	}
	ans, err := serviceAnswer(resp, fqdn)
	if err != nil {
		return nil, httpsError(name, race.EAI_FAIL, fmt.Errorf("%v: %w", server, err))
	}
	if ans.Alias == "" && len(ans.Records) == 0 && ans.Malformed == 0 {
		return nil, httpsError(name, race.EAI_NODATA, nil)
	}
	return ans, nil
}

// httpsPrecheck answers what needs no query: a name that cannot be one
// (EAI_NONAME, as LookupFamily), an address literal, and localhost.
func httpsPrecheck(name string) error {
	if _, err := netip.ParseAddr(name); err == nil {
		return httpsError(name, race.EAI_NONAME, errHTTPSLiteral)
	}
	lower := strings.ToLower(strings.TrimSuffix(name, "."))
	if !validHostname(lower) || strings.HasSuffix(name, "..") {
		return httpsError(name, race.EAI_NONAME, nil)
	}
	if lower == "localhost" || strings.HasSuffix(lower, ".localhost") {
		return httpsError(name, race.EAI_NODATA, errHTTPSLocal)
	}
	return nil
}

func httpsError(name string, code int, err error) error {
	return &race.ResolveError{Host: name, Family: race.FamilyUnspec, Code: code, Err: err}
}

// LookupHTTPS implements HTTPSResolver. getaddrinfo has no HTTPS records to
// give, so the system resolver keeps A and AAAA on getaddrinfo and asks
// HTTPS of resolv.conf's servers through the built-in DNS client, the one
// it hands address lookups over to (handOverResolver: made once, from the
// files getaddrinfo reads), as curl pairs c-ares with its threaded
// resolver. Unlike a hand-over, this does not depend on resolv.conf's
// options or glibc's variables being modelled: they change getaddrinfo's
// address answers, and there is no getaddrinfo answer to match here.
func (r *SystemResolver) LookupHTTPS(ctx context.Context, name string) (*race.ServiceAnswer, error) {
	if name == "" || strings.IndexByte(name, 0) >= 0 {
		return nil, httpsError(name, race.EAI_NONAME, nil)
	}
	if err := httpsPrecheck(name); err != nil {
		return nil, err
	}
	if systemHostsFiles.lists(name) {
		return nil, httpsError(name, race.EAI_NODATA, errHTTPSPinned)
	}
	dns, err := handOverResolverErr()
	if dns == nil {
		// No client (no name server in resolv.conf); the next lookup
		// tries again, a second later.
		return nil, httpsError(name, race.EAI_AGAIN, err)
	}
	r.stats.httpsLookups.Add(1)
	return dns.lookupHTTPS(ctx, name)
}
