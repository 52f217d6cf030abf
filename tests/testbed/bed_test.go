package testbed

import (
	"context"
	"net/netip"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"strings"
	"testing"
	"time"

	"github.com/miekg/dns"
)

// startBed starts a bed for a test, or skips the test when not root (the
// bed needs network namespaces).
func startBed(t *testing.T, opts Options) *Bed {
	t.Helper()
	if os.Geteuid() != 0 {
		t.Skip("SKIP: the test bed needs root")
	}
	bed, err := Start(opts)
	if err != nil {
		t.Fatal(err)
	}
	return bed
}

func getent(t *testing.T, bed *Bed, db, name string) (string, time.Duration, int) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	start := time.Now()
	res, err := bed.Exec(ctx, "getent", db, name)
	if err != nil {
		t.Fatal(err)
	}
	return res.Stdout, time.Since(start), res.ExitCode
}

// TestDNSBehaviours resolves through getaddrinfo in the client namespace
// and checks what the server did for each behaviour.
func TestDNSBehaviours(t *testing.T) {
	bed := startBed(t, Options{SkipSelfCheck: true, Layout: map[netip.Addr]Impairment{V4Good1: Healthy()}})
	defer bed.Close()

	bed.DNS.SetHost("dual.hev2.test", Answer(V6Good1, V6Good2), Answer(V4Good1))
	out, _, code := getent(t, bed, "ahosts", "dual.hev2.test")
	for _, want := range []string{"2001:db8::10", "2001:db8::11", "198.18.0.10"} {
		if code != 0 || !strings.Contains(out, want+" ") {
			t.Errorf("dual: exit %d, output %q lacks %s", code, out, want)
		}
	}

	bed.DNS.SetHost("nx.hev2.test", NXDomain(), NXDomain())
	if _, _, code := getent(t, bed, "ahostsv4", "nx.hev2.test"); code != 2 {
		t.Errorf("NXDOMAIN: getent exit %d, want 2 (not found)", code)
	}

	bed.DNS.SetHost("v4only.hev2.test", NoData(), Answer(V4Good1))
	if out, _, code := getent(t, bed, "ahostsv4", "v4only.hev2.test"); code != 0 || !strings.Contains(out, "198.18.0.10") {
		t.Errorf("v4only A: exit %d, %q", code, out)
	}
	if qs := bed.DNS.Queries("v4only.hev2.test"); len(qs) == 0 {
		t.Error("v4only: the server saw no query")
	}

	bed.DNS.SetHost("trunc.hev2.test", Truncated(V6Good1), Truncated(V4Good1))
	if out, _, code := getent(t, bed, "ahostsv4", "trunc.hev2.test"); code != 0 || !strings.Contains(out, "198.18.0.10") {
		t.Errorf("truncated: exit %d, %q", code, out)
	}
	var udp, tcp bool
	for _, q := range bed.DNS.Queries("trunc.hev2.test") {
		udp = udp || (q.Proto == "udp" && q.Type == dns.TypeA)
		tcp = tcp || (q.Proto == "tcp" && q.Type == dns.TypeA)
	}
	if !udp || !tcp {
		t.Errorf("truncated: want a UDP query then a TCP retry, saw udp=%v tcp=%v", udp, tcp)
	}

	bed.DNS.SetHost("late.hev2.test", NoData(), Delayed(300*time.Millisecond, V4Good1))
	if _, took, code := getent(t, bed, "ahostsv4", "late.hev2.test"); code != 0 || took < 300*time.Millisecond {
		t.Errorf("delayed: exit %d after %v, want success after >= 300ms", code, took)
	}

	bed.DNS.SetHost("never.hev2.test", NeverAnswer(), NeverAnswer())
	if _, took, code := getent(t, bed, "ahostsv4", "never.hev2.test"); code == 0 || took < 900*time.Millisecond || took > 5*time.Second {
		t.Errorf("never: exit %d after %v, want failure after about 1 s (resolv.conf timeout:1 attempts:1)", code, took)
	}

	bed.DNS.SetHost("servfail.hev2.test", ServFail(), ServFail())
	if _, _, code := getent(t, bed, "ahostsv4", "servfail.hev2.test"); code == 0 {
		t.Error("SERVFAIL: getent succeeded")
	}
}

// TestCloseRemovesEverything checks that a bed leaves no namespace, no
// /etc/netns directory and no goroutine behind.
func TestCloseRemovesEverything(t *testing.T) {
	if os.Geteuid() != 0 {
		t.Skip("SKIP: the test bed needs root")
	}
	goroutines := runtime.NumGoroutine()
	fds := countFDs(t)
	bed := startBed(t, Options{}) // the standard layout with its self-check
	names := []string{bed.ClientNS, bed.ServerNS}
	bed.Close()
	out, err := exec.Command("ip", "netns", "list").Output()
	if err != nil {
		t.Fatal(err)
	}
	for _, n := range names {
		if strings.Contains(string(out), n) {
			t.Errorf("namespace %s still exists after Close", n)
		}
		if _, err := os.Stat(filepath.Join("/etc/netns", n)); err == nil {
			t.Errorf("/etc/netns/%s still exists after Close", n)
		}
	}
	deadline := time.Now().Add(2 * time.Second)
	for runtime.NumGoroutine() > goroutines && time.Now().Before(deadline) {
		time.Sleep(20 * time.Millisecond)
	}
	if n := countFDs(t); n > fds {
		t.Errorf("fds: %d before Start, %d after Close", fds, n)
	}
	if n := runtime.NumGoroutine(); n > goroutines {
		t.Errorf("goroutines: %d before Start, %d after Close", goroutines, n)
	}
}
