package engine

import (
	"context"
	"errors"
	"github.com/hev2/hev2/internal/race"
	"net"
	"net/netip"
	"strconv"
	"syscall"
	"testing"
	"time"

	"golang.org/x/sys/unix"
)

func TestLoopbackConnectEachFamily(t *testing.T) {
	for _, ip := range []string{"127.0.0.1", "::1"} {
		t.Run(ip, func(t *testing.T) {
			ln := echoListener(t, net.JoinHostPort(ip, "0"))
			checkLeaks(t)
			var d Options
			res, err := d.Connect(context.Background(), ip, uint16(portOf(ln)))
			if err != nil {
				t.Fatal(err)
			}
			defer unix.Close(res.FD)
			if res.Addr.Addr() != netip.MustParseAddr(ip) || len(res.Attempts) != 1 || !res.Attempts[0].Won {
				t.Fatalf("result %+v", res)
			}
			if fl, _ := unix.FcntlInt(uintptr(res.FD), unix.F_GETFL, 0); fl&unix.O_NONBLOCK == 0 {
				t.Fatal("fd should be non-blocking by default")
			}
			roundTrip(t, res.FD)
		})
	}
}

func TestLoopbackBlockingFD(t *testing.T) {
	ln := echoListener(t, "127.0.0.1:0")
	checkLeaks(t)
	d := Options{BlockingFD: true, NoDelay: true}
	res, err := d.Connect(context.Background(), "127.0.0.1", uint16(portOf(ln)))
	if err != nil {
		t.Fatal(err)
	}
	defer unix.Close(res.FD)
	if fl, _ := unix.FcntlInt(uintptr(res.FD), unix.F_GETFL, 0); fl&unix.O_NONBLOCK != 0 {
		t.Fatal("BlockingFD left the fd non-blocking")
	}
	if v, _ := unix.GetsockoptInt(res.FD, unix.IPPROTO_TCP, unix.TCP_NODELAY); v != 1 {
		t.Fatal("NoDelay not set")
	}
}

func TestLoopbackRefused(t *testing.T) {
	port := closedPort(t)
	checkLeaks(t)
	var d Options
	_, err := d.Connect(context.Background(), "127.0.0.1", uint16(port))
	var he *Error
	if !errors.As(err, &he) || !errors.Is(err, syscall.ECONNREFUSED) || he.Cause != syscall.ECONNREFUSED {
		t.Fatalf("err %v, want ECONNREFUSED", err)
	}
}

func TestLoopbackFallbackFromDroppedSYN(t *testing.T) {
	port := v6DropsV4Echoes(t)
	checkLeaks(t)
	var events []TraceEvent
	d := Options{
		ConnectionAttemptDelay: 50 * time.Millisecond,
		Hosts:                  map[string][]netip.Addr{"dual.test": mustAddrs("127.0.0.1", "::1")},
		Trace:                  func(ev TraceEvent) { events = append(events, ev) },
	}
	res, err := d.Connect(context.Background(), "dual.test", uint16(port))
	if err != nil {
		t.Fatal(err)
	}
	defer unix.Close(res.FD)
	// RFC 6724 puts ::1 first; its SYN is dropped; 127.0.0.1 starts after
	// the attempt delay and wins; the ::1 attempt is closed.
	if len(res.Attempts) != 2 || res.Attempts[0].Addr.Addr() != netip.MustParseAddr("::1") ||
		!res.Attempts[1].Won || res.Attempts[1].Start < 50*time.Millisecond {
		t.Fatalf("attempts %+v", res.Attempts)
	}
	roundTrip(t, res.FD)
	var closed bool
	for _, ev := range events {
		closed = closed || ev.Kind == race.TraceAttemptClosed && ev.Attempt == 0
	}
	if !closed {
		t.Fatalf("losing attempt not closed: %+v", events)
	}
}

func TestLoopbackCancelMidAttempt(t *testing.T) {
	port := synDropListener(t, "127.0.0.1")
	checkLeaks(t)
	ctx, cancel := context.WithCancel(context.Background())
	time.AfterFunc(50*time.Millisecond, cancel)
	var d Options
	begin := time.Now()
	_, err := d.Connect(ctx, "127.0.0.1", uint16(port))
	if !errors.Is(err, context.Canceled) {
		t.Fatalf("err %v, want context.Canceled", err)
	}
	if el := time.Since(begin); el > time.Second {
		t.Fatalf("cancel took %v", el)
	}
}

func TestLoopbackConnectTimeout(t *testing.T) {
	port := synDropListener(t, "127.0.0.1")
	checkLeaks(t)
	d := Options{ConnectTimeout: 100 * time.Millisecond}
	_, err := d.Connect(context.Background(), "127.0.0.1", uint16(port))
	var he *Error
	if !errors.As(err, &he) || he.Expired != race.TimeoutConnect || !errors.Is(err, syscall.ETIMEDOUT) {
		t.Fatalf("err %v, want connect_timeout", err)
	}
}

func TestDialContextReturnsTCPConn(t *testing.T) {
	ln := echoListener(t, "[::1]:0")
	checkLeaks(t)
	var d Options
	c, err := d.DialContext(context.Background(), "tcp", net.JoinHostPort("::1", itoa(portOf(ln))))
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	tc, ok := c.(*net.TCPConn)
	if !ok {
		t.Fatalf("got %T, want *net.TCPConn", c)
	}
	tc.Write([]byte("hi"))
	buf := make([]byte, 2)
	if _, err := tc.Read(buf); err != nil || string(buf) != "hi" {
		t.Fatalf("read %q %v", buf, err)
	}
	if _, err := d.DialContext(context.Background(), "tcp4", net.JoinHostPort("::1", "80")); err == nil {
		t.Fatal("tcp4 to an IPv6 literal should fail")
	}
	if _, err := d.DialContext(context.Background(), "udp", "127.0.0.1:80"); err == nil {
		t.Fatal("udp accepted")
	}
}

func TestInvalidInput(t *testing.T) {
	checkLeaks(t)
	long := make([]byte, 300)
	for i := range long {
		long[i] = 'a'
	}
	cases := map[string]struct {
		d     Options
		host  string
		port  uint16
		kind  InputKind
		field string
	}{
		"empty host":         {Options{}, "", 80, InputHost, "host"},
		"empty brackets":     {Options{}, "[]", 80, InputHost, "host"},
		"NUL in host":        {Options{}, "a\x00b", 80, InputHost, "host"},
		"300-char host":      {Options{}, string(long), 80, InputHost, "host"},
		"254-char in []":     {Options{}, "[" + string(long[:254]) + "]", 80, InputHost, "host"},
		"port 0":             {Options{}, "127.0.0.1", 0, InputPort, "port"},
		"negative timeout":   {Options{ConnectTimeout: -1}, "127.0.0.1", 80, InputOption, "connect_timeout"},
		"absurd timeout":     {Options{ResolvTimeout: 1000 * time.Hour}, "127.0.0.1", 80, InputOption, "resolv_timeout"},
		"negative delay":     {Options{ResolutionDelay: -time.Millisecond}, "127.0.0.1", 80, InputOption, "resolution_delay"},
		"absurd stagger":     {Options{ConnectionAttemptDelay: MaxDuration + 1}, "127.0.0.1", 80, InputOption, "connection_attempt_delay"},
		"negative keepalive": {Options{KeepAlive: -time.Second}, "127.0.0.1", 80, InputOption, "keepalive"},
		"open+connect":       {Options{OpenTimeout: time.Second, ConnectTimeout: time.Second}, "127.0.0.1", 80, InputOption, "open_timeout"},
		"open+resolv":        {Options{OpenTimeout: time.Second, ResolvTimeout: time.Second}, "127.0.0.1", 80, InputOption, "open_timeout"},
		"unknown family":     {Options{Family: 5}, "127.0.0.1", 80, InputOption, "family"},
		"local family":       {Options{Family: IPv6, LocalAddr: netip.MustParseAddr("127.0.0.1")}, "::1", 80, InputOption, "local_host"},
		"negative FAFC":      {Options{FirstAddressFamilyCount: -1}, "127.0.0.1", 80, InputOption, "first_address_family_count"},
		"FAFC 65":            {Options{FirstAddressFamilyCount: MaxFirstAddressFamilyCount + 1}, "127.0.0.1", 80, InputOption, "first_address_family_count"},
	}
	for name, c := range cases {
		// Every entry point applies the same rules, before anything starts.
		_, err := c.d.Connect(context.Background(), c.host, c.port)
		_, aerr := c.d.StartLibrary(c.host, c.port, func(*Result, error) { t.Errorf("%s: StartLibrary started", name) })
		_, serr := c.d.StartWaiter(c.host, c.port, nil)
		for _, e := range []error{err, aerr, serr} {
			var ie *InputError
			if !errors.As(e, &ie) || ie.Kind != c.kind || ie.Field != c.field || ie.Reason == "" || !errors.Is(e, ErrInvalidOptions) {
				t.Errorf("%s: err %#v, want an InputError of kind %v, field %s", name, e, c.kind, c.field)
			}
		}
	}
	if err := (&Options{}).Validate(); err != nil {
		t.Errorf("zero Options: %v", err)
	}
	for _, h := range []string{string(long[:MaxHostLen]), "[" + string(long[:MaxHostLen]) + "]"} {
		if got, err := checkHost(h); err != nil || got != string(long[:MaxHostLen]) {
			t.Errorf("a host of %d characters: %q, %v", MaxHostLen, got, err)
		}
	}
	_, err := (&Options{Family: IPv4}).Connect(context.Background(), "::1", 80)
	var re *ResolveError
	if !errors.As(err, &re) || re.Code != EAI_ADDRFAMILY {
		t.Errorf("IPv4-only dial of ::1: %v, want EAI_ADDRFAMILY", err)
	}
	_, err = (&Options{Hosts: map[string][]netip.Addr{"empty.test": {}}}).Connect(context.Background(), "empty.test", 80)
	if !errors.As(err, &re) || re.Code != EAI_NODATA {
		t.Errorf("static entry without addresses: %v, want EAI_NODATA", err)
	}
	for _, p := range []string{"70000", "no-such-service-hev2", "", "0"} {
		var ie *InputError
		if _, err := ParsePort(p); !errors.As(err, &ie) || ie.Kind != InputPort {
			t.Errorf("ParsePort(%q): %v, want an InputError of kind port", p, err)
		}
	}
}

func TestBindErrorReported(t *testing.T) {
	ln := echoListener(t, "127.0.0.1:0")
	checkLeaks(t)
	// 198.18.0.1 is not an address of this host: bind must fail clearly.
	d := Options{LocalAddr: netip.MustParseAddr("198.18.0.1")}
	_, err := d.Connect(context.Background(), "127.0.0.1", uint16(portOf(ln)))
	var be *race.BindError
	if !errors.As(err, &be) || be.Err != syscall.EADDRNOTAVAIL {
		t.Fatalf("err %v, want a race.BindError EADDRNOTAVAIL", err)
	}
}

func itoa(n int) string { return strconv.Itoa(n) }

func TestAlreadyCanceledContextMakesNoAttempt(t *testing.T) {
	checkLeaks(t)
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	var attempts int
	d := Options{Trace: func(ev TraceEvent) {
		if ev.Kind == race.TraceAttemptStarted {
			attempts++
		}
	}}
	_, err := d.Connect(ctx, "127.0.0.1", 9)
	if !errors.Is(err, context.Canceled) || attempts != 0 {
		t.Fatalf("err %v after %d attempts, want context.Canceled and none", err, attempts)
	}
}

// Thousands of connects in a row, each bounded: a lost wake-up anywhere
// between the kernel, the shared epoll fd, the runtime poller and the race
// shows up as a connect that does not finish (one did, once, in a
// benchmark; this is its regression test).
func TestLoopbackManySequentialConnectsNeverStall(t *testing.T) {
	ln := echoListener(t, "127.0.0.1:0")
	checkLeaks(t)
	var d Options
	for i := 0; i < 3000; i++ {
		ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
		res, err := d.Connect(ctx, "127.0.0.1", uint16(portOf(ln)))
		cancel()
		if err != nil {
			t.Fatalf("connect %d: %v", i, err)
		}
		unix.Close(res.FD)
	}
}

// The rules run on every connect: on valid input they allocate nothing.
func TestInputRulesAllocateNothing(t *testing.T) {
	d := Options{ConnectTimeout: time.Second, FirstAddressFamilyCount: 2, LocalAddr: netip.MustParseAddr("::1"), Family: IPv6}
	allocs := testing.AllocsPerRun(100, func() {
		if d.Validate() != nil {
			t.Fatal("refused")
		}
		if _, err := checkHost("[2001:db8::1]"); err != nil {
			t.Fatal(err)
		}
		if _, err := ParsePort("443"); err != nil {
			t.Fatal(err)
		}
	})
	if allocs != 0 {
		t.Errorf("%v allocations per run, want 0", allocs)
	}
}
