package engine

import (
	"context"
	"errors"
	"fmt"
	"github.com/hev2/hev2/internal/race"
	"net"
	"net/netip"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"golang.org/x/sys/unix"
)

// The three drivers play the same machine (the library-driven one behind
// Connect and StartLibrary,
// the waiter-driven one behind StartWaiter/Wait, the netpoller one behind
// DialContext); on the same scripted network they must reach the same
// outcome through the same steps. A network here is
// loopback listeners that accept, refuse or drop SYNs, and a resolver whose
// answers wait for a step of the race (an answer "20 ms later" would be
// another step's luck on a loaded machine: the steps must come in one
// order for every driver, whatever the scheduler does).

type scriptedAnswer struct {
	after string // the step (without its error) this answer waits for; "": none
	addrs []netip.Addr
	code  int // a getaddrinfo failure instead of addrs
}

// steps tells what a race has done so far, to whoever waits for a step.
type steps struct {
	mu      sync.Mutex
	reached map[string]chan struct{}
	seen    map[string]bool
}

// stepKey is a step without its error text: the name waited for.
func stepKey(step string) string {
	if i := strings.Index(step, " ("); i >= 0 {
		return step[:i]
	}
	return step
}

// ch is the channel closed when the step named key is taken (s.mu held).
func (s *steps) ch(key string) chan struct{} {
	if s.reached == nil {
		s.reached, s.seen = map[string]chan struct{}{}, map[string]bool{}
	}
	c, ok := s.reached[key]
	if !ok {
		c = make(chan struct{})
		s.reached[key] = c
	}
	return c
}

// saw records that the race took step.
func (s *steps) saw(step string) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if key := stepKey(step); !s.seen[key] {
		close(s.ch(key))
		s.seen[key] = true
	}
}

// when is closed once the race has taken the step named key.
func (s *steps) when(key string) <-chan struct{} {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.ch(key)
}

// stepWait bounds the wait for a step that never comes (a bug): the
// answer then comes anyway, and the drivers' steps show what happened.
const stepWait = 10 * time.Second

func scriptedResolver(seen *steps, answers map[Family]scriptedAnswer) Resolver {
	return resolverFunc(func(ctx context.Context, host string, f Family) ([]netip.Addr, error) {
		a := answers[f]
		if a.after != "" {
			select {
			case <-seen.when(a.after):
			case <-time.After(stepWait):
			case <-ctx.Done():
				return nil, ctx.Err()
			}
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
	dialer func(seen *steps) Options
	port   func(p ports) int
	cancel string // cancel once the race has taken this step ("": never)
}

func driverCases() []driverCase {
	v6, v4 := netip.MustParseAddr("::1"), netip.MustParseAddr("127.0.0.1")
	accept := func(p ports) int { return p.accept }
	plain := func(*steps) Options { return Options{} }
	return []driverCase{
		{name: "literal accepted", host: "127.0.0.1", port: accept, dialer: plain},
		{name: "literal refused", host: "127.0.0.1", port: func(p ports) int { return p.refuse }, dialer: plain},
		{name: "v6 refused, v4 wins", host: "dual.test", port: accept, dialer: func(seen *steps) Options {
			// The accepting listener is on 127.0.0.1 only: ::1 refuses.
			// A is answered once IPv6 has failed.
			return Options{Resolver: scriptedResolver(seen, map[Family]scriptedAnswer{IPv6: {addrs: []netip.Addr{v6}},
				IPv4: {after: "attempt-failed #0 ::1", addrs: []netip.Addr{v4}}})}
		}},
		{name: "A first, AAAA within resolution delay", host: "dual.test", port: accept, dialer: func(seen *steps) Options {
			// AAAA is answered once the Resolution Delay has started; the
			// delay is long, so that a loaded machine's scheduling cannot
			// make it end first.
			return Options{ResolutionDelay: 2 * time.Second, Resolver: scriptedResolver(seen, map[Family]scriptedAnswer{
				IPv6: {after: "resolution-delay", addrs: []netip.Addr{v6}}, IPv4: {addrs: []netip.Addr{v4}}})}
		}},
		{name: "AAAA fails, A answers", host: "dual.test", port: accept, dialer: func(seen *steps) Options {
			return Options{Resolver: scriptedResolver(seen, map[Family]scriptedAnswer{IPv6: {code: EAI_NODATA},
				IPv4: {after: "lookup-failed AAAA", addrs: []netip.Addr{v4}}})}
		}},
		{name: "both lookups fail", host: "dual.test", port: accept, dialer: func(seen *steps) Options {
			return Options{Resolver: scriptedResolver(seen, map[Family]scriptedAnswer{IPv6: {code: race.EAI_NONAME},
				IPv4: {after: "lookup-failed AAAA", code: race.EAI_NONAME}})}
		}},
		{name: "v6 SYN dropped, v4 after attempt delay", host: "dual.test", port: func(p ports) int { return p.dual }, dialer: func(*steps) Options {
			return Options{ConnectionAttemptDelay: 50 * time.Millisecond, Hosts: map[string][]netip.Addr{"dual.test": {v4, v6}}}
		}},
		{name: "connect timeout", host: "127.0.0.1", port: func(p ports) int { return p.drop }, dialer: func(*steps) Options {
			return Options{ConnectTimeout: 60 * time.Millisecond}
		}},
		{name: "canceled mid-attempt", host: "127.0.0.1", port: func(p ports) int { return p.drop },
			cancel: "attempt-started #0 127.0.0.1", dialer: plain},
		{name: "canceled mid-race", host: "dual.test", port: func(p ports) int { return p.drop2 },
			cancel: "attempt-started #1 127.0.0.1", dialer: func(*steps) Options {
				// Two attempts in flight, both hanging, when the caller
				// gives up.
				return Options{ConnectionAttemptDelay: 10 * time.Millisecond, Hosts: map[string][]netip.Addr{"dual.test": {v4, v6}}}
			}},
		{name: "bind fails", host: "127.0.0.1", port: accept, dialer: func(*steps) Options {
			// 198.18.0.1 is not an address of this host.
			return Options{LocalAddr: netip.MustParseAddr("198.18.0.1")}
		}},
		{name: "both families hang, open timeout", host: "dual.test", port: func(p ports) int { return p.drop2 }, dialer: func(seen *steps) Options {
			// A is answered once IPv6's attempt has started, well within
			// the attempt delay; the open timeout comes well after the
			// second attempt (timers that expire together on a late
			// driver would be another story).
			return Options{OpenTimeout: 600 * time.Millisecond, ConnectionAttemptDelay: 200 * time.Millisecond,
				Resolver: scriptedResolver(seen, map[Family]scriptedAnswer{IPv6: {addrs: []netip.Addr{v6}},
					IPv4: {after: "attempt-started #0 ::1", addrs: []netip.Addr{v4}}})}
		}},
	}
}

// step is a trace event without its time: what both drivers must agree on.
func step(ev TraceEvent) string {
	s := ev.Kind.String()
	switch ev.Kind {
	case race.TraceLookupStarted, race.TraceLookupAnswered, race.TraceLookupFailed, race.TraceLookupCanceled:
		s += " " + ev.Family.QueryType()
	case race.TraceAttemptStarted, race.TraceAttemptFailed, race.TraceAttemptWon, race.TraceAttemptClosed:
		s += fmt.Sprintf(" #%d %v", ev.Attempt, ev.Addr.Addr())
	case race.TraceTimeout:
		s += " " + ev.Timeout.String()
	case race.TraceHistory:
		s += " " + ev.Family.String()
	}
	if ev.Err != nil && ev.Kind != race.TraceDone {
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

// trace records the run's steps and tells seen of each.
func (run *driverRun) trace(seen *steps) func(TraceEvent) {
	return func(ev TraceEvent) {
		st := step(ev)
		run.steps = append(run.steps, st)
		seen.saw(st)
	}
}

// cancelAt calls cancel once the race has taken the step named at ("":
// never), from a goroutine of its own, as a caller giving up would; the
// returned stop ends the wait.
func cancelAt(seen *steps, at string, cancel func()) (stop func()) {
	if at == "" {
		return func() {}
	}
	done := make(chan struct{})
	go func() {
		select {
		case <-seen.when(at):
			cancel()
		case <-done:
		}
	}()
	return func() { close(done) }
}

// runLibrary, runWaiter and runNetpoller play the race through one
// driver each; seen (nil: a new one) is told every step, and the race is
// cancelled once it has taken the step cancel names ("": never).
func runLibrary(t *testing.T, d Options, seen *steps, host string, port int, cancel string) driverRun {
	var run driverRun
	if seen == nil {
		seen = new(steps)
	}
	d.Trace = run.trace(seen)
	ctx, stop := context.WithCancel(context.Background())
	defer stop()
	defer cancelAt(seen, cancel, stop)()
	run.outcome = outcome(d.Connect(ctx, host, uint16(port)))
	return run
}

func runWaiter(t *testing.T, d Options, seen *steps, host string, port int, cancel string) driverRun {
	var run driverRun
	if seen == nil {
		seen = new(steps)
	}
	d.Trace = run.trace(seen)
	r, err := d.StartWaiter(host, uint16(port), nil)
	if err != nil {
		t.Fatal(err)
	}
	// From another goroutine, as an interpreter's unblocking function
	// would: the driver must come back at once.
	defer cancelAt(seen, cancel, func() { r.Cancel(context.Canceled) })()
	// In slices, as an interpreter checking for Ctrl-C waits: nothing is
	// lost between them.
	for !r.Wait(time.Now().Add(7 * time.Millisecond)) {
	}
	run.outcome = outcome(r.Result())
	return run
}

// runNetpoller plays the race through DialContext: the outcome names the
// connection's remote address, as the others name the fd's.
func runNetpoller(t *testing.T, d Options, seen *steps, host string, port int, cancel string) driverRun {
	var run driverRun
	if seen == nil {
		seen = new(steps)
	}
	d.Trace = run.trace(seen)
	ctx, stop := context.WithCancel(context.Background())
	defer stop()
	defer cancelAt(seen, cancel, stop)()
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
			p.accept = v6RefusesV4Echoes(t)
			p.refuse = int(closedPort(t))
			p.drop = synDropListener(t, "127.0.0.1")
			p.dual = v6DropsV4Echoes(t)
			p.drop2 = bothDrop(t)
			checkLeaks(t)
			port := c.port(p)
			run := func(driver func(*testing.T, Options, *steps, string, int, string) driverRun) driverRun {
				seen := new(steps)
				return driver(t, c.dialer(seen), seen, c.host, port, c.cancel)
			}
			a, b, n := run(runLibrary), run(runWaiter), run(runNetpoller)
			same := func(x, y driverRun) bool {
				return x.outcome == y.outcome && strings.Join(x.steps, "\n") == strings.Join(y.steps, "\n")
			}
			if !same(a, b) || !same(a, n) {
				t.Fatalf("drivers disagree\nlibrary:   %s\n  %s\nwaiter:    %s\n  %s\nnetpoller: %s\n  %s",
					a.outcome, strings.Join(a.steps, "\n  "), b.outcome, strings.Join(b.steps, "\n  "),
					n.outcome, strings.Join(n.steps, "\n  "))
			}
			t.Logf("%s: %d steps", a.outcome, len(a.steps))
		})
	}
}

func TestWaiterCancelFromAnotherGoroutine(t *testing.T) {
	port := bothDrop(t)
	checkLeaks(t)
	// The second attempt starts from the attempt delay's timer, which only
	// a waiter runs (this driver has no goroutine of its own): once it has
	// started, Wait is driving the race, and the cancel must reach it there
	// (a cancel sent before Wait began would prove nothing).
	driving := make(chan struct{})
	d := Options{ConnectionAttemptDelay: 10 * time.Millisecond,
		Hosts: map[string][]netip.Addr{"hang.test": mustAddrs("::1", "127.0.0.1")},
		Trace: func(ev TraceEvent) {
			if ev.Kind == race.TraceAttemptStarted && ev.Attempt == 1 {
				close(driving)
			}
		}}
	r, err := d.StartWaiter("hang.test", uint16(port), nil)
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

func TestWaiterCancelWithNoDriver(t *testing.T) {
	port := synDropListener(t, "127.0.0.1")
	checkLeaks(t)
	var d Options
	fired := 0
	r, err := d.StartWaiter("127.0.0.1", uint16(port), func() { fired++ })
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

func TestWaiterSeveralWaiters(t *testing.T) {
	ln := echoListener(t, "[::1]:0")
	checkLeaks(t)
	d := Options{Hosts: map[string][]netip.Addr{"slow.test": {netip.MustParseAddr("::1")}}}
	calls := 0
	r, err := d.StartWaiter("slow.test", uint16(portOf(ln)), func() { calls++ })
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

func TestWaiterRefusedIsErrno(t *testing.T) {
	port := closedPort(t)
	var d Options
	r, err := d.StartWaiter("127.0.0.1", port, nil)
	if err != nil {
		t.Fatal(err)
	}
	r.Wait(time.Time{})
	if _, err := r.Result(); !errors.Is(err, syscall.ECONNREFUSED) {
		t.Fatalf("err %v", err)
	}
}
