// Command hev2-resolve looks a name up the way hev2 does before a race: AAAA
// and A at once, each family answering on its own, with the system resolver
// (getaddrinfo per family) or the built-in one, and prints one JSON line:
// each family's addresses or its getaddrinfo code and errno, how long it
// took, and the resolver's counters.
//
//	hev2-resolve [--resolver system|builtin] [--family 4|6] [--timeout MS]
//	             [--nameserver IP[:PORT]]... HOST
//
// Exit status: 0 if a family answered, 1 if none did, 2 on a usage error.
package main

import (
	"context"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"net/netip"
	"os"
	"sync"
	"time"

	"github.com/hev2/hev2/core"
	"github.com/hev2/hev2/tests/testbed/contract"
)

type lookupJSON struct {
	Family    string       `json:"family"`
	Addrs     []netip.Addr `json:"addrs"`
	ElapsedMS float64      `json:"elapsed_ms"`
	Error     *errorJSON   `json:"error,omitempty"`
}

type errorJSON struct {
	EAI     string `json:"eai"`
	Errno   string `json:"errno"`
	Message string `json:"message"`
}

type nameservers []string

func (n *nameservers) String() string     { return fmt.Sprint(*n) }
func (n *nameservers) Set(s string) error { *n = append(*n, s); return nil }

func main() { os.Exit(run()) }

func run() int {
	fs := flag.NewFlagSet("hev2-resolve", flag.ContinueOnError)
	resolverName := fs.String("resolver", "system", "system (getaddrinfo) or builtin (hev2's DNS client)")
	family := fs.Int("family", 0, "4 or 6 to look up one family only")
	timeoutMS := fs.Int("timeout", 0, "give up after this many milliseconds (0: never)")
	var servers nameservers
	fs.Var(&servers, "nameserver", "name server for the built-in resolver (repeatable; default: resolv.conf's)")
	if err := fs.Parse(os.Args[1:]); err != nil {
		return 2
	}
	usage := func(msg string) int {
		fmt.Fprintln(os.Stderr, "hev2-resolve:", msg)
		return 2
	}
	if fs.NArg() != 1 {
		return usage("want exactly one HOST")
	}
	families := []core.Family{core.IPv6, core.IPv4}
	switch *family {
	case 0:
	case 4:
		families = []core.Family{core.IPv4}
	case 6:
		families = []core.Family{core.IPv6}
	default:
		return usage("--family must be 4 or 6")
	}
	if *timeoutMS < 0 {
		return usage("--timeout must not be negative")
	}
	var r core.Resolver
	var stats func() any
	switch *resolverName {
	case "system":
		if len(servers) > 0 {
			return usage("--nameserver needs --resolver builtin")
		}
		sys := core.DefaultSystemResolver
		r, stats = sys, func() any { return sys.Stats() }
	case "builtin":
		dr, err := core.NewDNSResolver(core.DNSConfig{Nameservers: servers})
		if err != nil {
			return usage(err.Error())
		}
		r, stats = dr, func() any { return dr.Stats() }
	default:
		return usage("--resolver must be system or builtin")
	}

	ctx := context.Background()
	if *timeoutMS > 0 {
		var cancel context.CancelFunc
		ctx, cancel = context.WithTimeout(ctx, time.Duration(*timeoutMS)*time.Millisecond)
		defer cancel()
	}
	out := make([]lookupJSON, len(families))
	var wg sync.WaitGroup
	start := time.Now()
	for i, f := range families {
		wg.Add(1)
		go func() {
			defer wg.Done()
			addrs, err := r.LookupFamily(ctx, fs.Arg(0), f)
			out[i] = lookupJSON{Family: f.String(), Addrs: addrs, ElapsedMS: contract.Millis(time.Since(start)), Error: describe(err)}
		}()
	}
	wg.Wait()
	line, _ := json.Marshal(map[string]any{"host": fs.Arg(0), "resolver": *resolverName, "lookups": out, "stats": stats()})
	fmt.Println(string(line))
	for _, l := range out {
		if l.Error == nil {
			return 0
		}
	}
	return 1
}

func describe(err error) *errorJSON {
	if err == nil {
		return nil
	}
	e := &errorJSON{Message: err.Error()}
	var re *core.ResolveError
	if errors.As(err, &re) {
		e.EAI, e.Errno = contract.EAIName(re.Code), contract.ErrnoName(re.Errno)
	}
	return e
}
