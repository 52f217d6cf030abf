package main

import (
	"context"
	"errors"
	"fmt"
	"os"
	"os/signal"
	"sort"
	"syscall"
	"time"

	"github.com/hev2/hev2/tests/testbed"
)

// skipCode is the exit status when not root: the make target prints SKIP.
const skipCode = 77

// startBed starts the bed and makes sure it is removed on SIGINT/SIGTERM
// too; the returned stop function removes it on the normal path.
func startBed(opts testbed.Options) (*testbed.Bed, context.Context, func(), int) {
	start := time.Now()
	bed, err := testbed.Start(opts)
	if errors.Is(err, testbed.ErrNotRoot) {
		fmt.Println("SKIP: hev2-testbed needs root (network namespaces)")
		return nil, nil, nil, skipCode
	}
	if err != nil {
		fmt.Fprintln(os.Stderr, "hev2-testbed:", err)
		return nil, nil, nil, 1
	}
	fmt.Fprintf(os.Stderr, "test bed up in %v (client ns %s, server ns %s)\n",
		time.Since(start).Round(time.Millisecond), bed.ClientNS, bed.ServerNS)
	ctx, cancel := context.WithCancel(context.Background())
	sigs := make(chan os.Signal, 1)
	signal.Notify(sigs, syscall.SIGINT, syscall.SIGTERM, syscall.SIGHUP)
	go func() {
		s, ok := <-sigs
		if !ok {
			return
		}
		fmt.Fprintf(os.Stderr, "hev2-testbed: %v: removing the bed\n", s)
		cancel()
		bed.Close()
		os.Exit(130)
	}()
	stop := func() {
		signal.Stop(sigs)
		cancel()
		bed.Close()
	}
	return bed, ctx, stop, 0
}

func cmdUp(args []string) int {
	bed, ctx, stop, code := startBed(testbed.Options{})
	if bed == nil {
		return code
	}
	defer stop()
	fmt.Printf("client namespace: %s   (run commands with: ip netns exec %s CMD)\n", bed.ClientNS, bed.ClientNS)
	fmt.Printf("server namespace: %s   DNS server %v / %v port 53, listeners on port %d\n",
		bed.ServerNS, testbed.DNSServerV4, testbed.DNSServerV6, bed.Port)
	addrs := bed.Addrs()
	keys := make([]string, 0, len(addrs))
	byKey := map[string]testbed.Impairment{}
	for a, imp := range addrs {
		keys = append(keys, a.String())
		byKey[a.String()] = imp
	}
	sort.Strings(keys)
	for _, k := range keys {
		fmt.Printf("  %-16s %v\n", k, byKey[k])
	}
	for _, s := range testbed.Scenarios() {
		if err := s.Install(bed); err != nil {
			fmt.Fprintln(os.Stderr, "hev2-testbed:", err)
			return 1
		}
	}
	fmt.Println("scenario names are served by the DNS server; Ctrl-C removes the bed")
	<-ctx.Done()
	return 0
}

func cmdSelfCheck(args []string) int {
	bed, _, stop, code := startBed(testbed.Options{})
	if bed == nil {
		return code
	}
	stop()
	fmt.Println("self-check passed: every impairment and the DNS path behave")
	return 0
}
