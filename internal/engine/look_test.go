package engine

import (
	"errors"
	"net/netip"
	"sync"
	"sync/atomic"
	"syscall"
	"testing"

	"golang.org/x/sys/unix"

	"github.com/hev2/hev2/internal/netio"
)

// LibraryRace.Look decides on the caller's goroutine what the shared poller
// would report a moment later: the two must never both deliver an attempt's
// outcome. Many races at once, each looked at from several goroutines while
// the poller serves them too: every race ends exactly once, with a
// working connection (or the refusal of the closed port), and nothing is
// left behind.
//
// A loopback connect is normally settled as it starts (netio's look at a
// loopback connect), before Look or the poller see it: that is turned off
// here, so that the attempts are registered with the poller as any
// other destination's are.
func TestLookRacesThePollerWithoutDoubleDelivery(t *testing.T) {
	checkLeaks(t)
	defer netio.SetLoopbackLook(netio.SetLoopbackLook(false))
	ln := echoListener(t, "127.0.0.1:0")
	port := uint16(portOf(ln))
	refused := closedPort(t)

	const races = 300
	var (
		wg      sync.WaitGroup
		calls   [races]atomic.Int32
		results [races]*Result
		errs    [races]error
	)
	d := &Options{DisableHistory: true}
	decidedByLook := 0
	for i := 0; i < races; i++ {
		p := port
		if i%3 == 0 {
			p = refused // a refusal arrives with POLLERR: SO_ERROR is read
		}
		wg.Add(1)
		i := i
		pending, err := d.StartLibrary("127.0.0.1", p, func(res *Result, err error) {
			if calls[i].Add(1) == 1 {
				results[i], errs[i] = res, err
				wg.Done()
			}
		})
		if err != nil {
			t.Fatal(err)
		}
		var lookers sync.WaitGroup
		for g := 0; g < 3; g++ {
			lookers.Add(1)
			go func() {
				defer lookers.Done()
				pending.Look()
			}()
		}
		if pending.Look() {
			decidedByLook++
		}
		lookers.Wait()
	}
	wg.Wait()
	// Loopback: connect(2) finishes the handshake, so the first look
	// nearly always decides; the rest went through the poller.
	t.Logf("%d of %d races decided by the time the caller's Look returned", decidedByLook, races)
	if decidedByLook == 0 {
		t.Fatal("no race was decided by Look: the path under test never ran")
	}
	for i := 0; i < races; i++ {
		if n := calls[i].Load(); n != 1 {
			t.Fatalf("race %d: onDone called %d times", i, n)
		}
		if i%3 == 0 {
			if !errors.Is(errs[i], syscall.ECONNREFUSED) {
				t.Fatalf("race %d to a closed port: %v", i, errs[i])
			}
			continue
		}
		if errs[i] != nil {
			t.Fatalf("race %d: %v", i, errs[i])
		}
		if results[i].Addr != netip.AddrPortFrom(netip.MustParseAddr("127.0.0.1"), port) {
			t.Fatalf("race %d won %v", i, results[i].Addr)
		}
		roundTrip(t, results[i].FD)
		unix.Close(results[i].FD)
	}
}

// A loopback connect is settled as it starts: StartLibrary returns with
// the race decided (onDone already called, on this goroutine), without the
// shared poller; a refusal likewise.
func TestLoopbackConnectIsSettledAsItStarts(t *testing.T) {
	checkLeaks(t)
	ln := echoListener(t, "127.0.0.1:0")
	d := &Options{DisableHistory: true}
	for _, tc := range []struct {
		port    uint16
		refused bool
	}{{uint16(portOf(ln)), false}, {closedPort(t), true}} {
		var calls int
		var res *Result
		var err error
		if _, serr := d.StartLibrary("127.0.0.1", tc.port, func(r *Result, e error) { calls, res, err = calls+1, r, e }); serr != nil {
			t.Fatal(serr)
		}
		if calls != 1 {
			t.Fatalf("port %d: onDone called %d times by the time StartLibrary returned", tc.port, calls)
		}
		if tc.refused {
			if !errors.Is(err, syscall.ECONNREFUSED) {
				t.Fatalf("closed port: %v", err)
			}
			continue
		}
		if err != nil {
			t.Fatal(err)
		}
		roundTrip(t, res.FD)
		unix.Close(res.FD)
	}
}
