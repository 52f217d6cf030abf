package engine

import (
	"context"
	"errors"
	"net/netip"
	"sync"
	"sync/atomic"
	"syscall"
	"testing"
	"time"

	"golang.org/x/sys/unix"
)

// peerPortOf is the port fd is connected to, -1 if none (usable from any
// goroutine).
func peerPortOf(fd int) int {
	sa, err := unix.Getpeername(fd)
	switch a := sa.(type) {
	case *unix.SockaddrInet4:
		if err == nil {
			return a.Port
		}
	case *unix.SockaddrInet6:
		if err == nil {
			return a.Port
		}
	}
	return -1
}

// peerPort is peerPortOf for the test's own goroutine.
func peerPort(t *testing.T, fd int) int {
	t.Helper()
	port := peerPortOf(fd)
	if port < 0 {
		t.Fatalf("fd %d is not connected", fd)
	}
	return port
}

// A loopback connect is won by ConnectNow's one look: an fd, no race. A
// literal's connect needs no race for that (lone.go); one whose steps are
// watched (Trace) is a race, whose memory is reused connect after connect.
// Both, from several goroutines at once: every fd must still be the one
// its own connect made (connected to the listener that connect asked for,
// and working). (Not a local address to force the race: the TIME_WAIT of
// explicitly bound loopback connects would hold ports that other tests'
// listeners bind.) The kernel finishes a loopback handshake inside
// connect(2) unless its softirq work is pushed to ksoftirqd (a machine
// flooded with packets): such a connect is waited for and checked the
// same way, and each target must still be won at once at least once.
func TestConnectNowWinsAtOnceAndReusesItsRace(t *testing.T) {
	lnA, lnB := echoListener(t, "127.0.0.1:0"), echoListener(t, "[::1]:0")
	checkLeaks(t)
	var lone Options
	raced := Options{Trace: func(TraceEvent) {}}
	targets := []struct {
		d    *Options
		host string
		port int
	}{{&lone, "127.0.0.1", portOf(lnA)}, {&raced, "::1", portOf(lnB)}, {&lone, "::1", portOf(lnB)}, {&raced, "127.0.0.1", portOf(lnA)}}
	var d Options
	var wg sync.WaitGroup
	var atOnce [4]atomic.Int32
	errs := make(chan error, 8)
	for g := range 8 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := range 60 {
				k := (g + i) % len(targets)
				tg := targets[k]
				fd, r, err := tg.d.ConnectNow(tg.host, uint16(tg.port))
				switch {
				case err != nil:
					errs <- err
					return
				case r != nil:
					if fd != -1 || !r.Wait(time.Now().Add(5*time.Second)) {
						errs <- errors.New("a connect not won at once was not decided")
						return
					}
					res, err := r.Result()
					if err != nil {
						errs <- err
						return
					}
					fd = res.FD
				case fd < 0:
					errs <- errors.New("no fd and no race")
					return
				default:
					atOnce[k].Add(1)
				}
				port := peerPortOf(fd)
				unix.Close(fd)
				if port != tg.port {
					errs <- errors.New("a connect handed over another connect's socket")
					return
				}
			}
		}()
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		t.Fatal(err)
	}
	for k, tg := range targets {
		if n := atOnce[k].Load(); n == 0 {
			t.Errorf("no connect to %s (traced %v) was won at once", tg.host, tg.d.Trace != nil)
		} else if n < 120 {
			t.Logf("%s (traced %v): %d of 120 connects won at once", tg.host, tg.d.Trace != nil, n)
		}
	}
	fd, r, err := d.ConnectNow("127.0.0.1", uint16(portOf(lnA)))
	if err == nil && r != nil && r.Wait(time.Now().Add(5*time.Second)) {
		var res *Result
		if res, err = r.Result(); err == nil {
			fd, r = res.FD, nil
		}
	}
	if err != nil || r != nil {
		t.Fatalf("fd %d race %v err %v", fd, r, err)
	}
	defer unix.Close(fd)
	if peerPort(t, fd) != portOf(lnA) {
		t.Fatal("wrong peer")
	}
	roundTrip(t, fd)
}

// A connect that is not decided by the look comes back as the running
// race; onDone set afterwards is called once when it ends.
func TestConnectNowHandsBackAnUndecidedRace(t *testing.T) {
	port := synDropListener(t, "127.0.0.1")
	checkLeaks(t)
	var d Options
	fd, r, err := d.ConnectNow("127.0.0.1", uint16(port))
	if err != nil || fd != -1 || r == nil {
		t.Fatalf("fd %d race %v err %v, want a running race", fd, r, err)
	}
	if r.Done() {
		t.Fatal("a connect to a SYN-dropping listener was decided by one look")
	}
	fired := 0
	r.SetOnDone(func() { fired++ })
	r.Cancel(context.Canceled)
	if _, err := r.Result(); !errors.Is(err, context.Canceled) || fired != 1 {
		t.Fatalf("err %v (want canceled), onDone called %d times", err, fired)
	}
}

// A refusal decided by the look is a decided race (for its account), not
// an fd; onDone set afterwards is not called for it. A literal's refusal is
// seen after its early connect (lone.go), and is still the race's to
// decide: the outcome and the account of its one attempt are the ones a
// race that made the connect itself gives.
func TestConnectNowRefusedIsADecidedRace(t *testing.T) {
	port := closedPort(t)
	checkLeaks(t)
	var d Options
	fd, r, err := d.ConnectNow("127.0.0.1", port)
	if err != nil || fd != -1 || r == nil || !r.Done() {
		t.Fatalf("fd %d race %v err %v, want a decided race", fd, r, err)
	}
	fired := 0
	r.SetOnDone(func() { fired++ })
	_, early := r.Result()
	if !errors.Is(early, syscall.ECONNREFUSED) || fired != 0 {
		t.Fatalf("err %v (want ECONNREFUSED), onDone called %d times", early, fired)
	}
	ordinary, err := d.StartWaiter("127.0.0.1", port, nil)
	if err != nil {
		t.Fatal(err)
	}
	ordinary.Wait(time.Time{})
	_, usual := ordinary.Result()
	var a, b *Error
	if !errors.As(early, &a) || !errors.As(usual, &b) {
		t.Fatalf("errors %v and %v, want two *Error", early, usual)
	}
	if a.Outcome != b.Outcome || !errors.Is(a.Cause, syscall.ECONNREFUSED) || !errors.Is(b.Cause, syscall.ECONNREFUSED) {
		t.Fatalf("outcomes %v (%v) and %v (%v)", a.Outcome, a.Cause, b.Outcome, b.Cause)
	}
	if len(a.Attempts) != 1 || len(b.Attempts) != 1 || a.Attempts[0].Addr != b.Attempts[0].Addr ||
		!errors.Is(a.Attempts[0].Err, syscall.ECONNREFUSED) {
		t.Fatalf("attempts %+v and %+v", a.Attempts, b.Attempts)
	}
}

// Bad input is refused as Start refuses it: no fd, no race.
func TestConnectNowRefusesBadInput(t *testing.T) {
	var d Options
	fd, r, err := d.ConnectNow("bad\x00host", 80)
	if !errors.Is(err, ErrInvalidOptions) || fd != -1 || r != nil {
		t.Fatalf("fd %d race %v err %v", fd, r, err)
	}
}

// quickResolver answers at once, from the lookup's own goroutine.
type quickResolver struct{ addrs map[Family][]netip.Addr }

func (q quickResolver) LookupFamily(_ context.Context, _ string, f Family) ([]netip.Addr, error) {
	return q.addrs[f], nil
}

// A race with lookups handed itself to their deliveries: even when it is
// won, its memory is not reused while a late delivery could still reach
// it. Many such connects, one after the other and with ConnectNow between
// them, must each stay right.
func TestConnectNowWithLookupsStaysRight(t *testing.T) {
	ln := echoListener(t, "127.0.0.1:0")
	checkLeaks(t)
	d := Options{Resolver: quickResolver{map[Family][]netip.Addr{IPv4: mustAddrs("127.0.0.1")}}}
	for range 50 {
		fd, r, err := d.ConnectNow("quick.test", uint16(portOf(ln)))
		if err != nil {
			t.Fatal(err)
		}
		if r != nil {
			if !r.Wait(time.Now().Add(5 * time.Second)) {
				t.Fatal("undecided")
			}
			res, err := r.Result()
			if err != nil {
				t.Fatal(err)
			}
			fd = res.FD
		}
		if peerPort(t, fd) != portOf(ln) {
			t.Fatal("wrong peer")
		}
		unix.Close(fd)
		var plain Options
		fd, r, err = plain.ConnectNow("127.0.0.1", uint16(portOf(ln)))
		if err != nil || r != nil {
			t.Fatalf("fd %d race %v err %v", fd, r, err)
		}
		unix.Close(fd)
	}
}

// A connect to an IP literal won at ConnectNow's first look allocates
// nothing: its address list lives in the machine (MachineConfig.Literal),
// the race's memory is recycled, and no Race is made for a race that is
// not handed back. The listener never accepts (the kernel completes each
// handshake into its backlog), so that only the connects are counted. A
// connect not won at its first look (a machine too slow for loopback) makes
// a Race, so such a measurement is made again, with a new listener.
func TestConnectNowToALiteralAllocatesNothing(t *testing.T) {
	checkLeaks(t)
	var d Options
	for try := 1; try <= 3; try++ {
		ln, port := unacceptedListener(t)
		late := 0
		allocs := testing.AllocsPerRun(200, func() {
			fd, r, err := d.ConnectNow("127.0.0.1", port)
			if err != nil {
				t.Fatal(err)
			}
			if fd < 0 {
				late++
				r.Wait(time.Time{})
				res, err := r.Result()
				if err != nil {
					t.Fatal(err)
				}
				fd = res.FD
			}
			unix.Close(fd)
		})
		unix.Close(ln)
		if late == 0 {
			if allocs != 0 {
				t.Errorf("%v allocations per connect, want 0", allocs)
			}
			return
		}
		t.Logf("try %d: %d of 201 connects not won at the first look", try, late)
	}
	t.Fatal("no try where every connect was won at its first look")
}

// unacceptedListener listens on 127.0.0.1 (a kernel-chosen port) and never
// accepts; its backlog holds every connect of a test.
func unacceptedListener(t *testing.T) (fd int, port uint16) {
	t.Helper()
	fd, err := unix.Socket(unix.AF_INET, unix.SOCK_STREAM|unix.SOCK_CLOEXEC, 0)
	if err != nil {
		t.Fatal(err)
	}
	if err := unix.Bind(fd, &unix.SockaddrInet4{Addr: [4]byte{127, 0, 0, 1}}); err != nil {
		unix.Close(fd)
		t.Fatal(err)
	}
	if err := unix.Listen(fd, 1024); err != nil {
		unix.Close(fd)
		t.Fatal(err)
	}
	sa, err := unix.Getsockname(fd)
	if err != nil {
		unix.Close(fd)
		t.Fatal(err)
	}
	return fd, uint16(sa.(*unix.SockaddrInet4).Port)
}
