package core

import (
	"context"
	"errors"
	"fmt"
	"net"
	"net/netip"
	"strings"
	"syscall"
	"testing"
	"time"

	"golang.org/x/sys/unix"

	"github.com/hev2/hev2/internal/loopbacktest"
)

// The three drivers play the same machine (the async one behind Connect,
// the caller-thread one behind Start/Wait, the netpoller one behind
// DialContext); on the same scripted network they must reach the same
// outcome through the same steps. A network here is
// loopback listeners that accept, refuse or drop SYNs, and a resolver whose
// answers come after scripted delays.

type scriptedAnswer struct {
	after time.Duration
	addrs []netip.Addr
	code  int // a getaddrinfo failure instead of addrs
}

func scriptedResolver(answers map[Family]scriptedAnswer) Resolver {
	return ResolverFunc(func(ctx context.Context, host string, f Family) ([]netip.Addr, error) {
		a := answers[f]
		select {
		case <-time.After(a.after):
		case <-ctx.Done():
			return nil, ctx.Err()
		}
		if a.code != 0 {
			return nil, &ResolveError{Host: host, Family: f, Code: a.code}
		}
		return a.addrs, nil
	})
}

// ports of the scripted network, all on loopback.
type ports struct {
	accept int // 127.0.0.1 accepts; ::1 refuses
	refuse int // nothing listens
	drop   int // 127.0.0.1 drops SYNs
	dual   int // ::1 drops SYNs, 127.0.0.1 accepts
	drop2  int // ::1 and 127.0.0.1 drop SYNs
}

type driverCase struct {
	name   string
	host   string
	dialer func() Dialer
	port   func(p ports) int
	cancel time.Duration // cancel after this long (0: never)
}

func driverCases() []driverCase {
	v6, v4 := netip.MustParseAddr("::1"), netip.MustParseAddr("127.0.0.1")
	accept := func(p ports) int { return p.accept }
	return []driverCase{
		{name: "literal accepted", host: "127.0.0.1", port: accept, dialer: func() Dialer { return Dialer{} }},
		{name: "literal refused", host: "127.0.0.1", port: func(p ports) int { return p.refuse }, dialer: func() Dialer { return Dialer{} }},
		{name: "v6 refused, v4 wins", host: "dual.test", port: accept, dialer: func() Dialer {
			// The accepting listener is on 127.0.0.1 only: ::1 refuses.
			return Dialer{Resolver: scriptedResolver(map[Family]scriptedAnswer{IPv6: {addrs: []netip.Addr{v6}}, IPv4: {after: 20 * time.Millisecond, addrs: []netip.Addr{v4}}})}
		}},
		{name: "A first, AAAA within resolution delay", host: "dual.test", port: accept, dialer: func() Dialer {
			// A Resolution Delay far longer than AAAA's 20 ms, so that a
			// loaded machine's scheduling jitter cannot change the story.
			return Dialer{ResolutionDelay: 400 * time.Millisecond, Resolver: scriptedResolver(map[Family]scriptedAnswer{IPv6: {after: 20 * time.Millisecond, addrs: []netip.Addr{v6}}, IPv4: {addrs: []netip.Addr{v4}}})}
		}},
		{name: "AAAA fails, A answers", host: "dual.test", port: accept, dialer: func() Dialer {
			return Dialer{Resolver: scriptedResolver(map[Family]scriptedAnswer{IPv6: {code: EAI_NODATA}, IPv4: {after: 10 * time.Millisecond, addrs: []netip.Addr{v4}}})}
		}},
		{name: "both lookups fail", host: "dual.test", port: accept, dialer: func() Dialer {
			return Dialer{Resolver: scriptedResolver(map[Family]scriptedAnswer{IPv6: {code: EAI_NONAME}, IPv4: {after: 10 * time.Millisecond, code: EAI_NONAME}})}
		}},
		{name: "v6 SYN dropped, v4 after attempt delay", host: "dual.test", port: func(p ports) int { return p.dual }, dialer: func() Dialer {
			return Dialer{ConnectionAttemptDelay: 50 * time.Millisecond, Hosts: map[string][]netip.Addr{"dual.test": {v4, v6}}}
		}},
		{name: "connect timeout", host: "127.0.0.1", port: func(p ports) int { return p.drop }, dialer: func() Dialer {
			return Dialer{ConnectTimeout: 60 * time.Millisecond}
		}},
		{name: "canceled mid-attempt", host: "127.0.0.1", port: func(p ports) int { return p.drop }, cancel: 40 * time.Millisecond, dialer: func() Dialer { return Dialer{} }},
		{name: "canceled mid-race", host: "dual.test", port: func(p ports) int { return p.drop2 }, cancel: 40 * time.Millisecond, dialer: func() Dialer {
			// Two attempts in flight (the second after 10 ms), both
			// hanging, when the caller gives up.
			return Dialer{ConnectionAttemptDelay: 10 * time.Millisecond, Hosts: map[string][]netip.Addr{"dual.test": {v4, v6}}}
		}},
		{name: "bind fails", host: "127.0.0.1", port: accept, dialer: func() Dialer {
			// 198.18.0.1 is not an address of this host.
			return Dialer{LocalAddr: netip.MustParseAddr("198.18.0.1")}
		}},
		{name: "both families hang, open timeout", host: "dual.test", port: func(p ports) int { return p.drop2 }, dialer: func() Dialer {
			return Dialer{OpenTimeout: 80 * time.Millisecond, ConnectionAttemptDelay: 20 * time.Millisecond,
				Resolver: scriptedResolver(map[Family]scriptedAnswer{IPv6: {addrs: []netip.Addr{v6}}, IPv4: {after: 5 * time.Millisecond, addrs: []netip.Addr{v4}}})}
		}},
	}
}

// step is a trace event without its time: what both drivers must agree on.
func step(ev TraceEvent) string {
	s := ev.Kind.String()
	switch ev.Kind {
	case TraceLookupStarted, TraceLookupAnswered, TraceLookupFailed, TraceLookupCanceled:
		s += " " + ev.Family.QueryType()
	case TraceAttemptStarted, TraceAttemptFailed, TraceAttemptWon, TraceAttemptClosed:
		s += fmt.Sprintf(" #%d %v", ev.Attempt, ev.Addr.Addr())
	case TraceTimeout:
		s += " " + ev.Timeout.String()
	case TraceHistory:
		s += " " + ev.Family.String()
	}
	if ev.Err != nil && ev.Kind != TraceDone {
		s += " (" + ev.Err.Error() + ")"
	}
	return s
}

func outcome(res *Result, err error) string {
	if err != nil {
		var he *Error
		if !errors.As(err, &he) {
			return "error " + err.Error()
		}
		return fmt.Sprintf("error cause=%v expired=%v", he.Cause, he.Expired)
	}
	unix.Close(res.FD)
	return "won " + res.Addr.Addr().String()
}

type driverRun struct {
	steps   []string
	outcome string
}

func runAsync(t *testing.T, d Dialer, host string, port int, cancelAfter time.Duration) driverRun {
	var run driverRun
	d.Trace = func(ev TraceEvent) { run.steps = append(run.steps, step(ev)) }
	ctx := context.Background()
	if cancelAfter > 0 {
		var cancel context.CancelFunc
		ctx, cancel = context.WithCancel(ctx)
		defer time.AfterFunc(cancelAfter, cancel).Stop()
	}
	run.outcome = outcome(d.Connect(ctx, host, uint16(port)))
	return run
}

func runCallerThread(t *testing.T, d Dialer, host string, port int, cancelAfter time.Duration) driverRun {
	var run driverRun
	d.Trace = func(ev TraceEvent) { run.steps = append(run.steps, step(ev)) }
	r, err := d.Start(host, uint16(port), nil)
	if err != nil {
		t.Fatal(err)
	}
	if cancelAfter > 0 {
		// From another goroutine, as an interpreter's unblocking
		// function would: the driver must come back at once.
		defer time.AfterFunc(cancelAfter, func() { r.Cancel(context.Canceled) }).Stop()
	}
	// In slices, as an interpreter checking for Ctrl-C waits: nothing is
	// lost between them.
	for !r.Wait(time.Now().Add(7 * time.Millisecond)) {
	}
	run.outcome = outcome(r.Result())
	return run
}

// runNetpoll plays the race through DialContext: the outcome names the
// connection's remote address, as the others name the fd's.
func runNetpoll(t *testing.T, d Dialer, host string, port int, cancelAfter time.Duration) driverRun {
	var run driverRun
	d.Trace = func(ev TraceEvent) { run.steps = append(run.steps, step(ev)) }
	ctx := context.Background()
	if cancelAfter > 0 {
		var cancel context.CancelFunc
		ctx, cancel = context.WithCancel(ctx)
		defer time.AfterFunc(cancelAfter, cancel).Stop()
	}
	c, err := d.DialContext(ctx, "tcp", net.JoinHostPort(host, itoa(port)))
	if err != nil {
		var oe *net.OpError
		if !errors.As(err, &oe) {
			t.Fatalf("DialContext error %T %v, want a *net.OpError", err, err)
		}
		run.outcome = outcome(nil, err)
		return run
	}
	defer c.Close()
	tc, ok := c.(*net.TCPConn)
	if !ok {
		t.Fatalf("DialContext returned %T", c)
	}
	run.outcome = "won " + tc.RemoteAddr().(*net.TCPAddr).AddrPort().Addr().String()
	return run
}

func TestDriversAgree(t *testing.T) {
	for _, c := range driverCases() {
		t.Run(strings.ReplaceAll(c.name, " ", "_"), func(t *testing.T) {
			// Each port is held on both families where a case reaches
			// both (a port of another test's listener on ::1 would
			// accept what must be refused or dropped).
			var p ports
			var v4 int
			p.accept, v4, _ = loopbacktest.BothFamilies(t)
			echoOn(t, v4)
			p.refuse = int(closedPort(t))
			p.drop = synDropListener(t, "127.0.0.1")
			p.dual = v6DropsV4Echoes(t)
			p.drop2 = bothDrop(t)
			checkLeaks(t)
			port := c.port(p)
			a := runAsync(t, c.dialer(), c.host, port, c.cancel)
			b := runCallerThread(t, c.dialer(), c.host, port, c.cancel)
			n := runNetpoll(t, c.dialer(), c.host, port, c.cancel)
			same := func(x, y driverRun) bool {
				return x.outcome == y.outcome && strings.Join(x.steps, "\n") == strings.Join(y.steps, "\n")
			}
			if !same(a, b) || !same(a, n) {
				t.Fatalf("drivers disagree\nasync:         %s\n  %s\ncaller thread: %s\n  %s\nnetpoll:       %s\n  %s",
					a.outcome, strings.Join(a.steps, "\n  "), b.outcome, strings.Join(b.steps, "\n  "),
					n.outcome, strings.Join(n.steps, "\n  "))
			}
			t.Logf("%s: %d steps", a.outcome, len(a.steps))
		})
	}
}

func TestCallerThreadCancelFromAnotherGoroutine(t *testing.T) {
	port := bothDrop(t)
	checkLeaks(t)
	// The second attempt starts from the attempt delay's timer, which only
	// a waiter runs (this driver has no goroutine of its own): once it has
	// started, Wait is driving the race, and the cancel must reach it there
	// (a cancel sent before Wait began would prove nothing).
	driving := make(chan struct{})
	d := Dialer{ConnectionAttemptDelay: 10 * time.Millisecond,
		Hosts: map[string][]netip.Addr{"hang.test": mustAddrs("::1", "127.0.0.1")},
		Trace: func(ev TraceEvent) {
			if ev.Kind == TraceAttemptStarted && ev.Attempt == 1 {
				close(driving)
			}
		}}
	r, err := d.Start("hang.test", uint16(port), nil)
	if err != nil {
		t.Fatal(err)
	}
	waited := make(chan bool)
	go func() { waited <- r.Wait(time.Time{}) }()
	select {
	case <-driving:
	case <-time.After(5 * time.Second):
		t.Fatal("Wait did not start the second attempt")
	}
	r.Cancel(context.Canceled)
	select {
	case done := <-waited:
		if !done {
			t.Fatal("Wait with no deadline returned undecided")
		}
	case <-time.After(5 * time.Second):
		t.Fatal("a cancel did not wake the driving thread")
	}
	if _, err := r.Result(); !errors.Is(err, context.Canceled) {
		t.Fatalf("err %v, want canceled", err)
	}
}

func TestCallerThreadCancelWithNoDriver(t *testing.T) {
	port := synDropListener(t, "127.0.0.1")
	checkLeaks(t)
	var d Dialer
	fired := 0
	r, err := d.Start("127.0.0.1", uint16(port), func() { fired++ })
	if err != nil {
		t.Fatal(err)
	}
	r.Cancel(context.Canceled) // nobody waits: the cancel itself closes the socket
	if !r.Done() {
		t.Fatal("a cancel with no driver left the race running")
	}
	r.Cancel(context.Canceled)
	if _, err := r.Result(); !errors.Is(err, context.Canceled) || fired != 1 {
		t.Fatalf("err %v (want canceled), onDone called %d times", err, fired)
	}
}

func TestCallerThreadSeveralWaiters(t *testing.T) {
	ln := echoListener(t, "[::1]:0")
	checkLeaks(t)
	d := Dialer{Hosts: map[string][]netip.Addr{"slow.test": {netip.MustParseAddr("::1")}}}
	calls := 0
	r, err := d.Start("slow.test", uint16(portOf(ln)), func() { calls++ })
	if err != nil {
		t.Fatal(err)
	}
	results := make(chan bool, 4)
	for range 4 {
		go func() { results <- r.Wait(time.Now().Add(5 * time.Second)) }()
	}
	for range 4 {
		if !<-results {
			t.Fatal("a waiter gave up")
		}
	}
	res, err := r.Result()
	if err != nil {
		t.Fatal(err)
	}
	defer unix.Close(res.FD)
	roundTrip(t, res.FD)
	if calls != 1 {
		t.Fatalf("onDone called %d times", calls)
	}
}

func TestCallerThreadRefusedIsErrno(t *testing.T) {
	port := closedPort(t)
	var d Dialer
	r, err := d.Start("127.0.0.1", port, nil)
	if err != nil {
		t.Fatal(err)
	}
	r.Wait(time.Time{})
	if _, err := r.Result(); !errors.Is(err, syscall.ECONNREFUSED) {
		t.Fatalf("err %v", err)
	}
}
