// Command resolverbench measures the resolvers side by side against the test
// DNS server, inside a network namespace of its own (getaddrinfo reads the
// namespace's resolv.conf, never the machine's):
//
//   - lookup latency and allocations per lookup (one A lookup at a time) of
//     hev2's system resolver, its built-in resolver, Go's net.Resolver (pure
//     Go, and its cgo getaddrinfo mode) and a plain C getaddrinfo loop;
//
//   - OS threads created per 1,000 lookups (32 at a time, distinct names,
//     both families), each resolver in a fresh process.
//
//     resolverbench -gai-loop build/gai_loop [-benchtime 1s]
//
// Root only (network namespaces).
package main

import (
	"context"
	"encoding/json"
	"flag"
	"fmt"
	"net"
	"net/netip"
	"os"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/hev2/hev2/core"
	"github.com/hev2/hev2/internal/resolve"
	"github.com/hev2/hev2/tests/resolvertest"
	"github.com/hev2/hev2/tests/testdns"
)

const benchHost = "bench.test"

var resolverNames = []string{"hev2-system", "hev2-builtin", "go-net", "go-net-cgo"}

// childEnv is the environment a resolver's child needs: Go's net package
// picks its cgo (getaddrinfo) resolver only when told to.
var childEnv = map[string]string{"go-net-cgo": "GODEBUG=netdns=cgo"}

func main() {
	child := flag.String("child", "", "internal: run one measurement (latency|threads) in this process")
	resolver := flag.String("resolver", "", "internal: the resolver a child measures")
	gaiLoop := flag.String("gai-loop", "", "the C getaddrinfo loop program (required)")
	benchtime := flag.Duration("benchtime", time.Second, "how long each latency measurement runs")
	threadLookups := flag.Int("thread-lookups", 1000, "lookups of the threads measurement")
	flag.Parse()
	if *child != "" {
		out, err := runChild(*child, *resolver, *benchtime, *threadLookups)
		if err != nil {
			fmt.Fprintln(os.Stderr, "resolverbench child:", err)
			os.Exit(1)
		}
		json.NewEncoder(os.Stdout).Encode(out)
		return
	}
	if *gaiLoop == "" {
		fmt.Fprintln(os.Stderr, "usage: resolverbench -gai-loop PATH [-benchtime D]")
		os.Exit(2)
	}
	if os.Geteuid() != 0 {
		fmt.Println("SKIP: bench-resolvers needs root (network namespaces)")
		return
	}
	if err := parent(*gaiLoop, *benchtime, *threadLookups); err != nil {
		fmt.Fprintln(os.Stderr, "resolverbench:", err)
		os.Exit(1)
	}
}

type latency struct {
	NsPerOp     float64 `json:"ns_per_op"`
	AllocsPerOp int64   `json:"allocs_per_op"`
	BytesPerOp  int64   `json:"bytes_per_op"`
	Failures    int     `json:"failures"`
}

type threads struct {
	Created     int `json:"created"`      // during the first 1,000 lookups
	CreatedNext int `json:"created_next"` // during the next 1,000
	// Of those, getaddrinfo pool threads (the rest are Go runtime Ms).
	Pool, PoolNext int
	Lookups        int `json:"lookups"`
	Failures       int `json:"failures"`
}

func parent(gaiLoop string, benchtime time.Duration, threadLookups int) error {
	ns, err := resolvertest.NewNamespace(resolvertest.Stack{IPv4: true, IPv6: true})
	if err != nil {
		return err
	}
	defer ns.Close()
	srv, err := ns.ServeDNS()
	if err != nil {
		return err
	}
	defer srv.Close()
	rule := testdns.Behaviour{Addrs: []netip.Addr{netip.MustParseAddr("2001:db8::53"), netip.MustParseAddr("198.18.0.53")}}
	srv.Set(benchHost, 0, rule)
	srv.Set("*."+benchHost, 0, rule)

	self, err := os.Executable()
	if err != nil {
		return err
	}
	lat := map[string]latency{}
	thr := map[string]threads{}
	for _, r := range resolverNames {
		var l latency
		if err := runIn(ns, &l, childEnv[r], self, "-child", "latency", "-resolver", r, "-benchtime", benchtime.String()); err != nil {
			return err
		}
		lat[r] = l
		var t threads
		if err := runIn(ns, &t, childEnv[r], self, "-child", "threads", "-resolver", r, "-thread-lookups", strconv.Itoa(threadLookups)); err != nil {
			return err
		}
		thr[r] = t
	}
	// The C loop runs as many calls as the system resolver managed in
	// benchtime, so both see the same server for about as long.
	n := int(benchtime.Seconds() * 1e9 / max(lat["hev2-system"].NsPerOp, 1))
	var c latency
	if err := runIn(ns, &c, "", gaiLoop, benchHost, "4", strconv.Itoa(max(n, 100))); err != nil {
		return err
	}
	lat["c-getaddrinfo"] = c
	report(lat, thr, threadLookups)
	return nil
}

func runIn(ns *resolvertest.Namespace, out any, env, name string, args ...string) error {
	cmd := ns.Command(name, args...)
	if env != "" {
		cmd.Env = append(os.Environ(), env)
	}
	cmd.Stderr = os.Stderr
	stdout, err := cmd.Output()
	if err != nil {
		return fmt.Errorf("%s %s: %w", name, strings.Join(args, " "), err)
	}
	return json.Unmarshal(stdout, out)
}

func report(lat map[string]latency, thr map[string]threads, lookups int) {
	base := lat["c-getaddrinfo"].NsPerOp
	goNet := lat["go-net"]
	fmt.Printf("resolver lookup latency (one A lookup at a time, test DNS server on the namespace's loopback)\n")
	fmt.Printf("%-14s %12s %9s %11s %10s %14s %9s\n", "resolver", "µs/lookup", "vs C", "allocs/op", "B/op", "allocs vs Go", "failures")
	for _, r := range append(resolverNames, "c-getaddrinfo") {
		l := lat[r]
		allocs, ratio := "n/a", "n/a"
		if r != "c-getaddrinfo" {
			allocs = strconv.FormatInt(l.AllocsPerOp, 10)
			ratio = fmt.Sprintf("%.2fx", float64(l.AllocsPerOp)/float64(max(goNet.AllocsPerOp, 1)))
		}
		bytes := "n/a"
		if r != "c-getaddrinfo" {
			bytes = strconv.FormatInt(l.BytesPerOp, 10)
		}
		fmt.Printf("%-14s %12.1f %8.2fx %11s %10s %14s %9d\n", r, l.NsPerOp/1000, l.NsPerOp/base, allocs, bytes, ratio, l.Failures)
	}
	fmt.Printf("\nOS threads created per %d lookups (32 at a time, distinct names, AAAA and A), fresh process each\n", lookups)
	fmt.Printf("(getaddrinfo pool threads in brackets; the rest are Go runtime threads, which Go never gives back)\n")
	fmt.Printf("%-14s %12s %14s %9s\n", "resolver", "first", "next (reuse)", "failures")
	for _, r := range resolverNames {
		t := thr[r]
		fmt.Printf("%-14s %12s %14s %9d\n", r, fmt.Sprintf("%d (%d)", t.Created, t.Pool), fmt.Sprintf("%d (%d)", t.CreatedNext, t.PoolNext), t.Failures)
	}
	fmt.Printf("%-14s %12s %14s %9s\n", "c-getaddrinfo", "0", "0", "-")
	fmt.Println("(c-getaddrinfo is a single-threaded loop: it cannot look up two families at once or be canceled)")
}

func newResolver(name string) (core.Resolver, error) {
	switch name {
	case "hev2-system":
		return core.NewSystemResolver(0), nil
	case "hev2-builtin":
		return core.NewDNSResolver(core.DNSConfig{})
	case "go-net":
		return resolve.NetResolver{Resolver: &net.Resolver{PreferGo: true}}, nil
	case "go-net-cgo":
		// getaddrinfo on the calling goroutine's thread (GODEBUG=netdns=cgo).
		return resolve.NetResolver{Resolver: &net.Resolver{}}, nil
	}
	return nil, fmt.Errorf("unknown resolver %q", name)
}

func runChild(mode, name string, benchtime time.Duration, lookups int) (any, error) {
	r, err := newResolver(name)
	if err != nil {
		return nil, err
	}
	ctx := context.Background()
	// Warm up: first-use set-up (sockets, the netlink watcher, a thread)
	// is not what is measured.
	if _, err := r.LookupFamily(ctx, benchHost, core.IPv4); err != nil {
		return nil, fmt.Errorf("warm-up: %w", err)
	}
	switch mode {
	case "latency":
		testing.Init()
		flag.Set("test.benchtime", benchtime.String())
		failures := 0
		res := testing.Benchmark(func(b *testing.B) {
			b.ReportAllocs()
			for b.Loop() {
				if _, err := r.LookupFamily(ctx, benchHost, core.IPv4); err != nil {
					failures++
				}
			}
		})
		return latency{NsPerOp: float64(res.T.Nanoseconds()) / float64(res.N), AllocsPerOp: res.AllocsPerOp(), BytesPerOp: res.AllocedBytesPerOp(), Failures: failures}, nil
	case "threads":
		first := countThreads(ctx, r, lookups, 0)
		next := countThreads(ctx, r, lookups, lookups)
		first.CreatedNext, first.PoolNext, first.Failures = next.Created, next.Pool, first.Failures+next.Failures
		return first, nil
	}
	return nil, fmt.Errorf("unknown child mode %q", mode)
}

// countThreads runs lookups, 32 at a time, and counts the OS threads the
// process created meanwhile: the growth of its thread count plus the
// getaddrinfo threads that exited (Go's own threads never exit).
func countThreads(ctx context.Context, r core.Resolver, lookups, firstName int) threads {
	before, poolBefore := resolvertest.OSThreads(), resolve.GAIThreads()
	var wg sync.WaitGroup
	var mu sync.Mutex
	out := threads{Lookups: lookups}
	next := make(chan int)
	for w := 0; w < 32; w++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := range next {
				family := core.IPv4
				if i%2 == 0 {
					family = core.IPv6
				}
				if _, err := r.LookupFamily(ctx, "n"+strconv.Itoa(i/2)+"."+benchHost, family); err != nil {
					mu.Lock()
					out.Failures++
					mu.Unlock()
				}
			}
		}()
	}
	for i := firstName; i < firstName+lookups; i++ {
		next <- i
	}
	close(next)
	wg.Wait()
	after, poolAfter := resolvertest.OSThreads(), resolve.GAIThreads()
	exited := int(poolAfter.Created-poolBefore.Created) - (poolAfter.Threads - poolBefore.Threads)
	out.Created = after - before + exited
	out.Pool = int(poolAfter.Created - poolBefore.Created)
	return out
}
