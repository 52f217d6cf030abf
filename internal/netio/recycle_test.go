package netio

import (
	"context"
	"net"
	"net/netip"
	"testing"
	"time"

	"golang.org/x/sys/unix"

	"github.com/hev2/hev2/internal/race"
	"github.com/hev2/hev2/tests/loopbacktest"
)

type answerResolver struct{ addr netip.Addr }

func (a answerResolver) LookupFamily(_ context.Context, _ string, f race.Family) ([]netip.Addr, error) {
	if f == race.IPv4 {
		return []netip.Addr{a.addr}, nil
	}
	return nil, nil
}

// literalRace is a race to 127.0.0.1 and a loopback listener that accepts
// it (closed at the end of the test).
func literalRace(t *testing.T) race.MachineConfig {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { ln.Close() })
	port := uint16(ln.Addr().(*net.TCPAddr).Port)
	return race.MachineConfig{Host: "127.0.0.1", Port: port, Static: []netip.Addr{netip.MustParseAddr("127.0.0.1")}}
}

// Recycle takes back a decided race (won or failed) that nothing of the
// library holds: not one still running, not one whose lookups' deliveries
// hold it, not one a second waiter held.
func TestRecycleOnlyARaceNobodyElseHolds(t *testing.T) {
	literal := literalRace(t)
	port := literal.Port

	r := StartWaiter(literal, Params{}, nil)
	if r.Recycle() {
		t.Fatal("recycled a race before it was decided")
	}
	if !r.Drive(time.Now().Add(5 * time.Second)) {
		t.Fatal("undecided")
	}
	res, _ := r.Outcome()
	unix.Close(res.FD)
	if !r.Recycle() {
		t.Fatal("a won literal race nobody else holds was not recycled")
	}

	named := race.MachineConfig{Host: "name.test", Port: port, Queries: []race.QueryKind{race.QueryAAAA, race.QueryA}}
	r = StartWaiter(named, Params{Resolver: answerResolver{netip.MustParseAddr("127.0.0.1")}}, nil)
	if !r.Drive(time.Now().Add(5 * time.Second)) {
		t.Fatal("undecided")
	}
	res, err := r.Outcome()
	if err != nil {
		t.Fatal(err)
	}
	unix.Close(res.FD)
	if r.Recycle() {
		t.Fatal("recycled a race whose lookups' deliveries may still reach it")
	}

	// A failure is recycled too; a race a second thread waited for is not
	// (it made the race's done channel, which that thread may still hold).
	// (A port held bound and not listening: a closed listener's port
	// could be taken by another test in between.)
	closed := loopbacktest.Refusing(t, "127.0.0.1")
	refused := race.MachineConfig{Host: "127.0.0.1", Port: uint16(closed), Static: literal.Static}
	r = StartWaiter(refused, Params{}, func() {})
	r.Drive(time.Now().Add(5 * time.Second))
	if _, err := r.Outcome(); err == nil {
		t.Fatal("a closed port accepted")
	}
	if !r.Recycle() {
		t.Fatal("a refused race nobody else holds was not recycled")
	}
	r = StartWaiter(literal, Params{}, nil)
	r.waitForDriver(time.Now()) // as a second waiter would
	r.Drive(time.Now().Add(5 * time.Second))
	res, _ = r.Outcome()
	unix.Close(res.FD)
	if r.Recycle() {
		t.Fatal("recycled a race a second waiter held")
	}
}

// The library-driven race: a loopback connect settled as it started is
// recycled; one that went through the poller is not (a late callback of
// the poller could still reach it).
func TestRecycleEventedOnlyWhenNothingHoldsIt(t *testing.T) {
	literal := literalRace(t)

	outcome := make(chan *race.Result, 1)
	r := StartLibrary(literal, Params{}, func(res *race.Result, _ error) { outcome <- res })
	res := <-outcome
	unix.Close(res.FD)
	if !r.Recycle() {
		t.Fatal("a won loopback race nobody else holds was not recycled")
	}

	was := SetLoopbackLook(false) // through the poller
	defer SetLoopbackLook(was)
	r = StartLibrary(literal, Params{}, func(res *race.Result, _ error) { outcome <- res })
	res = <-outcome
	unix.Close(res.FD)
	if r.Recycle() {
		t.Fatal("recycled a race the poller held")
	}
}
