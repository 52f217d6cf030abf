package engine

import (
	"context"
	"net"
	"net/netip"
	"strconv"
	"strings"

	"github.com/hev2/hev2/internal/netio"
	"github.com/hev2/hev2/internal/race"
	"github.com/hev2/hev2/internal/resolve"
)

// Connect is core.Dialer.Connect: it races a TCP connection to host:port and returns the winning
// socket's fd with the full account of the race. host is a name or an IP
// literal (brackets and an IPv6 zone allowed). On failure the error is an
// *Error, or an *InputError before anything started, and every socket has
// been closed.
func (o *Options) Connect(ctx context.Context, host string, port uint16) (*Result, error) {
	cfg, err := o.raceConfig(host, port)
	if err != nil {
		return nil, err
	}
	if err := context.Cause(ctx); err != nil {
		// Already canceled: not a single syscall.
		return nil, &Error{Host: cfg.Host, Port: port, Outcome: OutcomeCanceled, Cause: err, Canceled: err}
	}
	return netio.Dial(ctx, cfg, o.params(&cfg))
}

// raceConfig validates a connection's inputs and turns them into the race
// machine's configuration. An IP literal or a static entry becomes the
// complete address list (no lookup, no timer).
func (o *Options) raceConfig(host string, port uint16) (race.MachineConfig, error) {
	if err := o.Validate(); err != nil {
		return race.MachineConfig{}, err
	}
	host, err := checkHost(host)
	if err != nil {
		return race.MachineConfig{}, err
	}
	if port == 0 {
		return race.MachineConfig{}, invalidPort("0 cannot be connected to")
	}
	cfg := race.MachineConfig{
		Host:                    host,
		Port:                    port,
		ResolutionDelay:         o.resolutionDelay(),
		ConnectionAttemptDelay:  o.attemptDelay(),
		FirstAddressFamilyCount: o.firstFamilyCount(),
		ResolvTimeout:           o.ResolvTimeout,
		ConnectTimeout:          o.ConnectTimeout,
		OpenTimeout:             o.OpenTimeout,
		Serial:                  o.DisableFastFallback,
		Trace:                   o.Trace,
	}
	if o.Record {
		cfg.Record = &race.Trace{}
	}
	want := o.wantedFamily()
	if lit, err := netip.ParseAddr(host); err == nil {
		if want != FamilyUnspec && FamilyOf(lit) != want {
			return cfg, noStaticAddress(host, port, want, EAI_ADDRFAMILY)
		}
		cfg.Literal = lit
	} else if static, ok := o.Hosts[host]; ok {
		cfg.Static = filterFamily(static, want)
		if len(cfg.Static) == 0 {
			// A static entry with no address has no data; one with
			// addresses of the other family only is a family mismatch.
			code := EAI_NODATA
			if len(static) > 0 {
				code = EAI_ADDRFAMILY
			}
			return cfg, noStaticAddress(host, port, want, code)
		}
	} else if want == FamilyUnspec {
		cfg.Queries = race.AddressQueries[:]
	} else {
		cfg.Queries = []race.QueryKind{race.QueryFor(want)}
	}
	o.applyHistory(&cfg)
	if o.HTTPSRR && cfg.Static == nil && !cfg.Literal.IsValid() && !resolve.InHostsFile(host) {
		cfg.HTTPS = o.httpsConfig(host, port)
	}
	return cfg, nil
}

// params are what the drivers need of the Dialer besides the race's
// configuration; on an IPv6-only host it also gives cfg this network's
// NAT64 state (see nat64.go).
func (o *Options) params(cfg *race.MachineConfig) netio.Params {
	p := netio.Params{
		Resolver: o.resolver(),
		Socket:   o.socketOptions(),
	}
	if o.LocalAddr.IsValid() || o.LocalPort != 0 {
		p.Local = netip.AddrPortFrom(o.LocalAddr, o.LocalPort)
	}
	if !o.DisableNAT64 && resolve.NAT64Applies() {
		o.attachNAT64(cfg, &p)
	}
	return p
}

// socketOptions are what the winner's socket gets before it is handed over.
func (o *Options) socketOptions() netio.SocketOptions {
	return netio.SocketOptions{NoDelay: o.NoDelay, KeepAlive: o.KeepAlive, Blocking: o.BlockingFD}
}

// noStaticAddress is the outcome of a race whose literal or static entry
// has no address of the wanted family (code EAI_ADDRFAMILY), or none at
// all (EAI_NODATA): decided before any I/O, as a resolver would answer.
func noStaticAddress(host string, port uint16, want Family, code int) *Error {
	return &Error{Host: host, Port: port, Outcome: OutcomeResolve, Cause: &ResolveError{Host: host, Family: want, Code: code}}
}

func filterFamily(addrs []netip.Addr, f Family) []netip.Addr {
	if f == FamilyUnspec {
		return addrs
	}
	var out []netip.Addr
	for _, a := range addrs {
		if FamilyOf(a) == f {
			out = append(out, a)
		}
	}
	return out
}

// ParsePort accepts a port number (1-65535) or a TCP service name from the
// services database; anything else is an *InputError of kind InputPort.
// It keeps nothing of service once it returns (the C ABI hands it a view
// of the caller's memory, not a copy).
func ParsePort(service string) (uint16, error) {
	if service == "" {
		return 0, invalidPort("empty")
	}
	if n, err := strconv.ParseUint(service, 10, 16); err == nil {
		if n == 0 {
			return 0, invalidPort("0 cannot be connected to")
		}
		return uint16(n), nil
	}
	if strings.IndexByte(service, 0) >= 0 || len(service) > 64 {
		return 0, invalidPort("malformed %q", service)
	}
	n, err := net.LookupPort("tcp", service)
	if err != nil || n <= 0 || n > 65535 {
		return 0, invalidPort("%q is neither a port number (1-65535) nor a known TCP service", service)
	}
	return uint16(n), nil
}

// DialConn is core.Dialer.DialContext (see there), with the race's account
// if asked for (its FD is -1: the connection owns the socket).
func (o *Options) DialConn(ctx context.Context, network, address string, account bool) (*net.TCPConn, *Result, error) {
	oo := *o
	switch network {
	case "tcp":
	case "tcp4", "tcp6":
		f := IPv4
		if network == "tcp6" {
			f = IPv6
		}
		if oo.Family != FamilyUnspec && oo.Family != f {
			return nil, nil, &net.OpError{Op: "dial", Net: network, Err: invalidOption("family", "%v conflicts with network %s", oo.Family, network)}
		}
		oo.Family = f
	default:
		return nil, nil, &net.OpError{Op: "dial", Net: network, Err: net.UnknownNetworkError(network)}
	}
	host, service, err := net.SplitHostPort(address)
	if err != nil {
		return nil, nil, &net.OpError{Op: "dial", Net: network, Err: err}
	}
	port, err := ParsePort(service)
	if err != nil {
		return nil, nil, &net.OpError{Op: "dial", Net: network, Err: err}
	}
	cfg, err := oo.raceConfig(host, port)
	if err != nil {
		return nil, nil, &net.OpError{Op: "dial", Net: network, Err: err}
	}
	if err := context.Cause(ctx); err != nil {
		// Already canceled: not a single syscall.
		return nil, nil, &net.OpError{Op: "dial", Net: network, Err: &Error{Host: cfg.Host, Port: port, Outcome: OutcomeCanceled, Cause: err, Canceled: err}}
	}
	c, res, err := netio.DialConn(ctx, cfg, oo.params(&cfg), account)
	if err != nil {
		return nil, nil, &net.OpError{Op: "dial", Net: network, Err: err}
	}
	return c, res, nil
}
