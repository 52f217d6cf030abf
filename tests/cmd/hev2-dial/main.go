// Command hev2-dial is the Go-API scenario client: it connects once with
// core.Dialer.Connect and prints the shared contract's JSON line.
//
//	hev2-dial [--resolv-timeout MS] [--connect-timeout MS] [--open-timeout MS]
//	          [--no-fast-fallback] [--family 4|6] [--resolver system|builtin]
//	          [--no-nat64] [--svg FILE] [--qlog FILE] [--chrome-trace FILE]
//	          [--repeat N] [--no-history] [--https-rr [--alpn LIST] [--ech]]
//	          HOST PORT
//
// Exit status: 0 connected, 1 connection failure, 2 usage error. The
// result's "events" list is the (first) race's trace, its "report" the race's
// establishment report; with --repeat, each run says which address it
// tried first and what history decided. With --https-rr the connect asks
// the HTTPS record too (core.Dialer.HTTPSRR, ALPN, ECH) and "svcb" says how
// the query ended and which service won (null without --https-rr).
package main

import (
	"context"
	"errors"
	"fmt"
	"os"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/hev2/hev2/core"
	"github.com/hev2/hev2/tests/testbed/contract"
	"golang.org/x/sys/unix"
)

func main() { os.Exit(run()) }

func run() int {
	o, err := contract.Parse("hev2-dial", os.Args[1:], os.Stderr)
	if err != nil {
		fmt.Fprintln(os.Stderr, "hev2-dial:", err)
		return contract.ExitUsage
	}
	resolver, err := newResolver(o.Resolver)
	if err != nil {
		fmt.Fprintln(os.Stderr, "hev2-dial:", err)
		return contract.ExitUsage
	}
	d := core.Dialer{
		ResolvTimeout:       o.ResolvTimeout,
		ConnectTimeout:      o.ConnectTimeout,
		OpenTimeout:         o.OpenTimeout,
		DisableFastFallback: o.NoFastFallback,
		DisableNAT64:        o.NoNAT64,
		Family:              core.Family(o.Family),
		Resolver:            resolver,
		Record:              true, // for the "report" field
		DisableHistory:      o.NoHistory,
		HTTPSRR:             o.HTTPSRR,
		ALPN:                o.ALPNList(),
		ECH:                 o.ECH,
	}
	var first contract.Output
	runs := make([]contract.Run, 0, o.Repeat)
	for i := range o.Repeat {
		out, res, trace, err := connectOnce(d, o)
		if errors.Is(err, core.ErrInvalidOptions) {
			fmt.Fprintln(os.Stderr, "hev2-dial:", err)
			return contract.ExitUsage
		}
		if i == 0 {
			first = out
			// The trace files are the first connect's.
			if o.TraceFiles.Any() {
				if err := writeTraceFiles(o.TraceFiles, trace.recorded(), d.TraceMeta(o.Host, o.Port)); err != nil {
					fmt.Fprintln(os.Stderr, "hev2-dial: trace files:", err)
					out.Print()
					return contract.ExitFailure
				}
			}
		}
		run := out.AsRun()
		if res != nil {
			if len(res.Attempts) > 0 {
				run.FirstAttempt = res.Attempts[0].Addr.Addr().String()
			}
			run.History = res.History.Reason
		}
		runs = append(runs, run)
	}
	if o.Repeat > 1 {
		first = contract.Repeated(first, runs)
	}
	return first.Print()
}

// connectOnce is one connect with its trace as the line's events and its
// report, the account of the won race (nil on failure) and the trace.
func connectOnce(d core.Dialer, o contract.Options) (contract.Output, *core.Result, *traceLog, error) {
	trace := &traceLog{}
	d.Trace = trace.add
	start := time.Now()
	res, err := d.Connect(context.Background(), o.Host, o.Port)
	if errors.Is(err, core.ErrInvalidOptions) {
		return contract.Output{}, nil, trace, err
	}
	var out contract.Output
	var rep core.Report
	var repErr error
	if err != nil {
		elapsed := time.Since(start)
		var ce *core.Error
		repErr = core.ErrNoTrace
		if errors.As(err, &ce) {
			elapsed = ce.Elapsed
			rep, repErr = ce.Report()
		}
		out = contract.Failure(o.Port, describe(err), elapsed)
		if ce != nil {
			out.SVCB = contract.FromHTTPS(ce.HTTPS, false)
		}
	} else {
		// The fd is ours: close it, we only measure the race.
		unix.Close(res.FD)
		out = contract.Success(res.Addr, res.Elapsed)
		rep, repErr = res.Report()
		if res.SynthesizedFrom.IsValid() {
			out.SynthesizedFrom = res.SynthesizedFrom.String()
		}
		out.SVCB = contract.FromHTTPS(res.HTTPS, true)
	}
	out.Events = trace.events()
	if repErr == nil {
		out.Report = contract.FromReport(rep)
	}
	return out, res, trace, nil
}

// traceLog collects the race's trace events for the "events" list.
type traceLog struct {
	mu  sync.Mutex
	evs []core.TraceEvent
}

func (t *traceLog) add(ev core.TraceEvent) {
	t.mu.Lock()
	t.evs = append(t.evs, ev)
	t.mu.Unlock()
}

func (t *traceLog) events() []contract.Event {
	t.mu.Lock()
	defer t.mu.Unlock()
	out := make([]contract.Event, 0, len(t.evs))
	for _, ev := range t.evs {
		e := contract.Event{AtMS: contract.Millis(ev.At), Kind: ev.Kind.String()}
		if ev.Family != core.FamilyUnspec {
			e.Family = ev.Family.String()
		}
		if ev.Addr.IsValid() {
			e.Addr = ev.Addr.Addr().String()
		}
		for _, a := range ev.Addrs {
			e.Addrs = append(e.Addrs, a.String())
		}
		if ev.Timeout != core.TimeoutNone {
			e.Timeout = ev.Timeout.String()
		}
		if ev.Err != nil {
			e.Error = ev.Err.Error()
		}
		switch ev.Kind {
		case core.TraceNat64Prefix:
			var ps []string
			for _, p := range ev.Prefixes {
				ps = append(ps, p.String())
			}
			e.Detail = strings.Join(ps, " ")
			if ev.Detail != "" {
				e.Detail += " (" + ev.Detail + ")"
			}
		case core.TraceNat64Discovery:
			e.Detail = ev.Detail
		case core.TraceHistory:
			e.Detail = ev.Detail
		case core.TraceSynthesized:
			e.Detail = "from " + ev.From.String()
		case core.TraceServiceState, core.TraceServiceAdded, core.TraceServiceSkipped:
			e.Detail = ev.Detail
		case core.TraceServiceLookupStarted, core.TraceServiceLookupFailed, core.TraceServiceLookupCanceled:
			// As hev2_get_event words them: "HTTPS NAME", "A NAME".
			e.Detail = ev.Query.String() + " " + ev.Detail
		case core.TraceServiceLookupAnswered:
			e.Detail = ev.Query.String() + " " + ev.Detail
			if len(ev.Addrs) == 0 {
				e.Detail += " " + strconv.Itoa(ev.Attempt) + " records"
			}
		}
		out = append(out, e)
	}
	return out
}
