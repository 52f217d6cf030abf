package resolvertest_test

import (
	"bufio"
	"encoding/json"
	"fmt"
	"net/netip"
	"os"
	"runtime"
	"slices"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/hev2/hev2/core"
	"github.com/hev2/hev2/internal/resolve"
	"github.com/hev2/hev2/tests/resolvertest"
	"github.com/hev2/hev2/tests/testdns"
	"github.com/miekg/dns"
)

// resolvers are the two resolvers every per-family test runs with.
var resolvers = []string{"system", "builtin"}

var (
	v6addr = netip.MustParseAddr("2001:db8::53")
	v4addr = netip.MustParseAddr("198.18.0.53")
)

// testNamespace makes a namespace with a DNS server on its loopback, or
// skips the test, saying why, when not root.
func testNamespace(t testing.TB, stack resolvertest.Stack) (*resolvertest.Namespace, *testdns.Server) {
	t.Helper()
	if os.Geteuid() != 0 {
		t.Skip("SKIP: needs root for network namespaces (getaddrinfo is only ever tested inside one)")
	}
	ns, err := resolvertest.NewNamespace(stack)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(ns.Close)
	srv, err := ns.ServeDNS()
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(srv.Close)
	return ns, srv
}

func byFamily(outs []lookupOutcome, f core.Family) lookupOutcome {
	for _, o := range outs {
		if o.Family == f {
			return o
		}
	}
	return lookupOutcome{}
}

func wantAddrs(t *testing.T, o lookupOutcome, want ...string) {
	t.Helper()
	if o.Err != "" || !slices.Equal(o.Addrs, want) {
		t.Errorf("%v lookup: got %v err %q, want %v", o.Family, o.Addrs, o.Err, want)
	}
}

// Each family's answer arrives when the server sends it: a slow family
// holds up neither the other family nor the caller who wants the first.
func TestSystemPerFamilyTiming(t *testing.T) {
	ns, srv := testNamespace(t, resolvertest.Stack{})
	const slow = 400 * time.Millisecond
	srv.Set("slow6.test", dns.TypeAAAA, testdns.Behaviour{Addrs: []netip.Addr{v6addr}, Delay: slow})
	srv.Set("slow6.test", dns.TypeA, testdns.Behaviour{Addrs: []netip.Addr{v4addr}})
	srv.Set("slow4.test", dns.TypeA, testdns.Behaviour{Addrs: []netip.Addr{v4addr}, Delay: slow})
	srv.Set("slow4.test", dns.TypeAAAA, testdns.Behaviour{Addrs: []netip.Addr{v6addr}})
	for _, c := range []struct {
		host       string
		slow, fast core.Family
	}{{"slow6.test", core.IPv6, core.IPv4}, {"slow4.test", core.IPv4, core.IPv6}} {
		for _, res := range resolvers {
			var outs []lookupOutcome
			inChild(t, ns, childArgs{Mode: "lookup", Resolver: res, Host: c.host, IdleMS: 50}, &outs)
			s, f := byFamily(outs, c.slow), byFamily(outs, c.fast)
			wantAddrs(t, byFamily(outs, core.IPv6), v6addr.String())
			wantAddrs(t, byFamily(outs, core.IPv4), v4addr.String())
			// The fast family answers well before the slow one: not held
			// by it (a bound relative to the slow answer, which a loaded
			// machine delays as much).
			if s.ElapsedMS < float64(slow.Milliseconds()) || f.ElapsedMS > s.ElapsedMS-float64(slow.Milliseconds())/2 {
				t.Errorf("%s resolver, %s: slow %v answered after %.1f ms, fast %v after %.1f ms; want >= %v and the fast one well before it",
					res, c.host, c.slow, s.ElapsedMS, c.fast, f.ElapsedMS, slow)
			}
		}
	}
}

// A AAAA query that is never answered costs the A answer nothing; the AAAA
// lookup ends when glibc gives up (resolv.conf: timeout:1 attempts:1).
func TestSystemSilentAAAA(t *testing.T) {
	ns, srv := testNamespace(t, resolvertest.Stack{})
	srv.Set("silent6.test", dns.TypeAAAA, testdns.Behaviour{Never: true})
	srv.Set("silent6.test", dns.TypeA, testdns.Behaviour{Addrs: []netip.Addr{v4addr}})
	for _, res := range resolvers {
		var outs []lookupOutcome
		inChild(t, ns, childArgs{Mode: "lookup", Resolver: res, Host: "silent6.test", IdleMS: 50}, &outs)
		a, aaaa := byFamily(outs, core.IPv4), byFamily(outs, core.IPv6)
		wantAddrs(t, a, v4addr.String())
		// Well before the AAAA's 1 s timeout, with room for a loaded machine.
		if a.ElapsedMS > 500 {
			t.Errorf("%s: A answered after %.1f ms while AAAA was silent", res, a.ElapsedMS)
		}
		if aaaa.Code != core.EAI_AGAIN || aaaa.ElapsedMS < 900 {
			t.Errorf("%s: silent AAAA: code %d after %.1f ms (%s), want EAI_AGAIN after ~1 s", res, aaaa.Code, aaaa.ElapsedMS, aaaa.Err)
		}
	}
}

// The server's answers map onto the codes glibc gives.
func TestSystemErrorCodes(t *testing.T) {
	ns, srv := testNamespace(t, resolvertest.Stack{})
	srv.Set("nodata.test", dns.TypeA, testdns.Behaviour{Addrs: []netip.Addr{v4addr}})
	srv.Set("servfail.test", 0, testdns.Behaviour{Rcode: dns.RcodeServerFailure})
	srv.Set("refused.test", 0, testdns.Behaviour{Rcode: dns.RcodeRefused})
	for _, c := range []struct {
		host string
		want int
	}{
		{"nxdomain.test", core.EAI_NONAME},
		{"nodata.test", core.EAI_NODATA},
		{"servfail.test", core.EAI_AGAIN},
		{"refused.test", core.EAI_AGAIN},
	} {
		for _, res := range resolvers {
			var outs []lookupOutcome
			inChild(t, ns, childArgs{Mode: "lookup", Resolver: res, Host: c.host, Families: []core.Family{core.IPv6}, IdleMS: 50}, &outs)
			if outs[0].Code != c.want {
				t.Errorf("%s resolver, %s AAAA: code %d (%s), want %d (%s)", res, c.host, outs[0].Code, outs[0].Err, c.want, core.EAIMessage(c.want))
			}
		}
	}
}

// Canceling a lookup that never returns releases the caller at once; the
// abandoned getaddrinfo ends on its own, is freed and counted, and leaves
// no thread or goroutine behind.
func TestSystemCancelAbandons(t *testing.T) {
	ns, srv := testNamespace(t, resolvertest.Stack{})
	srv.Set("silent.test", 0, testdns.Behaviour{Never: true})
	t.Run("builtin", func(t *testing.T) {
		var rep cancelReport
		inChild(t, ns, childArgs{Mode: "cancel", Resolver: "builtin", Host: "silent.test", CancelMS: 100}, &rep)
		t.Logf("%+v", rep)
		// Canceled returns at once; the bound leaves a loaded machine
		// room and lies far below the 1 s the query would have taken.
		if !rep.Outcome.Canceled || rep.ReturnedAfterCancelMS > 500 {
			t.Errorf("lookup ended with %q %.1f ms after cancel", rep.Outcome.Err, rep.ReturnedAfterCancelMS)
		}
		checkNothingLeft(t, rep)
		// The child has exited: every query it sent is in the server's
		// socket before this one, which the server answers in order.
		barrier(t, ns)
		if n := srv.Count("silent.test", dns.TypeAAAA); n != 1 {
			t.Errorf("server saw %d AAAA queries, want 1 (nothing sent after cancel)", n)
		}
	})
	var rep cancelReport
	inChild(t, ns, childArgs{Mode: "cancel", Host: "silent.test", CancelMS: 100, IdleMS: 50}, &rep)
	t.Logf("%+v", rep)
	if !rep.Outcome.Canceled {
		t.Errorf("lookup ended with %q, want the context's error", rep.Outcome.Err)
	}
	if rep.ReturnedAfterCancelMS > 500 {
		t.Errorf("caller released %.1f ms after cancel", rep.ReturnedAfterCancelMS)
	}
	if rep.InFlightAtCancel != 1 {
		t.Errorf("in flight at cancel: %d, want 1", rep.InFlightAtCancel)
	}
	st := rep.Stats
	if st.Abandoned != 1 || st.AbandonedDone != 1 || st.InFlight != 0 || st.Threads.Threads != 0 {
		t.Errorf("after the abandoned call ended: %+v", st)
	}
	checkNothingLeft(t, rep)
}

// checkNothingLeft fails if the lookup left a goroutine, a descriptor or a
// thread behind. The Go runtime may add one M of its own meanwhile (it adds
// them when a syscall blocks, and never gives them back); the resolver's own
// threads are checked exactly by the pool's count.
func checkNothingLeft(t *testing.T, rep cancelReport) {
	t.Helper()
	if rep.ThreadsAfter > rep.Baseline+1 || rep.GoroutinesAfter > rep.GoroutinesBefore || rep.FDsAfter > rep.FDsBefore {
		t.Errorf("threads %d -> %d, goroutines %d -> %d, fds %d -> %d", rep.Baseline, rep.ThreadsAfter,
			rep.GoroutinesBefore, rep.GoroutinesAfter, rep.FDsBefore, rep.FDsAfter)
	}
}

// A real EAI_SYSTEM: with every fd taken, getaddrinfo cannot open its DNS
// socket; the errno read on its own thread comes back.
func TestSystemEAISystemErrno(t *testing.T) {
	ns, _ := testNamespace(t, resolvertest.Stack{})
	var out struct {
		Held    int
		Outcome lookupOutcome
	}
	inChild(t, ns, childArgs{Mode: "emfile", Host: "emfile.test"}, &out)
	t.Logf("held %d fds: %+v", out.Held, out.Outcome)
	if out.Outcome.Code != core.EAI_SYSTEM || syscall.Errno(out.Outcome.Errno) != syscall.EMFILE {
		t.Fatalf("got code %d errno %d (%s), want EAI_SYSTEM with EMFILE", out.Outcome.Code, out.Outcome.Errno, out.Outcome.Err)
	}
	if !strings.Contains(out.Outcome.Err, "System error: too many open files") {
		t.Errorf("message %q does not show the errno", out.Outcome.Err)
	}
}

// 10,000 lookups at once against a server that never answers: at most the
// in-flight bound of them are waited for at once, an abandoned call gives
// its slot up at once and counts against the thread cap instead, so the
// threads stay under that cap plus a small constant; every caller gets its
// timeout or, at the cap, a fast EAI_SYSTEM/EAGAIN; the process lives.
func TestSystemFloodBoundsThreads(t *testing.T) {
	ns, srv := testNamespace(t, resolvertest.Stack{})
	srv.Set("*.silent.test", 0, testdns.Behaviour{Never: true})
	const n, bound, threadCap = 10000, 32, 96
	var rep floodReport
	inChild(t, ns, childArgs{Mode: "flood", Host: "silent.test", N: n, MaxInFlight: bound, MaxThreads: threadCap, TimeoutMS: 200, IdleMS: 100}, &rep)
	t.Logf("%+v", rep)
	if rep.Canceled+rep.CapRefused != n || rep.Other != 0 {
		t.Errorf("%d of %d callers got their timeout, %d were refused at the thread cap; others: %d (%s)", rep.Canceled, n, rep.CapRefused, rep.Other, rep.OtherSample)
	}
	if rep.MaxPoolThreads > threadCap || rep.MaxPoolThreads < bound {
		t.Errorf("at most %d getaddrinfo threads alive at once, want between the bound %d and the cap %d", rep.MaxPoolThreads, bound, threadCap)
	}
	// The small constant: Ms the Go runtime adds under this load (one per
	// P, plus one for each goroutine inside a cgo call or a system call at
	// that moment, such as the sampler's and the submitting callers'),
	// never given back; a loaded machine keeps more of them in calls at
	// once. It does not grow with the number of lookups.
	slack := runtime.GOMAXPROCS(0) + 32
	if rep.MaxThreads > rep.Baseline+threadCap+slack {
		t.Errorf("peak threads %d, baseline %d, cap %d", rep.MaxThreads, rep.Baseline, threadCap)
	}
	st := rep.Stats
	if st.InFlight != 0 || st.Queued != 0 || st.Abandoned != st.AbandonedDone || st.Threads.Threads != 0 {
		t.Errorf("not settled: %+v", st)
	}
	// The Go runtime may have added an M of its own under this load (it
	// never gives them back); every getaddrinfo thread is gone.
	if rep.ThreadsAfter > rep.Baseline+slack || rep.GoroutinesAfter > rep.GoroutinesBefore {
		t.Errorf("threads %d -> %d, goroutines %d -> %d", rep.Baseline, rep.ThreadsAfter, rep.GoroutinesBefore, rep.GoroutinesAfter)
	}
}

// Lookups beyond the bound wait for a slot and then reuse the threads of
// finished calls: a thousand lookups create no more threads than the bound.
func TestSystemThreadsReused(t *testing.T) {
	ns, srv := testNamespace(t, resolvertest.Stack{})
	srv.Set("*.slow.test", dns.TypeA, testdns.Behaviour{Addrs: []netip.Addr{v4addr}, Delay: 10 * time.Millisecond})
	const n, bound = 1000, 16
	var rep floodReport
	// Threads idle out after 5 s: long enough that a loaded machine, slow
	// to hand a finished slot to the next lookup (the dispatcher that
	// frees it was seen starved for over a second under -race with every
	// core busy), does not make a busy pool's threads exit and be made
	// again mid-flood.
	inChild(t, ns, childArgs{Mode: "flood", Host: "slow.test", N: n, MaxInFlight: bound, TimeoutMS: 30000, IdleMS: 5000}, &rep)
	st := rep.Stats
	t.Logf("threads created %d for %d lookups, at most %d alive", st.Threads.Created, n, rep.MaxPoolThreads)
	if rep.Answered != n {
		t.Errorf("%d of %d answered; %d timed out, %d other (%s)", rep.Answered, n, rep.Canceled, rep.Other, rep.OtherSample)
	}
	// The warm-up lookup's thread exited before the flood began.
	if rep.MaxPoolThreads > bound || st.Threads.Created > bound+1 {
		t.Errorf("%d threads alive at most, %d created; bound %d", rep.MaxPoolThreads, st.Threads.Created, bound)
	}
}

// Identical lookups in flight share one getaddrinfo call.
func TestSystemSharedLookups(t *testing.T) {
	ns, srv := testNamespace(t, resolvertest.Stack{})
	srv.Set("shared.test", dns.TypeA, testdns.Behaviour{Addrs: []netip.Addr{v4addr}, Delay: 200 * time.Millisecond})
	var rep struct {
		OK    int
		Stats core.SystemResolverStats
	}
	inChild(t, ns, childArgs{Mode: "shared", Host: "shared.test", N: 50, IdleMS: 50}, &rep)
	if rep.OK != 50 || rep.Stats.Shared != 49 || rep.Stats.Completed != 1 {
		t.Errorf("50 identical lookups: %d answered, stats %+v", rep.OK, rep.Stats)
	}
	if n := srv.Count("shared.test", dns.TypeA); n != 1 {
		t.Errorf("server saw %d A queries, want 1", n)
	}
}

// AI_ADDRCONFIG done right: a loopback-only host still resolves localhost
// in both families (Ruby Bug #20048) and asks DNS for both; an IPv4-only
// host skips AAAA at once without a query (#19144); a dual-stack host asks
// for both.
func TestAddrConfig(t *testing.T) {
	cases := []struct {
		name     string
		stack    resolvertest.Stack
		wantAAAA bool
		families [2]bool // ipv4, ipv6 usable
	}{
		{"loopback-only", resolvertest.Stack{}, true, [2]bool{false, false}},
		{"ipv4-only", resolvertest.Stack{IPv4: true}, false, [2]bool{true, false}},
		{"ipv6-only", resolvertest.Stack{IPv6: true}, true, [2]bool{false, true}},
		{"dual-stack", resolvertest.Stack{IPv4: true, IPv6: true}, true, [2]bool{true, true}},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			ns, srv := testNamespace(t, c.stack)
			srv.Set("dual.test", 0, testdns.Behaviour{Addrs: []netip.Addr{v6addr, v4addr}})
			var fam map[string]bool
			inChild(t, ns, childArgs{Mode: "families"}, &fam)
			if !fam["known"] || fam["ipv4"] != c.families[0] || fam["ipv6"] != c.families[1] {
				t.Errorf("families seen: %v", fam)
			}
			for _, res := range resolvers {
				checkAddrConfig(t, ns, res, c.wantAAAA, c.families)
			}
			v4 := c.families[0] || !c.families[1]
			if got := srv.Count("dual.test", dns.TypeAAAA) > 0; got != c.wantAAAA {
				t.Errorf("AAAA query sent: %v, want %v (%v)", got, c.wantAAAA, srv.Queries(""))
			}
			if got := srv.Count("dual.test", dns.TypeA) > 0; got != v4 {
				t.Errorf("A query sent: %v, want %v", got, v4)
			}
		})
	}
}

func checkAddrConfig(t *testing.T, ns *resolvertest.Namespace, res string, wantAAAA bool, families [2]bool) {
	t.Helper()
	var local, dual []lookupOutcome
	inChild(t, ns, childArgs{Mode: "lookup", Resolver: res, Host: "localhost", IdleMS: 50}, &local)
	inChild(t, ns, childArgs{Mode: "lookup", Resolver: res, Host: "dual.test", IdleMS: 50}, &dual)
	if families[0] || !families[1] {
		wantAddrs(t, byFamily(local, core.IPv4), "127.0.0.1")
		wantAddrs(t, byFamily(dual, core.IPv4), v4addr.String())
	}
	if wantAAAA {
		wantAddrs(t, byFamily(local, core.IPv6), "::1")
		wantAddrs(t, byFamily(dual, core.IPv6), v6addr.String())
	} else {
		o := byFamily(dual, core.IPv6)
		// No query (counted by the caller) is the proof; the bound only
		// says "without waiting for anything", with room for a loaded machine.
		if o.Code != core.EAI_ADDRFAMILY || o.ElapsedMS > 500 {
			t.Errorf("%s resolver: AAAA code %d after %.1f ms, want EAI_ADDRFAMILY at once", res, o.Code, o.ElapsedMS)
		}
	}
}

// The policy follows the host: an IPv6 address added to an IPv4-only host
// is seen through the netlink subscription, and AAAA is asked again.
func TestAddrConfigFollowsChanges(t *testing.T) {
	ns, srv := testNamespace(t, resolvertest.Stack{IPv4: true})
	srv.Set("dual.test", 0, testdns.Behaviour{Addrs: []netip.Addr{v6addr, v4addr}})
	raw, _ := json.Marshal(childArgs{Mode: "addrwatch", Host: "dual.test", IdleMS: 50})
	cmd := ns.Command(os.Args[0], "-test.run=^$")
	cmd.Env = append(os.Environ(), childEnv+"="+string(raw))
	stdin, _ := cmd.StdinPipe()
	stdout, _ := cmd.StdoutPipe()
	cmd.Stderr = os.Stderr
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	defer cmd.Wait()
	lines := bufio.NewScanner(stdout)
	if !lines.Scan() || lines.Text() != `{"ipv6":false}` {
		t.Fatalf("child started with %q, want no IPv6", lines.Text())
	}
	if err := ns.IP("addr", "add", "2001:db8::2/64", "dev", "d0", "nodad"); err != nil {
		t.Fatal(err)
	}
	stdin.Write([]byte("go\n"))
	if !lines.Scan() {
		t.Fatal("child said nothing")
	}
	var rep struct {
		IPv6    bool
		SeenMS  float64 `json:"seen_ms"`
		Lookups []lookupOutcome
	}
	json.Unmarshal(lines.Bytes(), &rep)
	t.Logf("IPv6 seen after %.1f ms", rep.SeenMS)
	if !rep.IPv6 {
		t.Fatal("the new IPv6 address was never seen")
	}
	wantAddrs(t, byFamily(rep.Lookups, core.IPv6), v6addr.String())
}

// When no thread can be created (a pids cgroup at its limit), the lookup
// fails with EAI_SYSTEM and pthread_create's errno (EAGAIN), not with a
// misleading EAI_AGAIN and not with a crash; once threads can be had again,
// lookups work.
func TestSystemNoThreadIsEAISystem(t *testing.T) {
	ns, _ := testNamespace(t, resolvertest.Stack{})
	cg := pidsCgroup(t)
	var out struct {
		Capped       lookupOutcome
		ThreadErrors uint64 `json:"thread_errors"`
		After        lookupOutcome
	}
	var files []*os.File
	for _, name := range []string{"cgroup.procs", "pids.max", "pids.current"} {
		flag := os.O_WRONLY
		if name == "pids.current" {
			flag = os.O_RDONLY
		}
		f, err := os.OpenFile(cg+"/"+name, flag, 0)
		if err != nil {
			t.Fatal(err)
		}
		defer f.Close()
		files = append(files, f)
	}
	inChild(t, ns, childArgs{Mode: "nothread", IdleMS: 20}, &out, files...)
	t.Logf("%+v", out)
	if out.Capped.Code != core.EAI_SYSTEM || syscall.Errno(out.Capped.Errno) != syscall.EAGAIN || out.ThreadErrors != 1 {
		t.Errorf("with no thread to be had: code %d errno %d (%s), thread errors %d; want EAI_SYSTEM with EAGAIN",
			out.Capped.Code, out.Capped.Errno, out.Capped.Err, out.ThreadErrors)
	}
	wantAddrs(t, out.After, "127.0.0.1")
}

// pidsCgroup makes a pids cgroup of the test's own (cgroup v1 or v2) and
// removes it afterwards.
func pidsCgroup(t *testing.T) string {
	t.Helper()
	base := "/sys/fs/cgroup/pids" // cgroup v1
	if _, err := os.Stat(base); err != nil {
		ctl, _ := os.ReadFile("/sys/fs/cgroup/cgroup.subtree_control")
		if !strings.Contains(string(ctl), "pids") {
			t.Skip("SKIP: no pids cgroup controller to cap thread creation with")
		}
		base = "/sys/fs/cgroup"
	}
	dir := fmt.Sprintf("%s/hev2r-%d", base, os.Getpid())
	if err := os.Mkdir(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		for i := 0; i < 100; i++ {
			if os.Remove(dir) == nil {
				return
			}
			time.Sleep(10 * time.Millisecond)
		}
		t.Errorf("cgroup %s not removed", dir)
	})
	return dir
}

// A burst of 2,000 lookups of distinct silent names, all released: the
// calls already inside glibc stay there until its timeout, but they hold no
// slot, and once DefaultHandOverAt of them are there, names that go to DNS
// anyway are asked of the built-in client, which holds no thread. So the
// process stays under 300 threads, and a hosts-file name and a name the
// server answers resolve at once while the abandoned calls are still there.
// nsswitch.conf is a desktop's (nss-mdns between files and DNS: the module
// is absent here, and names outside .local pass it either way).
func TestSystemAbandonedBurstNeverStarves(t *testing.T) {
	ns, srv := testNamespace(t, resolvertest.Stack{})
	srv.Set("*.silent.test", 0, testdns.Behaviour{Never: true})
	srv.Set("good.test", dns.TypeA, testdns.Behaviour{Addrs: []netip.Addr{v4addr}})
	if err := ns.WriteEtc("hosts", resolvertest.Hosts+"198.18.0.77 hosted.test\n"); err != nil {
		t.Fatal(err)
	}
	if err := ns.WriteEtc("nsswitch.conf", "hosts: files mdns4_minimal [NOTFOUND=return] dns\n"); err != nil {
		t.Fatal(err)
	}
	// glibc's longest timeout, far beyond the time it takes to make the
	// burst even on a loaded machine under -race (12 s was seen): every
	// silent call must still be inside glibc when it is released and when
	// the lookups after it are made (the child exits without waiting).
	if err := ns.WriteEtc("resolv.conf", "nameserver 127.0.0.1\noptions timeout:30 attempts:1\n"); err != nil {
		t.Fatal(err)
	}
	const n = 2000
	var rep starveReport
	inChild(t, ns, childArgs{Mode: "starve", Host: "silent.test", N: n}, &rep)
	t.Logf("burst: %v; in glibc after it: %d; handed over to the built-in client: %d; hosts-file lookup %.1f ms, "+
		"DNS lookup %.1f ms; in glibc then: %d; pool threads at most %d (hand-over at %d, cap %d), process threads %d -> at most %d",
		rep.Outcomes, rep.BusyAfterBurst, rep.Stats.HandedOver, rep.HostsFile.ElapsedMS, rep.Healthy.ElapsedMS, rep.BusyAfterHealthy,
		rep.MaxPoolThreads, resolve.HandOverAt(), core.MaxResolverThreads(), rep.Baseline, rep.MaxThreads)
	if rep.Outcomes["released"] != n {
		t.Errorf("the burst ended otherwise: %v", rep.Outcomes)
	}
	if len(rep.HostsFile.Addrs) != 1 || rep.HostsFile.Addrs[0] != "198.18.0.77" {
		t.Errorf("hosts-file name: %+v", rep.HostsFile)
	}
	if len(rep.Healthy.Addrs) != 1 || rep.Healthy.Addrs[0] != v4addr.String() {
		t.Errorf("healthy name: %+v", rep.Healthy)
	}
	// The proof that they did not wait for the burst: it was still there.
	if rep.BusyAfterHealthy == 0 {
		t.Errorf("the abandoned calls had all returned before the healthy lookups did (%+v)", rep)
	}
	// Both answer in about a millisecond; the bound leaves a loaded
	// machine room and still lies far below glibc's 10 s timeout.
	for _, o := range []lookupOutcome{rep.HostsFile, rep.Healthy} {
		if o.ElapsedMS > 1000 {
			t.Errorf("a lookup during the burst took %.0f ms", o.ElapsedMS)
		}
	}
	if rep.Stats.HandedOver == 0 || rep.MaxPoolThreads > resolve.HandOverAt()+runtime.GOMAXPROCS(0) {
		t.Errorf("%d lookups handed over, %d getaddrinfo threads at most (hand-over at %d)",
			rep.Stats.HandedOver, rep.MaxPoolThreads, resolve.HandOverAt())
	}
	if rep.MaxThreads > 300 {
		t.Errorf("the process reached %d threads", rep.MaxThreads)
	}
}

// Hand-over needs a lookup whose getaddrinfo answer the built-in client
// gives too: with another source in nsswitch.conf, or a resolv.conf option
// that changes glibc's answers, every lookup stays with getaddrinfo, and
// the hard cap holds the threads (a fast EAI_SYSTEM/EAGAIN beyond it).
func TestSystemNoHandOverWithoutDNSOnlyPath(t *testing.T) {
	for _, c := range []struct{ name, nsswitch, options string }{
		{"mdns4 after dns", "hosts: files dns mdns4\n", ""},
		{"no-aaaa", "hosts: files dns\n", " no-aaaa"},
	} {
		t.Run(strings.ReplaceAll(c.name, " ", "_"), func(t *testing.T) {
			ns, srv := testNamespace(t, resolvertest.Stack{})
			srv.Set("*.silent.test", 0, testdns.Behaviour{Never: true})
			if err := ns.WriteEtc("nsswitch.conf", c.nsswitch); err != nil {
				t.Fatal(err)
			}
			if err := ns.WriteEtc("resolv.conf", "nameserver 127.0.0.1\noptions timeout:10 attempts:1"+c.options+"\n"); err != nil {
				t.Fatal(err)
			}
			const n = 400
			var rep starveReport
			inChild(t, ns, childArgs{Mode: "starve", Host: "silent.test", N: n}, &rep)
			t.Logf("burst: %v; handed over %d; pool threads at most %d (cap %d), process threads %d -> at most %d",
				rep.Outcomes, rep.Stats.HandedOver, rep.MaxPoolThreads, core.MaxResolverThreads(), rep.Baseline, rep.MaxThreads)
			if rep.Stats.HandedOver != 0 {
				t.Errorf("%d lookups handed over", rep.Stats.HandedOver)
			}
			if rep.Outcomes["released"]+rep.Outcomes["refused at the thread cap"] != n {
				t.Errorf("the burst ended otherwise: %v", rep.Outcomes)
			}
			if rep.MaxPoolThreads > core.MaxResolverThreads() || rep.MaxThreads > 300 {
				t.Errorf("%d getaddrinfo threads (cap %d), %d in the process", rep.MaxPoolThreads, core.MaxResolverThreads(), rep.MaxThreads)
			}
		})
	}
}

// barrier asks the namespace's DNS server one query of its own over UDP and
// waits for the answer: every query sent to it before (by a child that has
// exited) has been read from the same socket first, and so counted.
func barrier(t *testing.T, ns *resolvertest.Namespace) {
	t.Helper()
	q := new(dns.Msg)
	q.SetQuestion("barrier.test.", dns.TypeA)
	err := ns.Do(func() error {
		c := &dns.Client{Net: "udp", Timeout: 5 * time.Second}
		_, _, err := c.Exchange(q, "127.0.0.1:53")
		return err
	})
	if err != nil {
		t.Fatalf("barrier query: %v", err)
	}
}
