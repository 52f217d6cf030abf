package netio

import (
	"context"
	"net"
	"net/netip"
	"testing"
	"time"

	"golang.org/x/sys/unix"

	"github.com/hev2/hev2/core/internal/race"
)

type answerResolver struct{ addr netip.Addr }

func (a answerResolver) LookupFamily(_ context.Context, _ string, f race.Family) ([]netip.Addr, error) {
	if f == race.IPv4 {
		return []netip.Addr{a.addr}, nil
	}
	return nil, nil
}

// Recycle takes back only a won race that nobody else can reach: not one
// whose lookups' deliveries hold it, not one still running, not one with
// an onDone.
func TestRecycleOnlyARaceNobodyElseHolds(t *testing.T) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer ln.Close()
	port := uint16(ln.Addr().(*net.TCPAddr).Port)
	literal := race.MachineConfig{Host: "127.0.0.1", Port: port, Static: []netip.Addr{netip.MustParseAddr("127.0.0.1")}}

	r := Start(literal, Params{}, nil)
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

	named := race.MachineConfig{Host: "name.test", Port: port, Families: []race.Family{race.IPv6, race.IPv4}}
	r = Start(named, Params{Resolver: answerResolver{netip.MustParseAddr("127.0.0.1")}}, nil)
	if !r.Drive(time.Now().Add(5 * time.Second)) {
		t.Fatal("undecided")
	}
	res, err = r.Outcome()
	if err != nil {
		t.Fatal(err)
	}
	unix.Close(res.FD)
	if r.Recycle() {
		t.Fatal("recycled a race whose lookups' deliveries may still reach it")
	}

	r = Start(literal, Params{}, func() {})
	r.Drive(time.Now().Add(5 * time.Second))
	res, _ = r.Outcome()
	unix.Close(res.FD)
	if r.Recycle() {
		t.Fatal("recycled a race with an onDone")
	}
}
