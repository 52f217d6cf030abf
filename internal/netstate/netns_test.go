package netstate_test

// The watcher subscribes in the namespace of its first caller, so its
// tests re-run this test binary inside a namespace of their own
// (`ip netns exec`): in child mode TestMain prints every snapshot the
// watcher publishes as one JSON line, while the parent changes the
// namespace's addresses and routes.

import (
	"bufio"
	"encoding/json"
	"fmt"
	"io"
	"os"
	"testing"
	"time"

	"github.com/hev2/hev2/internal/netstate"
	"github.com/hev2/hev2/tests/resolvertest"
)

const (
	childEnv        = "HEV2_NETSTATE_CHILD"
	changesChildEnv = "HEV2_NETSTATE_CHANGES_CHILD"
)

func TestMain(m *testing.M) {
	if os.Getenv(childEnv) != "" {
		printSnapshots()
		return
	}
	if os.Getenv(changesChildEnv) != "" {
		answerChanges()
		return
	}
	os.Exit(m.Run())
}

// changesAnswer is what answerChanges prints: netstate.Changes.
type changesAnswer struct {
	Count   uint64
	Watched bool
}

// answerChanges prints netstate.Changes once for every line read on stdin.
func answerChanges() {
	out := json.NewEncoder(os.Stdout)
	in := bufio.NewReader(os.Stdin)
	for {
		if _, err := in.ReadString('\n'); err != nil {
			return
		}
		count, watched := netstate.Changes()
		out.Encode(changesAnswer{count, watched})
	}
}

// printSnapshots prints the first snapshot and then every published one,
// until stdin closes.
func printSnapshots() {
	out := json.NewEncoder(os.Stdout)
	changes := make(chan netstate.Snapshot, 64)
	netstate.OnChange(func(_, cur netstate.Snapshot) { changes <- cur })
	first := netstate.Current()
	out.Encode(first)
	done := make(chan struct{})
	go func() {
		bufio.NewReader(os.Stdin).ReadString('\n')
		close(done)
	}()
	for {
		select {
		case s := <-changes:
			if s.Generation > first.Generation {
				out.Encode(s)
			}
		case <-done:
			return
		}
	}
}

func newNamespace(t *testing.T, stack resolvertest.Stack) *resolvertest.Namespace {
	t.Helper()
	if os.Geteuid() != 0 {
		t.Skip("network namespaces need root")
	}
	ns, err := resolvertest.NewNamespace(stack)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(ns.Close)
	return ns
}

// startChild runs this test binary in ns in the child mode that env names;
// it ends when its stdin closes, at the test's cleanup.
func startChild(t *testing.T, ns *resolvertest.Namespace, env string) (stdin io.Writer, stdout io.Reader) {
	t.Helper()
	cmd := ns.Command(os.Args[0], "-test.run=^$")
	cmd.Env = append(os.Environ(), env+"=1")
	in, _ := cmd.StdinPipe()
	out, _ := cmd.StdoutPipe()
	cmd.Stderr = os.Stderr
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { in.Close(); cmd.Wait() })
	return in, out
}

// watch starts a child in ns and returns a function that waits (at most 5
// s) for a published snapshot satisfying want.
func watch(t *testing.T, ns *resolvertest.Namespace) (first netstate.Snapshot, await func(what string, want func(netstate.Snapshot) bool) netstate.Snapshot) {
	t.Helper()
	_, stdout := startChild(t, ns, childEnv)
	snaps := make(chan netstate.Snapshot, 64)
	go func() {
		lines := bufio.NewScanner(stdout)
		for lines.Scan() {
			var s netstate.Snapshot
			if err := json.Unmarshal(lines.Bytes(), &s); err == nil {
				snaps <- s
			}
		}
		close(snaps)
	}()
	first, ok := <-snaps
	if !ok {
		t.Fatal("the child printed nothing")
	}
	await = func(what string, want func(netstate.Snapshot) bool) netstate.Snapshot {
		t.Helper()
		deadline := time.After(5 * time.Second)
		for {
			select {
			case s, ok := <-snaps:
				if !ok {
					t.Fatalf("%s: the child ended", what)
				}
				if want(s) {
					return s
				}
			case <-deadline:
				t.Fatalf("%s: never published", what)
			}
		}
	}
	return first, await
}

func ip(t *testing.T, ns *resolvertest.Namespace, args ...string) {
	t.Helper()
	if err := ns.IP(args...); err != nil {
		t.Fatal(err)
	}
}

// The watcher follows the kernel: a new family, a router, a lost family
// each publish a snapshot with a new generation, and the identity changes
// with the routers and prefixes.
func TestWatcherFollowsChanges(t *testing.T) {
	ns := newNamespace(t, resolvertest.Stack{IPv4: true})
	s0, await := watch(t, ns)
	if !s0.Known || !s0.HaveIPv4 || !s0.IPv4Route || s0.HaveIPv6 || s0.IPv6Route {
		t.Fatalf("an IPv4-only namespace: %+v", s0)
	}
	ip(t, ns, "addr", "add", "2001:db8::2/64", "dev", "d0", "nodad")
	s1 := await("IPv6 added", func(s netstate.Snapshot) bool { return s.HaveIPv6 && s.IPv6Route })
	if s1.Network == s0.Network || s1.Generation <= s0.Generation {
		t.Errorf("a new on-link prefix kept the network or generation: %+v then %+v", s0, s1)
	}
	ip(t, ns, "route", "add", "default", "via", "198.18.0.1", "dev", "d0")
	s2 := await("a router", func(s netstate.Snapshot) bool { return s.Network != s1.Network })
	ip(t, ns, "route", "flush", "table", "main", "proto", "static")
	ip(t, ns, "-4", "addr", "flush", "dev", "d0")
	s3 := await("IPv4 gone", func(s netstate.Snapshot) bool { return !s.HaveIPv4 && !s.IPv4Route })
	if !s3.HaveIPv6 || !s3.IPv6Route || s3.Network == s2.Network {
		t.Errorf("after IPv4 left: %+v", s3)
	}
}

// Inside one network the identity stays: another address in the same
// prefix (an IPv6 temporary address) changes nothing; a router does.
func TestIdentityIgnoresOwnAddresses(t *testing.T) {
	ns := newNamespace(t, resolvertest.Stack{IPv6: true})
	before := readIn(t, ns)
	ip(t, ns, "addr", "add", "2001:db8::77/64", "dev", "d0", "nodad")
	ip(t, ns, "addr", "del", "2001:db8::2/64", "dev", "d0")
	if after := readIn(t, ns); after.Network != before.Network {
		t.Errorf("a rotated address changed the network: %+v then %+v", before, after)
	}
	ip(t, ns, "route", "add", "default", "via", "2001:db8::1", "dev", "d0")
	if after := readIn(t, ns); after.Network == before.Network {
		t.Error("a new default router kept the network")
	}
}

// readIn reads the state of ns synchronously.
func readIn(t *testing.T, ns *resolvertest.Namespace) netstate.Snapshot {
	t.Helper()
	var s netstate.Snapshot
	if err := ns.Do(func() error {
		s = netstate.Read()
		if !s.Known {
			return fmt.Errorf("netlink did not answer")
		}
		return nil
	}); err != nil {
		t.Fatal(err)
	}
	return s
}

// The kernel's own dumps give the identity its strings: both routers of a
// multipath default route, an IPv6 router, the on-link prefixes, each
// with its interface's name; an IPv4-mapped prefix is spelled as IPv4.
func TestReadIdentityFromTheKernel(t *testing.T) {
	ns := newNamespace(t, resolvertest.Stack{IPv4: true, IPv6: true})
	ip(t, ns, "route", "add", "default", "nexthop", "via", "198.18.0.1", "dev", "d0", "nexthop", "via", "198.18.0.3", "dev", "d0")
	ip(t, ns, "-6", "route", "add", "default", "via", "fe80::1", "dev", "d1")
	ip(t, ns, "-6", "route", "add", "::ffff:198.51.100.0/120", "dev", "d1")
	ip(t, ns, "route", "add", "198.19.0.0/16", "via", "198.18.0.1")
	ip(t, ns, "route", "add", "default", "via", "198.18.0.9", "table", "100")
	s := readIn(t, ns)
	want := netstate.Snapshot{Known: true, HaveIPv4: true, HaveIPv6: true, IPv4Route: true, IPv6Route: true,
		Network: identity("router 198.18.0.1 d0", "router 198.18.0.3 d0", "router fe80::1 d1",
			"onlink 198.18.0.0/24 d0", "onlink 2001:db8::/64 d0", "onlink 198.51.100.0/24 d1")}
	s.Generation = 0
	if s != want {
		t.Errorf("got %+v, want %+v", s, want)
	}
}

// Changes moves with every announcement, also one that leaves the snapshot
// as it was (another address in the same prefix: what the source address
// for a destination may depend on).
func TestChangesMoveWhenTheSnapshotStays(t *testing.T) {
	ns := newNamespace(t, resolvertest.Stack{IPv6: true})
	stdin, stdout := startChild(t, ns, changesChildEnv)
	answers := json.NewDecoder(stdout)
	ask := func() changesAnswer {
		t.Helper()
		if _, err := stdin.Write([]byte("?\n")); err != nil {
			t.Fatal(err)
		}
		var a changesAnswer
		if err := answers.Decode(&a); err != nil {
			t.Fatal(err)
		}
		return a
	}
	first := ask()
	if !first.Watched {
		t.Fatalf("changes not watched in a namespace with rtnetlink: %+v", first)
	}
	ip(t, ns, "addr", "add", "2001:db8::77/64", "dev", "d0", "nodad")
	deadline := time.Now().Add(5 * time.Second)
	for {
		a := ask()
		if a.Watched && a.Count > first.Count {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("an added address never moved the count: %+v then %+v", first, a)
		}
		time.Sleep(5 * time.Millisecond)
	}
}
