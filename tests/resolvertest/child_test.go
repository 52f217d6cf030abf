package resolvertest_test

// getaddrinfo reads /etc/resolv.conf and /etc/hosts, so it can only be
// tested inside a namespace of our own whose /etc/netns files point to the
// test DNS server. The tests re-run this test binary there
// (`ip netns exec NS <test binary>`) in "child" mode: TestMain sees
// HEV2_RESOLVERTEST_CHILD, runs one scenario, prints one JSON line and exits.

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net/netip"
	"os"
	"os/exec"
	"runtime"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/hev2/hev2/core"
	"github.com/hev2/hev2/internal/resolve"
	"github.com/hev2/hev2/tests/resolvertest"
	"github.com/hev2/hev2/tests/testbed"
)

const childEnv = "HEV2_RESOLVERTEST_CHILD"

// childArgs is what a scenario gets from the parent.
type childArgs struct {
	Mode        string
	Resolver    string // "system" (default) or "builtin"
	Host        string
	Families    []core.Family
	TimeoutMS   int
	CancelMS    int
	N           int
	MaxInFlight int
	Port        uint16
	IdleMS      int
	MaxThreads  int      // the resolver thread cap (0: the default)
	Hosts       []string // names for the "hostsfile" mode
	// ResolutionDelayMS sets the Dialer's Resolution Delay (0: RFC 8305's).
	ResolutionDelayMS int
}

// lookupOutcome is one family's answer as the child saw it.
type lookupOutcome struct {
	Family    core.Family
	Addrs     []string
	Code      int
	Errno     int
	Err       string
	Canceled  bool
	ElapsedMS float64
}

func TestMain(m *testing.M) {
	if raw := os.Getenv(childEnv); raw != "" {
		var a childArgs
		if err := json.Unmarshal([]byte(raw), &a); err != nil {
			fmt.Fprintln(os.Stderr, "bad child args:", err)
			os.Exit(2)
		}
		out, err := runChild(a)
		if err != nil {
			fmt.Fprintln(os.Stderr, "child:", err)
			os.Exit(1)
		}
		json.NewEncoder(os.Stdout).Encode(out)
		os.Exit(0)
	}
	os.Exit(m.Run())
}

// commander makes a command that runs inside a namespace: a
// resolvertest.Namespace's or the test bed's client namespace.
type commander interface {
	Command(name string, args ...string) *exec.Cmd
}

// bedClient runs commands in the test bed's client namespace.
type bedClient struct{ bed *testbed.Bed }

func (b bedClient) Command(name string, args ...string) *exec.Cmd {
	return b.bed.Command(context.Background(), append([]string{name}, args...)...)
}

// inChild runs scenario a in namespace ns and decodes its JSON into out.
// files become the child's fds 3, 4, ...
func inChild(t testing.TB, ns commander, a childArgs, out any, files ...*os.File) {
	t.Helper()
	raw, _ := json.Marshal(a)
	cmd := ns.Command(os.Args[0], "-test.run=^$")
	// GORACE: a race-enabled child would otherwise sleep 1 s at exit.
	cmd.Env = append(os.Environ(), childEnv+"="+string(raw), "GORACE=atexit_sleep_ms=0")
	cmd.ExtraFiles = files
	var stderr strings.Builder
	cmd.Stderr = &stderr
	stdout, err := cmd.Output()
	if err != nil {
		t.Fatalf("child %s: %v\n%s", a.Mode, err, stderr.String())
	}
	if err := json.Unmarshal(stdout, out); err != nil {
		t.Fatalf("child %s output %q: %v", a.Mode, stdout, err)
	}
}

func runChild(a childArgs) (any, error) {
	if a.IdleMS > 0 {
		resolve.SetGAIThreadIdleTimeout(time.Duration(a.IdleMS) * time.Millisecond)
	}
	if a.MaxThreads > 0 {
		resolve.SetMaxThreads(a.MaxThreads)
	}
	switch a.Mode {
	case "starve":
		return childStarve(a)
	case "connectburst":
		return childConnectBurst(a)
	case "lookup":
		return childLookup(a)
	case "emfile":
		return childEMFILE(a)
	case "flood":
		return childFlood(a)
	case "cancel":
		return childCancel(a)
	case "families":
		v4, v6, known := resolve.AddrConfigFamilies()
		return map[string]bool{"ipv4": v4, "ipv6": v6, "known": known}, nil
	case "addrwatch":
		return childAddrWatch(a)
	case "shared":
		return childShared(a)
	case "connect":
		return childConnect(a)
	case "nothread":
		return childNoThread(a)
	case "hostsfile":
		return childHostsFile(a)
	}
	return nil, fmt.Errorf("unknown mode %q", a.Mode)
}

// warmUp starts what a resolver starts once per process -- its own
// machinery, and getaddrinfo's (the completion dispatcher and its eventfd,
// a pool thread), which a name the hosts file answers would not start --
// so that counts taken after it show only what a test's lookups leave.
func warmUp(r core.Resolver) error {
	if _, err := r.LookupFamily(context.Background(), "localhost", core.IPv4); err != nil {
		return err
	}
	_, err := (&core.SystemResolver{AlwaysGetaddrinfo: true}).LookupFamily(context.Background(), "localhost", core.IPv4)
	return err
}

func childResolver(a childArgs) (core.Resolver, error) {
	switch a.Resolver {
	case "", "system":
		if a.MaxInFlight > 0 {
			return core.NewSystemResolver(a.MaxInFlight), nil
		}
		return core.DefaultSystemResolver, nil
	case "builtin":
		// Reads the namespace's resolv.conf and hosts, as getaddrinfo does.
		return core.NewDNSResolver(core.DNSConfig{})
	}
	return nil, fmt.Errorf("unknown resolver %q", a.Resolver)
}

func outcome(family core.Family, addrs []netip.Addr, err error, elapsed time.Duration) lookupOutcome {
	o := lookupOutcome{Family: family, ElapsedMS: float64(elapsed.Microseconds()) / 1000}
	for _, a := range addrs {
		o.Addrs = append(o.Addrs, a.String())
	}
	if err != nil {
		o.Err = err.Error()
		var re *core.ResolveError
		if errors.As(err, &re) {
			o.Code, o.Errno = re.Code, int(re.Errno)
		}
		o.Canceled = errors.Is(err, context.Canceled) || errors.Is(err, context.DeadlineExceeded)
	}
	return o
}

// lookupAll looks up every family of a at once, as the engine does.
func lookupAll(ctx context.Context, r core.Resolver, a childArgs) []lookupOutcome {
	families := a.Families
	if len(families) == 0 {
		families = []core.Family{core.IPv6, core.IPv4}
	}
	outs := make([]lookupOutcome, len(families))
	var wg sync.WaitGroup
	start := time.Now()
	for i, f := range families {
		wg.Add(1)
		go func() {
			defer wg.Done()
			addrs, err := r.LookupFamily(ctx, a.Host, f)
			outs[i] = outcome(f, addrs, err, time.Since(start))
		}()
	}
	wg.Wait()
	return outs
}

// lookupOne looks up one family of host.
func lookupOne(ctx context.Context, r core.Resolver, host string, f core.Family) lookupOutcome {
	start := time.Now()
	addrs, err := r.LookupFamily(ctx, host, f)
	return outcome(f, addrs, err, time.Since(start))
}

func childLookup(a childArgs) (any, error) {
	r, err := childResolver(a)
	if err != nil {
		return nil, err
	}
	ctx := context.Background()
	if a.TimeoutMS > 0 {
		var cancel context.CancelFunc
		ctx, cancel = context.WithTimeout(ctx, time.Duration(a.TimeoutMS)*time.Millisecond)
		defer cancel()
	}
	return lookupAll(ctx, r, a), nil
}

// childEMFILE takes every free fd under a small RLIMIT_NOFILE, then looks
// a name up: getaddrinfo cannot open its DNS socket.
func childEMFILE(a childArgs) (any, error) {
	r := core.DefaultSystemResolver
	// Start the resolver (its eventfd and netlink socket) while fds are free.
	if err := warmUp(r); err != nil {
		return nil, fmt.Errorf("warm-up lookup: %w", err)
	}
	lim := syscall.Rlimit{Cur: 64, Max: 64}
	if err := syscall.Setrlimit(syscall.RLIMIT_NOFILE, &lim); err != nil {
		return nil, err
	}
	var held []int
	for {
		fd, err := syscall.Open("/dev/null", syscall.O_RDONLY|syscall.O_CLOEXEC, 0)
		if err != nil {
			if err != syscall.EMFILE {
				return nil, fmt.Errorf("filling fds: %w", err)
			}
			break
		}
		held = append(held, fd)
	}
	addrs, err := r.LookupFamily(context.Background(), a.Host, core.IPv4)
	o := outcome(core.IPv4, addrs, err, 0)
	for _, fd := range held {
		syscall.Close(fd)
	}
	return map[string]any{"held": len(held), "outcome": o}, nil
}

// floodReport is what a flood of lookups against a silent server did.
type floodReport struct {
	Baseline, MaxThreads, ThreadsAfter int
	MaxPoolThreads                     int // getaddrinfo threads alive at once
	Bound                              int
	Answered, Canceled, Other          int
	CapRefused                         int // failed at once at the thread cap
	OtherSample                        string
	GoroutinesBefore, GoroutinesAfter  int
	ElapsedMS                          float64
	Stats                              core.SystemResolverStats
}

func childFlood(a childArgs) (any, error) {
	r := core.NewSystemResolver(a.MaxInFlight)
	rep := floodReport{Bound: a.MaxInFlight}
	// Warm up: the dispatcher, the netlink watcher and a pool thread.
	warmUp(r)
	waitPoolEmpty()
	rep.Baseline, rep.GoroutinesBefore = resolvertest.OSThreads(), runtime.NumGoroutine()

	peaks := sampleThreadPeaks()
	var mu sync.Mutex
	var wg sync.WaitGroup
	start := time.Now()
	for i := 0; i < a.N; i++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			ctx, cancel := context.WithTimeout(context.Background(), time.Duration(a.TimeoutMS)*time.Millisecond)
			defer cancel()
			_, err := r.LookupFamily(ctx, "n"+strconv.Itoa(i)+"."+a.Host, core.IPv4)
			mu.Lock()
			defer mu.Unlock()
			if err == nil {
				rep.Answered++
			} else if errors.Is(err, context.DeadlineExceeded) {
				rep.Canceled++
			} else if errors.Is(err, resolve.ErrThreadCap) {
				rep.CapRefused++
			} else {
				rep.Other++
				rep.OtherSample = fmt.Sprint(err)
			}
		}()
	}
	wg.Wait()
	rep.ElapsedMS = float64(time.Since(start).Microseconds()) / 1000
	// The abandoned calls end when glibc gives up (timeout:1 attempts:1).
	for deadline := time.Now().Add(10 * time.Second); r.Stats().InFlight > 0 && time.Now().Before(deadline); {
		time.Sleep(10 * time.Millisecond)
	}
	rep.MaxThreads, rep.MaxPoolThreads = peaks()
	waitPoolEmpty()
	rep.ThreadsAfter, rep.GoroutinesAfter = resolvertest.OSThreads(), settledGoroutines(rep.GoroutinesBefore)
	rep.Stats = r.Stats()
	return rep, nil
}

// cancelReport is what canceling a never-answered lookup did.
type cancelReport struct {
	ReturnedAfterCancelMS             float64
	Outcome                           lookupOutcome
	InFlightAtCancel                  int64
	Baseline, ThreadsAfter            int
	GoroutinesBefore, GoroutinesAfter int
	FDsBefore, FDsAfter               int
	Stats                             core.SystemResolverStats
}

func childCancel(a childArgs) (any, error) {
	r, err := childResolver(a)
	if err != nil {
		return nil, err
	}
	sys, _ := r.(*core.SystemResolver)
	var rep cancelReport
	// Warm up so that the counts below only show this lookup (the
	// netlink watcher is started by the first lookup that asks DNS).
	warmUp(r)
	resolve.AddrConfigFamilies()
	waitPoolEmpty()
	rep.Baseline, rep.GoroutinesBefore, rep.FDsBefore = resolvertest.OSThreads(), runtime.NumGoroutine(), openFDs()

	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan struct{})
	var canceledAt time.Time
	dnsr, _ := r.(*core.DNSResolver)
	queriesBefore := uint64(0)
	if dnsr != nil {
		queriesBefore = dnsr.Stats().Queries
	}
	// Cancel CancelMS after the start, and not before the query is on its
	// way (a loaded machine may not have run the lookup by then).
	inFlight := func() bool {
		switch {
		case sys != nil:
			return sys.Stats().InFlight > 0
		case dnsr != nil:
			return dnsr.Stats().Queries > queriesBefore
		}
		return true
	}
	go func() {
		time.Sleep(time.Duration(a.CancelMS) * time.Millisecond)
		for deadline := time.Now().Add(10 * time.Second); !inFlight() && time.Now().Before(deadline); {
			time.Sleep(time.Millisecond)
		}
		if sys != nil {
			rep.InFlightAtCancel = sys.Stats().InFlight
		}
		canceledAt = time.Now()
		cancel()
	}()
	start := time.Now()
	go func() {
		a, err := r.LookupFamily(ctx, a.Host, core.IPv6)
		rep.Outcome = outcome(core.IPv6, a, err, time.Since(start))
		close(done)
	}()
	<-done
	rep.ReturnedAfterCancelMS = float64(time.Since(canceledAt).Microseconds()) / 1000
	if sys != nil {
		for deadline := time.Now().Add(10 * time.Second); sys.Stats().InFlight > 0 && time.Now().Before(deadline); {
			time.Sleep(10 * time.Millisecond)
		}
	}
	waitPoolEmpty()
	if sys != nil {
		rep.Stats = sys.Stats()
	}
	rep.ThreadsAfter, rep.GoroutinesAfter, rep.FDsAfter = resolvertest.OSThreads(), settledGoroutines(rep.GoroutinesBefore), openFDs()
	return rep, nil
}

// childAddrWatch prints the host's families, waits for a line on stdin
// (the parent adds an IPv6 address meanwhile) and reports how long the
// change took to be seen, then looks the host up.
func childAddrWatch(a childArgs) (any, error) {
	_, v6, _ := resolve.AddrConfigFamilies()
	fmt.Printf("{\"ipv6\":%v}\n", v6)
	var line string
	fmt.Scanln(&line)
	start := time.Now()
	for !v6 && time.Since(start) < 5*time.Second {
		time.Sleep(time.Millisecond)
		_, v6, _ = resolve.AddrConfigFamilies()
	}
	seen := time.Since(start)
	outs := lookupAll(context.Background(), core.DefaultSystemResolver, a)
	return map[string]any{"ipv6": v6, "seen_ms": float64(seen.Microseconds()) / 1000, "lookups": outs}, nil
}

// waitPoolEmpty waits until every getaddrinfo thread has exited (children
// run with a short idle timeout): the pool counts none, and the kernel's
// task list holds no thread named as the pool names its own.
func waitPoolEmpty() {
	for deadline := time.Now().Add(10 * time.Second); time.Now().Before(deadline); time.Sleep(5 * time.Millisecond) {
		if resolve.GAIThreads().Threads == 0 && resolvertest.NamedThreads("hev2-gai") == 0 {
			return
		}
	}
}

// settledGoroutines waits briefly for goroutines to drop to want.
func settledGoroutines(want int) int {
	n := runtime.NumGoroutine()
	for deadline := time.Now().Add(2 * time.Second); n > want && time.Now().Before(deadline); n = runtime.NumGoroutine() {
		time.Sleep(5 * time.Millisecond)
	}
	return n
}

// childShared starts N identical lookups at once.
func childShared(a childArgs) (any, error) {
	r := core.NewSystemResolver(0)
	var wg sync.WaitGroup
	var mu sync.Mutex
	ok := 0
	for i := 0; i < a.N; i++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			if addrs, err := r.LookupFamily(context.Background(), a.Host, core.IPv4); err == nil && len(addrs) > 0 {
				mu.Lock()
				ok++
				mu.Unlock()
			}
		}()
	}
	wg.Wait()
	return map[string]any{"ok": ok, "stats": r.Stats()}, nil
}

// connectReport is a race run by core.Dialer.Connect with the chosen
// resolver.
type connectReport struct {
	Addr      string
	Err       string
	ElapsedMS float64
	Events    []string // "kind family at_ms"
}

func childConnect(a childArgs) (any, error) {
	r, err := childResolver(a)
	if err != nil {
		return nil, err
	}
	var rep connectReport
	var mu sync.Mutex
	d := core.Dialer{Resolver: r, Trace: func(ev core.TraceEvent) {
		mu.Lock()
		rep.Events = append(rep.Events, fmt.Sprintf("%v %v %.1f", ev.Kind, ev.Family, float64(ev.At.Microseconds())/1000))
		mu.Unlock()
	}}
	if a.TimeoutMS > 0 {
		d.OpenTimeout = time.Duration(a.TimeoutMS) * time.Millisecond
	}
	d.ResolutionDelay = time.Duration(a.ResolutionDelayMS) * time.Millisecond
	res, err := d.Connect(context.Background(), a.Host, a.Port)
	mu.Lock()
	defer mu.Unlock()
	if err != nil {
		rep.Err = err.Error()
		return rep, nil
	}
	syscall.Close(res.FD)
	rep.Addr, rep.ElapsedMS = res.Addr.Addr().String(), float64(res.Elapsed.Microseconds())/1000
	return rep, nil
}

// childNoThread joins a pids cgroup of the test's own, caps it at the threads it
// already has, and looks a name up: no thread can be created, and the
// caller must get EAI_SYSTEM with pthread_create's errno, not a crash.
func childNoThread(a childArgs) (any, error) {
	r := core.NewSystemResolver(0)
	if err := warmUp(r); err != nil {
		return nil, fmt.Errorf("warm-up lookup: %w", err)
	}
	// Give the Go runtime spare threads (Ms) now: it aborts the process
	// when it cannot create one it needs later.
	var wg sync.WaitGroup
	for i := 0; i < 6; i++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			ts := syscall.Timespec{Nsec: int64(30 * time.Millisecond)}
			syscall.Nanosleep(&ts, nil)
		}()
	}
	wg.Wait()
	waitPoolEmpty()
	// `ip netns exec` mounts a sysfs of the namespace's own, without the
	// cgroup tree: the parent passed the cgroup's files as fds 3, 4, 5.
	procs, pidsMax, pidsCurrent := os.NewFile(3, "cgroup.procs"), os.NewFile(4, "pids.max"), os.NewFile(5, "pids.current")
	write := func(f *os.File, value string) error {
		_, err := f.WriteAt([]byte(value), 0)
		return err
	}
	if err := write(procs, strconv.Itoa(os.Getpid())); err != nil {
		return nil, err
	}
	cur := make([]byte, 32)
	n, err := pidsCurrent.ReadAt(cur, 0)
	if n == 0 {
		return nil, fmt.Errorf("pids.current: %v", err)
	}
	if err := write(pidsMax, strings.TrimSpace(string(cur[:n]))); err != nil {
		return nil, err
	}
	addrs, err := r.LookupFamily(context.Background(), "capped.test", core.IPv4)
	capped := outcome(core.IPv4, addrs, err, 0)
	threadErrors := r.Stats().ThreadErrors
	if err := write(pidsMax, "max"); err != nil {
		return nil, err
	}
	addrs, err = r.LookupFamily(context.Background(), "localhost", core.IPv4)
	after := outcome(core.IPv4, addrs, err, 0)
	return map[string]any{"capped": capped, "thread_errors": threadErrors, "after": after}, nil
}

// openFDs is the number of open descriptors of this process.
func openFDs() int {
	entries, err := os.ReadDir("/proc/self/fd")
	if err != nil {
		return -1
	}
	return len(entries)
}

// starveReport is what a burst of abandoned lookups left for the next ones.
type starveReport struct {
	N                    int
	Outcomes             map[string]int // how the burst's lookups ended
	BusyAfterBurst       int            // getaddrinfo calls still in glibc after the burst
	HostsFile, Healthy   lookupOutcome  // the lookups made right after the burst
	BusyAfterHealthy     int            // calls still in glibc when both had answered
	MaxPoolThreads       int
	MaxThreads, Baseline int
	Stats                core.SystemResolverStats
}

// childStarve: N lookups of distinct silent names, every one released
// (canceled) once all have been made, then at once a hosts-file name and a
// name the DNS server answers, while the abandoned calls are still inside
// glibc.
func childStarve(a childArgs) (any, error) {
	r := core.NewSystemResolver(0)
	rep := starveReport{N: a.N, Outcomes: map[string]int{}}
	warmUp(r)
	resolve.AddrConfigFamilies()
	rep.Baseline = resolvertest.OSThreads()
	peaks := sampleThreadPeaks()
	ctx, release := context.WithCancel(context.Background())
	var mu sync.Mutex
	var wg sync.WaitGroup
	for i := 0; i < a.N; i++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			_, err := r.LookupFamily(ctx, "n"+strconv.Itoa(i)+"."+a.Host, core.IPv4)
			kind := "other: " + fmt.Sprint(err)
			switch {
			case err == nil:
				kind = "answered"
			case errors.Is(err, context.Canceled):
				kind = "released"
			case errors.Is(err, resolve.ErrThreadCap):
				kind = "refused at the thread cap"
			}
			mu.Lock()
			rep.Outcomes[kind]++
			mu.Unlock()
		}()
	}
	// Every lookup is made (running or queued) before all are released.
	for deadline := time.Now().Add(5 * time.Second); time.Now().Before(deadline); time.Sleep(5 * time.Millisecond) {
		st := r.Stats()
		if int(st.InFlight+st.Queued+int64(st.CapRefused)) >= a.N || st.Queued > 0 && int(st.InFlight+st.Queued) >= a.N-int(st.CapRefused) {
			break
		}
	}
	release()
	wg.Wait()
	rep.BusyAfterBurst = resolve.BusyCalls()
	// Both at once, as a connect would ask.
	var both sync.WaitGroup
	both.Add(2)
	go func() {
		defer both.Done()
		rep.HostsFile = lookupOne(context.Background(), r, "hosted.test", core.IPv4)
	}()
	go func() {
		defer both.Done()
		rep.Healthy = lookupOne(context.Background(), r, "good.test", core.IPv4)
	}()
	both.Wait()
	rep.BusyAfterHealthy = resolve.BusyCalls()
	rep.MaxThreads, rep.MaxPoolThreads = peaks()
	rep.Stats = r.Stats()
	return rep, nil
}

// sampleThreadPeaks samples the process's threads and the getaddrinfo
// pool's every 2 ms until the returned func is called, which gives their
// peaks.
func sampleThreadPeaks() (peaks func() (process, pool int)) {
	var process, pool int
	stop := make(chan struct{})
	sampled := make(chan struct{})
	go func() {
		defer close(sampled)
		for {
			process = max(process, resolvertest.OSThreads())
			pool = max(pool, resolve.GAIThreads().Threads)
			select {
			case <-stop:
				return
			case <-time.After(2 * time.Millisecond):
			}
		}
	}()
	return func() (int, int) {
		close(stop)
		<-sampled
		return process, pool
	}
}
