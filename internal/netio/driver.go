package netio

import (
	"context"
	"net/netip"

	"github.com/hev2/hev2/internal/race"
)

// Resolver is what a driver asks of a resolver; core.Resolver is the same
// interface.
type Resolver interface {
	LookupFamily(ctx context.Context, host string, family race.Family) ([]netip.Addr, error)
}

// Params are a connection's inputs besides the machine's configuration.
type Params struct {
	Resolver Resolver
	// Local is bound before connecting when its address is valid or its
	// port is not 0.
	Local  netip.AddrPort
	Socket SocketOptions
	// AwaitPrefix64 is set when the race waits for this network's NAT64
	// discovery (race.NAT64Config.Pending): it calls deliver once with the
	// discovery's outcome, on a goroutine of its own (never inside the
	// call), unless the returned func is called first.
	AwaitPrefix64 func(deliver func(prefixes []netip.Prefix, err error)) (cancel func())
}
