package engine

import (
	"context"
	"errors"
	"github.com/hev2/hev2/internal/race"
	"net"
	"net/netip"
	"syscall"
	"testing"
	"time"

	"golang.org/x/sys/unix"
)

// A real race with two families on loopback: ::1 refuses, 127.0.0.1
// listens. The report says IPv4 won because IPv6 failed, through both
// drivers that hand out a Result.
func TestReportOfLoopbackRace(t *testing.T) {
	port := uint16(v6RefusesV4Echoes(t))
	checkLeaks(t)
	d := Options{Record: true, Hosts: map[string][]netip.Addr{"dual.test": mustAddrs("127.0.0.1", "::1")}}
	check := func(t *testing.T, res *Result, err error) {
		t.Helper()
		if err != nil {
			t.Fatal(err)
		}
		defer unix.Close(res.FD)
		rep, err := res.Report()
		if err != nil {
			t.Fatal(err)
		}
		if !rep.Connected || rep.Winner != 1 || rep.Family != IPv4 || rep.Reason != race.ReasonOtherFamilyFailed ||
			rep.Resolving.Happened || rep.ResolutionDelay.Happened || !rep.Connecting.Happened ||
			rep.Connecting.End != rep.Elapsed || rep.Lookups[0].State != race.LookupNotAsked || rep.Lookups[1].Family != IPv4 {
			t.Fatalf("report %+v", rep)
		}
		if len(rep.Attempts) != 2 {
			t.Fatalf("attempts %+v", rep.Attempts)
		}
		v6, v4 := rep.Attempts[0], rep.Attempts[1]
		if v6.Addr.Addr() != netip.IPv6Loopback() || v6.Outcome != race.AttemptFailed || !errors.Is(v6.Err, syscall.ECONNREFUSED) ||
			v4.Outcome != race.AttemptConnected || v4.Start != v6.End || v4.End != rep.Elapsed {
			t.Fatalf("attempts %+v", rep.Attempts)
		}
	}
	t.Run("library", func(t *testing.T) {
		res, err := d.Connect(context.Background(), "dual.test", port)
		check(t, res, err)
	})
	t.Run("waiter", func(t *testing.T) {
		r, err := d.StartWaiter("dual.test", port, nil)
		if err != nil {
			t.Fatal(err)
		}
		r.Wait(time.Time{})
		res, err := r.Result()
		check(t, res, err)
	})
}

// A failed race carries its report in the *Error, also through
// DialContext's *net.OpError.
func TestReportOfLoopbackFailure(t *testing.T) {
	port := int(closedPort(t))
	checkLeaks(t)
	d := Options{Record: true}
	_, err := d.DialContext(context.Background(), "tcp", net.JoinHostPort("127.0.0.1", itoa(port)))
	var he *Error
	if !errors.As(err, &he) {
		t.Fatalf("err %v", err)
	}
	rep, err := he.Report()
	if err != nil {
		t.Fatal(err)
	}
	if rep.Connected || rep.Reason != race.ReasonNone || rep.Failure != race.OutcomeConnect || len(rep.Attempts) != 1 ||
		rep.Attempts[0].Outcome != race.AttemptFailed || !errors.Is(rep.Attempts[0].Err, syscall.ECONNREFUSED) {
		t.Fatalf("report %+v", rep)
	}
}

// Without Record nothing is kept, and the report says so.
func TestReportNeedsRecord(t *testing.T) {
	ln := echoListener(t, "127.0.0.1:0")
	var d Options
	res, err := d.Connect(context.Background(), "127.0.0.1", uint16(portOf(ln)))
	if err != nil {
		t.Fatal(err)
	}
	unix.Close(res.FD)
	if _, err := res.Report(); res.Trace != nil || !errors.Is(err, race.ErrNoTrace) {
		t.Fatalf("trace %v, report error %v", res.Trace, err)
	}
}
