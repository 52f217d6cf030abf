package netio

import (
	"net/netip"
	"time"

	"github.com/hev2/hev2/internal/race"
)

// A driver is one way of waiting for a race, named by who drives it (as
// hev2_options.drive names it): the waiter's thread (WaiterDriven), the
// library's shared poller (LibraryDriven) or Go's netpoller
// (netpollerDriven). The machine
// decides what happens; perform reads its actions, once for all drivers,
// and each driver supplies only what its way of waiting needs: how an
// attempt is started and closed, how a lookup's answer and the NAT64
// discovery's outcome come back to it, and how it keeps its timer. The
// cancels come with waits, which every driver embeds.
type driver interface {
	startLookup(q race.QueryKind)
	cancelLookup(q race.QueryKind)
	startServiceLookup(q race.QueryKind, n uint8)
	cancelServiceLookup(n uint8)
	startAttempt(id int, addr netip.AddrPort)
	closeAttempt(id int)
	armTimer(at time.Duration)
	awaitPrefix64()
	cancelPrefix()
}

// perform carries out acts in order. It stops at the action that decides
// the race and returns it (decided true); the driver then hands over the
// winner or reports the error, its own way.
func perform(d driver, acts []race.Action) (done race.Action, decided bool) {
	for _, a := range acts {
		switch a.Kind {
		case race.ActionStartLookup:
			if a.Lookup > 0 {
				d.startServiceLookup(a.Query, a.Lookup)
			} else {
				d.startLookup(a.Query)
			}
		case race.ActionCancelLookup:
			if a.Lookup > 0 {
				d.cancelServiceLookup(a.Lookup)
			} else {
				d.cancelLookup(a.Query)
			}
		case race.ActionStartAttempt:
			d.startAttempt(a.Attempt, a.Addr)
		case race.ActionCloseAttempt:
			d.closeAttempt(a.Attempt)
		case race.ActionArmTimer:
			d.armTimer(a.At)
		case race.ActionAwaitPrefix64:
			d.awaitPrefix64()
		case race.ActionCancelPrefix64:
			d.cancelPrefix()
		case race.ActionDone:
			return a, true
		}
	}
	return race.Action{}, false
}

// waits holds what a race waits for from other goroutines: its lookups
// and the NAT64 discovery, each with the func that stops its delivery.
type waits struct {
	lookups [race.NumQueryKinds]func() // by QueryKind.Index
	// prefixCancel stops the delivery of the NAT64 discovery's outcome.
	prefixCancel func()
	// services are the lookups of the HTTPS part (race.Action.Lookup),
	// made only by a race with MachineConfig.HTTPS.
	services map[uint8]func()
}

func (w *waits) cancelServiceLookup(n uint8) {
	if cancel := w.services[n]; cancel != nil {
		cancel()
		delete(w.services, n)
	}
}

// addServiceLookup keeps the cancel of service lookup n.
func (w *waits) addServiceLookup(n uint8, cancel func()) {
	if w.services == nil {
		w.services = make(map[uint8]func())
	}
	w.services[n] = cancel
}

func (w *waits) cancelLookup(q race.QueryKind) {
	if cancel := w.lookups[q.Index()]; cancel != nil {
		cancel()
	}
}

func (w *waits) cancelPrefix() {
	if w.prefixCancel != nil {
		w.prefixCancel()
		w.prefixCancel = nil
	}
}

// cancelAll stops every delivery still awaited (a decided race).
func (w *waits) cancelAll() {
	cancelLookups(w.lookups[:])
	for n := range w.services {
		w.cancelServiceLookup(n)
	}
	w.cancelPrefix()
}
