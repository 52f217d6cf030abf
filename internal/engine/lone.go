package engine

import (
	"net/netip"

	"github.com/hev2/hev2/internal/netio"
	"github.com/hev2/hev2/internal/resolve"
)

// A connect to an IP literal is a race of one address, and its machine's
// first action, at once and always, is that address's connect: nothing is
// looked up, sorted or waited for. ConnectNow therefore makes that connect
// before it makes the race (netio.TryLone), and a connect finished at its
// first look (loopback, a LAN) is then won without any race at all: no
// machine, no race memory, no clock reading. That is the common case of
// the one-call C entry, and the race's code, met by caches the kernel's
// connect has just filled, was most of what a connect cost above a plain
// one (docs/decisions.md). A connect not won at once becomes the first
// attempt of an ordinary race (netio.StartWaiterWith), whose machine decides
// everything else exactly as before: a refusal, a timeout, a cancel.

// loneLiteral is the address of a connect that is a race of one attempt to
// it, started at once: host is an IP literal without a zone, the port is
// not 0, the Dialer is valid and binds no local address, wants no other
// family, has no step watched (Trace, Record) and no NAT64 synthesis could
// change the address. Anything else goes the ordinary way, which also
// gives the errors.
func (o *Options) loneLiteral(host string, port uint16) (netip.AddrPort, bool) {
	if port == 0 || o.Trace != nil || o.Record || o.LocalAddr.IsValid() || o.LocalPort != 0 {
		return netip.AddrPort{}, false
	}
	host, err := checkHost(host)
	if err != nil {
		return netip.AddrPort{}, false
	}
	lit, err := netip.ParseAddr(host)
	if err != nil || lit.Zone() != "" {
		return netip.AddrPort{}, false
	}
	if want := o.wantedFamily(); want != FamilyUnspec && FamilyOf(lit) != want {
		return netip.AddrPort{}, false
	}
	if !o.DisableNAT64 && resolve.NAT64Applies() {
		return netip.AddrPort{}, false
	}
	if o.Validate() != nil {
		return netip.AddrPort{}, false
	}
	return netip.AddrPortFrom(lit, port), true
}

// startWaiterWith is startWaiter for a race whose first attempt was made
// already (netio.TryLone). The network may have changed in between so that
// NAT64 now applies (the machine would then connect to a synthesized
// address, not the literal): that attempt is then closed and the race
// starts as any other, from its first connect.
func (o *Options) startWaiterWith(host string, port uint16, first *netio.FirstAttempt) (*netio.WaiterDriven, error) {
	cfg, err := o.raceConfig(host, port)
	if err != nil {
		first.Close()
		return nil, err
	}
	p := o.params(&cfg)
	if cfg.NAT64 != nil {
		first.Close()
		return netio.StartWaiter(cfg, p, nil), nil
	}
	return netio.StartWaiterWith(cfg, p, first, nil), nil
}
