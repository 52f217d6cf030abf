package testbed

import (
	"context"
	"errors"
	"net"
	"net/netip"
	"os"
	"os/exec"
	"strings"
	"syscall"
	"testing"
	"time"
)

// TestImpairChanges switches one address through every impairment while
// the bed runs and checks each with a plain connect, and that switching
// away from one leaves none of its rules behind.
func TestImpairChanges(t *testing.T) {
	a := V4Good1
	bed := startBed(t, Options{SkipSelfCheck: true, Layout: map[netip.Addr]Impairment{a: Healthy()}})
	defer bed.Close()

	probe := func(limit time.Duration) (time.Duration, error) {
		t.Helper()
		took, err := bed.ProbeConnect(a, bed.Port, limit)
		return took, err
	}
	if _, err := probe(5 * time.Second); err != nil {
		t.Fatalf("healthy: %v", err)
	}
	must := func(imp Impairment) {
		t.Helper()
		if err := bed.Impair(a, imp); err != nil {
			t.Fatal(err)
		}
	}
	must(Refuse())
	if _, err := probe(5 * time.Second); !errors.Is(err, syscall.ECONNREFUSED) {
		t.Errorf("refuse: %v, want ECONNREFUSED", err)
	}
	// A delay longer than what the self-check allows a healthy connect
	// (atOnce): "healthy again" below can then tell a delay left behind
	// from a loaded machine's slow connect.
	const delay = atOnce + 100*time.Millisecond
	must(PathDelay(delay))
	if took, err := probe(delay + 5*time.Second); err != nil || took < delay*9/10 {
		t.Errorf("delay %v: took %v, %v", delay, took, err)
	}
	must(Blackhole())
	var ne net.Error
	if _, err := probe(500 * time.Millisecond); !errors.As(err, &ne) || !ne.Timeout() {
		t.Errorf("blackhole: %v, want a timeout", err)
	}
	must(Healthy())
	if took, err := probe(5 * time.Second); err != nil || took > atOnce {
		t.Errorf("healthy again: took %v, %v", took, err)
	}
	// No queue rule and no policy rule are left for the address.
	ctx := context.Background()
	for _, argv := range [][]string{
		{"ip", "netns", "exec", bed.ServerNS, "iptables", "-t", "mangle", "-S", "PREROUTING"},
		{"ip", "-n", bed.ServerNS, "-4", "rule", "show"},
	} {
		out, err := runOutput(ctx, argv...)
		if err != nil {
			t.Fatal(err)
		}
		if strings.Contains(out, a.String()) {
			t.Errorf("%v still mentions %v:\n%s", argv, a, out)
		}
	}
}

func TestImpairRejectsBadInput(t *testing.T) {
	bed := startBed(t, Options{SkipSelfCheck: true, Layout: map[netip.Addr]Impairment{V4Good1: Healthy()}})
	defer bed.Close()
	for _, c := range []struct {
		addr netip.Addr
		imp  Impairment
	}{
		{netip.MustParseAddr("192.0.2.1"), Healthy()},   // outside the bed
		{netip.MustParseAddr("2001:db9::1"), Healthy()}, // outside the bed
		{ClientV4, Healthy()},                           // the client itself
		{DNSServerV4, Refuse()},                         // the DNS server
		{V4Good2, PathDelay(0)},                         // no delay
		{V4Good2, Impairment{Kind: 99}},                 // unknown kind
	} {
		if err := bed.Impair(c.addr, c.imp); err == nil {
			t.Errorf("Impair(%v, %v) accepted", c.addr, c.imp)
		}
	}
}

func runOutput(ctx context.Context, argv ...string) (string, error) {
	out, err := exec.CommandContext(ctx, argv[0], argv[1:]...).Output()
	return string(out), err
}

func countFDs(t *testing.T) int {
	t.Helper()
	ents, err := os.ReadDir("/proc/self/fd")
	if err != nil {
		t.Fatal(err)
	}
	return len(ents)
}

// TestSelfCheckCatchesBrokenImpairments removes the rules behind a
// blackhole and a delay by hand: the self-check must name both addresses.
func TestSelfCheckCatchesBrokenImpairments(t *testing.T) {
	bed := startBed(t, Options{SkipSelfCheck: true, Layout: map[netip.Addr]Impairment{
		V6Blackhole1: Blackhole(), V4Delay100: PathDelay(100 * time.Millisecond), V4Good1: Healthy(),
	}})
	defer bed.Close()
	if err := bed.SelfCheck(context.Background()); err != nil {
		t.Fatalf("intact bed: %v", err)
	}
	ctx := context.Background()
	for _, argv := range [][]string{
		{"ip", "-n", bed.ServerNS, "-6", "rule", "del", "from", V6Blackhole1.String(), "lookup", "100"},
		{"ip", "netns", "exec", bed.ServerNS, "iptables", "-t", "mangle", "-F", "PREROUTING"},
	} {
		if _, err := runOutput(ctx, argv...); err != nil {
			t.Fatal(argv, err)
		}
	}
	err := bed.SelfCheck(ctx)
	if err == nil {
		t.Fatal("the self-check passed a bed whose blackhole and delay were removed")
	}
	for _, a := range []netip.Addr{V6Blackhole1, V4Delay100} {
		if !strings.Contains(err.Error(), a.String()) {
			t.Errorf("the self-check error does not name %v:\n%v", a, err)
		}
	}
	if strings.Contains(err.Error(), V4Good1.String()+" ") {
		t.Errorf("the self-check blames the healthy %v:\n%v", V4Good1, err)
	}
}
