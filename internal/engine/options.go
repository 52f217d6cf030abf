package engine

import (
	"math/rand/v2"
	"net/netip"
	"time"

	"github.com/hev2/hev2/internal/race"
	"github.com/hev2/hev2/internal/render"
	"github.com/hev2/hev2/internal/resolve"
)

// Options are a connection's options: core.Dialer's fields, in the same
// order and of the same types, so that core hands the engine its Dialer by
// a pointer conversion ((*Options)(d): no copy, and the compiler refuses
// the conversion the moment the two lists differ). Each field's meaning
// and default is documented once, on core.Dialer; capi fills Options from
// the C header's hev2_options.
type Options struct {
	ResolutionDelay         time.Duration
	ConnectionAttemptDelay  time.Duration
	FirstAddressFamilyCount int
	ResolvTimeout           time.Duration
	ConnectTimeout          time.Duration
	OpenTimeout             time.Duration
	DisableFastFallback     bool
	Family                  Family
	LocalAddr               netip.Addr
	LocalPort               uint16
	Resolver                Resolver
	Hosts                   map[string][]netip.Addr
	NoDelay                 bool
	KeepAlive               time.Duration
	BlockingFD              bool
	DisableNAT64            bool
	DisableHistory          bool
	HistoryLifetime         time.Duration
	Trace                   func(TraceEvent)
	Record                  bool
	HTTPSRR                 bool
	ALPN                    []string
	ECH                     bool
	ECHWait                 time.Duration
}

// DefaultResolver answers for Options whose Resolver is nil. core points it
// at its own DefaultResolver variable; the engine alone uses the system
// resolver.
var DefaultResolver = func() Resolver { return resolve.DefaultSystemResolver }

func (o *Options) resolutionDelay() time.Duration {
	if o.ResolutionDelay == 0 {
		return DefaultResolutionDelay
	}
	return o.ResolutionDelay
}

func (o *Options) attemptDelay() time.Duration {
	switch v := o.ConnectionAttemptDelay; {
	case v == 0:
		return DefaultConnectionAttemptDelay
	case v < MinConnectionAttemptDelay:
		return MinConnectionAttemptDelay
	case v > MaxConnectionAttemptDelay:
		return MaxConnectionAttemptDelay
	default:
		return v
	}
}

func (o *Options) firstFamilyCount() int {
	if o.FirstAddressFamilyCount == 0 {
		return DefaultFirstAddressFamilyCount
	}
	return o.FirstAddressFamilyCount
}

func (o *Options) resolver() Resolver {
	if o.Resolver == nil {
		return DefaultResolver()
	}
	return o.Resolver
}

// wantedFamily is the family restriction after the local address is taken
// into account.
func (o *Options) wantedFamily() Family {
	if o.Family != FamilyUnspec {
		return o.Family
	}
	if o.LocalAddr.IsValid() {
		return FamilyOf(o.LocalAddr)
	}
	return FamilyUnspec
}

// TraceMeta describes a race with these options to host:port for the trace
// files (the delays it runs with, after defaults and clamping).
func (o *Options) TraceMeta(host string, port uint16) render.Meta {
	return render.Meta{Host: host, Port: port, ResolutionDelay: o.resolutionDelay(),
		ConnectionAttemptDelay: o.attemptDelay(), FirstAddressFamilyCount: o.firstFamilyCount()}
}

// DefaultALPN is what a caller's TLS offers when ALPN is not set.
var DefaultALPN = []string{"h2", "http/1.1"}

// DefaultECHWait bounds the wait for the HTTPS answer, with ECH, once the
// addresses are in (Options.ECHWait 0).
const DefaultECHWait = 5 * time.Second

// httpsConfig is a race's HTTPS part (race.HTTPSConfig): a fresh one per
// race, which the machine keeps its state in.
func (o *Options) httpsConfig(host string, port uint16) *race.HTTPSConfig {
	c := &race.HTTPSConfig{
		Name:    race.QueryName(host, port),
		ALPN:    o.ALPN,
		ECH:     o.ECH,
		ECHWait: o.ECHWait,
		Seed:    rand.Uint64(),
	}
	if c.ALPN == nil {
		c.ALPN = DefaultALPN
	}
	if c.ECH && c.ECHWait == 0 {
		c.ECHWait = DefaultECHWait
	}
	return c
}
