// Command dialbench compares core.Dialer.DialContext with net.Dialer's on a
// loopback IP literal, interleaved in one process: rounds of A then B (the
// order alternating from round to round), each a batch of connects, and
// the median of the per-round ratios with their spread. `make bench-core`
// runs it, then counts syscalls per connect with strace over its -mode
// runs (scripts/syscalls-per-connect.sh).
//
//	dialbench [-rounds 15] [-n 400]       # interleaved comparisons (then history on/off)
//	dialbench -serve                      # listens on 127.0.0.1, prints the port
//	dialbench -mode hev2|net -n N -port P # N connects, for strace -c
package main

import (
	"context"
	"flag"
	"fmt"
	"net"
	"net/netip"
	"os"
	"sort"
	"strconv"
	"strings"
	"syscall"
	"time"

	"github.com/hev2/hev2/core"
)

func main() {
	serve := flag.Bool("serve", false, "accept and close connections forever")
	mode := flag.String("mode", "", "hev2 (core.Dialer.DialContext) or net (net.Dialer.DialContext): N connects, no timing")
	n := flag.Int("n", 400, "connects per side per round (or in all, with -mode)")
	rounds := flag.Int("rounds", 15, "interleaved rounds")
	port := flag.Int("port", 0, "listener port on 127.0.0.1 (-mode)")
	flag.Parse()
	switch {
	case *serve:
		ln := listen()
		fmt.Println(ln.Addr().(*net.TCPAddr).Port)
		select {}
	case *mode != "":
		dial := dialer(*mode)
		addr := "127.0.0.1:" + strconv.Itoa(*port)
		runWall(dial, addr, *n)
	default:
		compare(*rounds, *n)
		compareHistory(*rounds, *n)
	}
}

type dialFunc func(context.Context, string, string) (net.Conn, error)

func dialer(mode string) dialFunc {
	switch mode {
	case "hev2":
		return (&core.Dialer{}).DialContext
	case "net":
		return (&net.Dialer{}).DialContext
	}
	fail(fmt.Errorf("unknown mode %q", mode))
	return nil
}

// listen accepts and closes connections on 127.0.0.1 until the process
// ends.
func listen() net.Listener {
	ln, err := net.Listen("tcp4", "127.0.0.1:0")
	if err != nil {
		fail(err)
	}
	go func() {
		for {
			c, err := ln.Accept()
			if err != nil {
				fail(err)
			}
			c.Close()
		}
	}()
	return ln
}

// runCPU makes n connects (each closed at once) and returns the wall
// time per connect and the process's CPU time per connect too (the
// listener's share included, the same for both sides): on a busy machine
// it is less disturbed by waits for a core than wall time is.
func runCPU(dial dialFunc, addr string, n int) (wall, cpu time.Duration) {
	c0 := cpuTime()
	wall = runWall(dial, addr, n)
	return wall, (cpuTime() - c0) / time.Duration(n)
}

func cpuTime() time.Duration {
	var ru syscall.Rusage
	syscall.Getrusage(syscall.RUSAGE_SELF, &ru)
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}

func runWall(dial dialFunc, addr string, n int) time.Duration {
	ctx := context.Background()
	begin := time.Now()
	for i := 0; i < n; i++ {
		c, err := dial(ctx, "tcp", addr)
		if err != nil {
			fail(err)
		}
		c.Close()
	}
	if n == 0 {
		// The start-up run of the syscall count (-n 0): nothing to divide.
		return 0
	}
	return time.Since(begin) / time.Duration(n)
}

func compare(rounds, n int) {
	ln := listen()
	addr := ln.Addr().String()
	hev2, std := dialer("hev2"), dialer("net")
	fmt.Printf("DialContext to a loopback IP literal (%s), hev2 core.Dialer vs net.Dialer: %d interleaved rounds of %d connects each\n", addr, rounds, n)
	fmt.Printf("before: %s\n", sockstat())
	// Warm both paths (runtime poller, allocator, port range) before timing.
	runWall(hev2, addr, n/4+1)
	runWall(std, addr, n/4+1)
	var ratios, cpuRatios []float64
	var hs, ns, hc, nc []time.Duration
	for r := 0; r < rounds; r++ {
		var h, g, hcpu, gcpu time.Duration
		if r%2 == 0 {
			h, hcpu = runCPU(hev2, addr, n)
			g, gcpu = runCPU(std, addr, n)
		} else {
			g, gcpu = runCPU(std, addr, n)
			h, hcpu = runCPU(hev2, addr, n)
		}
		hs, ns, hc, nc = append(hs, h), append(ns, g), append(hc, hcpu), append(nc, gcpu)
		ratios = append(ratios, float64(h)/float64(g))
		cpuRatios = append(cpuRatios, float64(hcpu)/float64(gcpu))
	}
	report := func(what string, ratios []float64, hs, ns []time.Duration) {
		sort.Float64s(ratios)
		sort.Slice(hs, func(i, j int) bool { return hs[i] < hs[j] })
		sort.Slice(ns, func(i, j int) bool { return ns[i] < ns[j] })
		q := func(p float64) float64 { return ratios[int(p*float64(len(ratios)-1)+0.5)] }
		fmt.Printf("%s per connect (median of rounds): hev2 DialContext %v, net.Dialer %v; ratio hev2/net.Dialer: median %.3fx, quartiles %.3f-%.3f, range %.3f-%.3f (goal <= 1.05x)\n",
			what, hs[len(hs)/2].Round(10*time.Nanosecond), ns[len(ns)/2].Round(10*time.Nanosecond),
			q(0.5), q(0.25), q(0.75), ratios[0], ratios[len(ratios)-1])
	}
	report("wall", ratios, hs, ns)
	report("CPU ", cpuRatios, hc, nc)
	printRow("Go DialContext / net.Dialer, wall", ratios, 1.05)
	printRow("Go DialContext / net.Dialer, CPU", cpuRatios, 1.05)
	fmt.Printf("after: %s\n", sockstat())
}

// sockstat is the kernel's TCP socket summary: many TIME_WAIT sockets make
// every loopback connect slower, so the figures are printed beside it.
func sockstat() string {
	b, err := os.ReadFile("/proc/net/sockstat")
	if err != nil {
		return "(no /proc/net/sockstat)"
	}
	for _, line := range strings.Split(string(b), "\n") {
		if strings.HasPrefix(line, "TCP:") {
			return line
		}
	}
	return "(no TCP line)"
}

func fail(err error) {
	fmt.Fprintln(os.Stderr, "dialbench:", err)
	os.Exit(1)
}

// compareHistory prices the per-network history on a connect to a name
// (a static entry of two loopback addresses, so that history applies and
// no resolver is involved): DialContext with history on (the default)
// against DisableHistory, interleaved as compare does. The difference is
// history's decision and record: netstate's atomic load, two lookups of a
// known key under the store's lock.
func compareHistory(rounds, n int) {
	ln := listen()
	port := strconv.Itoa(ln.Addr().(*net.TCPAddr).Port)
	hosts := map[string][]netip.Addr{"two.bench": {netip.MustParseAddr("127.0.0.1"), netip.MustParseAddr("127.0.0.2")}}
	on := (&core.Dialer{Hosts: hosts}).DialContext
	off := (&core.Dialer{Hosts: hosts, DisableHistory: true}).DialContext
	addr := "two.bench:" + port
	runWall(on, addr, n/4+1)
	runWall(off, addr, n/4+1)
	var ratios []float64
	var ons, offs []time.Duration
	for r := 0; r < rounds; r++ {
		var a, b time.Duration
		if r%2 == 0 {
			a, _ = runCPU(on, addr, n)
			b, _ = runCPU(off, addr, n)
		} else {
			b, _ = runCPU(off, addr, n)
			a, _ = runCPU(on, addr, n)
		}
		ons, offs = append(ons, a), append(offs, b)
		ratios = append(ratios, float64(a)/float64(b))
	}
	sort.Float64s(ratios)
	sort.Slice(ons, func(i, j int) bool { return ons[i] < ons[j] })
	sort.Slice(offs, func(i, j int) bool { return offs[i] < offs[j] })
	q := func(p float64) float64 { return ratios[int(p*float64(len(ratios)-1)+0.5)] }
	st := core.HistoryStatistics()
	fmt.Printf("history: DialContext to a name of two loopback addresses, history on vs off, %d interleaved rounds of %d: on %v, off %v per connect; ratio on/off median %.3fx, quartiles %.3f-%.3f (%d key(s) of %d bytes held)\n",
		rounds, n, ons[len(ons)/2].Round(10*time.Nanosecond), offs[len(offs)/2].Round(10*time.Nanosecond),
		q(0.5), q(0.25), q(0.75), st.Entries, st.EntryBytes)
}
