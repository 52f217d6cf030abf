package engine

import (
	"context"
	"errors"
	"net/netip"
	"testing"
	"time"
)

// Only a connect that is a race of one attempt, started at once, has its
// connect made before its race (lone.go); everything that could make the
// machine do anything else goes the ordinary way.
func TestLoneLiteralOnlyWhenNothingElseApplies(t *testing.T) {
	cases := []struct {
		name string
		d    Options
		host string
		port uint16
		want string // the address, "" for the ordinary way
	}{
		{"v4 literal", Options{}, "127.0.0.1", 80, "127.0.0.1:80"},
		{"v6 literal", Options{}, "::1", 80, "[::1]:80"},
		{"v6 literal in brackets", Options{}, "[::1]", 80, "[::1]:80"},
		{"socket options", Options{NoDelay: true, BlockingFD: true, KeepAlive: time.Minute}, "127.0.0.1", 80, "127.0.0.1:80"},
		{"wanted family", Options{Family: IPv6}, "::1", 80, "[::1]:80"},
		{"a name", Options{}, "localhost", 80, ""},
		{"a zone", Options{}, "fe80::1%lo", 80, ""},
		{"port 0", Options{}, "127.0.0.1", 0, ""},
		{"other family", Options{Family: IPv6}, "127.0.0.1", 80, ""},
		{"local address", Options{LocalAddr: netip.MustParseAddr("127.0.0.1")}, "127.0.0.1", 80, ""},
		{"local port", Options{LocalPort: 4000}, "127.0.0.1", 80, ""},
		{"traced", Options{Trace: func(TraceEvent) {}}, "127.0.0.1", 80, ""},
		{"recorded", Options{Record: true}, "127.0.0.1", 80, ""},
		{"bad option", Options{FirstAddressFamilyCount: -1}, "127.0.0.1", 80, ""},
		{"empty host", Options{}, "", 80, ""},
	}
	for _, c := range cases {
		c.d.DisableNAT64 = true // this host's NAT64 state must not decide the test
		addr, ok := c.d.loneLiteral(c.host, c.port)
		got := ""
		if ok {
			got = addr.String()
		}
		if got != c.want {
			t.Errorf("%s: lone literal %q, want %q", c.name, got, c.want)
		}
	}
}

// A connect still in flight after the early look becomes the race's first
// attempt: the race makes no connect of its own (one socket, the early
// one), and a cancel closes it.
func TestConnectNowLoneAttemptInFlightIsAdopted(t *testing.T) {
	port := synDropListener(t, "127.0.0.1")
	checkLeaks(t)
	var d Options
	// The race's sockets are the ones connecting to port (synSent): the
	// process's fd count would also move with other tests' goroutines
	// still closing what they served. (checkLeaks counts the fds once
	// they have settled.)
	fd, r, err := d.ConnectNow("127.0.0.1", uint16(port))
	if err != nil || fd != -1 || r == nil || r.Done() {
		t.Fatalf("fd %d race %v err %v, want a running race", fd, r, err)
	}
	if n := synSent(t, port); n != 1 {
		t.Fatalf("%d sockets for a race of one attempt, want 1", n)
	}
	if r.Wait(time.Now().Add(20 * time.Millisecond)) {
		t.Fatal("a connect to a SYN-dropping listener was decided")
	}
	if n := synSent(t, port); n != 1 {
		t.Fatalf("%d sockets after driving the race, want 1", n)
	}
	r.Cancel(context.Canceled)
	_, err = r.Result()
	var e *Error
	if !errors.As(err, &e) || e.Outcome != OutcomeCanceled || len(e.Attempts) != 1 ||
		e.Attempts[0].Addr != netip.AddrPortFrom(netip.MustParseAddr("127.0.0.1"), uint16(port)) {
		t.Fatalf("outcome %v, want canceled with one attempt to the literal", err)
	}
	if n := synSent(t, port); n != 0 {
		t.Fatalf("%d sockets left after the cancel", n)
	}
}
