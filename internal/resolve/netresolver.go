package resolve

import (
	"context"
	"errors"
	"net"
	"net/netip"

	"github.com/hev2/hev2/internal/race"
)

// NetResolver resolves through Go's net.Resolver, one network ("ip6" or
// "ip4") per family, so each family answers on its own.
type NetResolver struct {
	// Resolver is the net.Resolver to use (nil: net.DefaultResolver).
	Resolver *net.Resolver
}

func (r NetResolver) LookupFamily(ctx context.Context, host string, family race.Family) ([]netip.Addr, error) {
	res := r.Resolver
	if res == nil {
		res = net.DefaultResolver
	}
	network := "ip4"
	if family == race.IPv6 {
		network = "ip6"
	}
	addrs, err := res.LookupNetIP(ctx, network, host)
	if err != nil {
		return nil, netResolveError(host, family, err)
	}
	if len(addrs) == 0 {
		return nil, &race.ResolveError{Host: host, Family: family, Code: race.EAI_NODATA}
	}
	return addrs, nil
}

// netResolveError maps a net.DNSError onto the getaddrinfo code a C caller
// would have seen.
func netResolveError(host string, family race.Family, err error) error {
	if errors.Is(err, context.Canceled) || errors.Is(err, context.DeadlineExceeded) {
		return err
	}
	code := race.EAI_FAIL
	var dnsErr *net.DNSError
	if errors.As(err, &dnsErr) {
		switch {
		case dnsErr.IsNotFound:
			code = race.EAI_NONAME
		case dnsErr.IsTimeout, dnsErr.IsTemporary:
			code = race.EAI_AGAIN
		}
	}
	var addrErr *net.AddrError
	if errors.As(err, &addrErr) {
		// "no suitable address found": the name has addresses, none of this family.
		code = race.EAI_NODATA
	}
	return &race.ResolveError{Host: host, Family: family, Code: code, Err: err}
}
