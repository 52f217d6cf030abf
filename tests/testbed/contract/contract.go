// Package contract implements the command-line side of hev2's shared
// scenario-client contract for Go clients (hev2-dial and the Go peers):
//
//	client [--resolv-timeout MS] [--connect-timeout MS] [--open-timeout MS]
//	       [--no-fast-fallback] [--family 4|6] [--resolver system|builtin]
//	       [--no-nat64] [--repeat N] [--no-history] HOST PORT
//
// A client connects once, prints one line of JSON on stdout and exits 0 on
// success, 1 on connection failure, 2 on usage error. A winner reached
// through NAT64 carries "synthesized_from" (the IPv4 address its IPv6
// address embeds) when the client's API tells it.
//
// Optional, for clients that can write the race's trace files (hev2's own;
// a peer without them answers 2): --svg FILE, --qlog FILE, --chrome-trace
// FILE write the race, won or failed, as hev2's waterfall picture, qlog and
// Chrome trace (docs/trace-names.md). The suite passes them only when run with
// --trace-files DIR, and then checks the files.
//
// --repeat N (default 1): connect N times, one after the other, in the one
// process (each connection closed before the next). The line's fields are
// the first connect's, as without --repeat, and "runs" lists all N (the
// same fields, plus "first_attempt", the address the connect tried first,
// and "history", what the client's history decided, where the client can
// tell). Exit 0 only if every run connected. --no-history: the client's
// per-process history of the network is off (a client that has none
// accepts it as is).
package contract

import (
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"
	"net/netip"
	"os"
	"strconv"
	"time"
)

// Exit statuses of the contract.
const (
	ExitOK      = 0
	ExitFailure = 1
	ExitUsage   = 2
)

// Options are the contract's options and arguments.
type Options struct {
	ResolvTimeout, ConnectTimeout, OpenTimeout time.Duration
	NoFastFallback                             bool
	NoNAT64                                    bool
	Family                                     int // 0 (both), 4 or 6
	Resolver                                   string
	// TraceFiles are where to write the race's trace files ("": not asked).
	TraceFiles TraceFiles
	Host       string
	Port       uint16
	// Repeat is how many connects to make in this process (>= 1).
	Repeat int
	// NoHistory turns the client's history off.
	NoHistory bool
}

// Parse reads the contract's command line. Any error is a usage error.
func Parse(prog string, args []string, stderr io.Writer) (Options, error) {
	var o Options
	fs := flag.NewFlagSet(prog, flag.ContinueOnError)
	fs.SetOutput(stderr)
	resolv := fs.Int("resolv-timeout", 0, "resolution timeout in ms (0: none)")
	connect := fs.Int("connect-timeout", 0, "connect timeout in ms, from the last attempt's start (0: none)")
	open := fs.Int("open-timeout", 0, "overall timeout in ms (0: none)")
	fs.BoolVar(&o.NoFastFallback, "no-fast-fallback", false, "resolve both families, then try each address in turn")
	fs.IntVar(&o.Family, "family", 0, "restrict to address family 4 or 6")
	fs.BoolVar(&o.NoNAT64, "no-nat64", false, "never reach IPv4 through a NAT64 prefix")
	fs.StringVar(&o.Resolver, "resolver", "system", "system or builtin")
	fs.StringVar(&o.TraceFiles.SVG, "svg", "", "write the race as a waterfall picture (SVG) to this file")
	fs.StringVar(&o.TraceFiles.Qlog, "qlog", "", "write the race as qlog (JSON-SEQ) to this file")
	fs.StringVar(&o.TraceFiles.Chrome, "chrome-trace", "", "write the race as a Chrome trace to this file")
	fs.IntVar(&o.Repeat, "repeat", 1, "connect this many times in this process, one after the other")
	fs.BoolVar(&o.NoHistory, "no-history", false, "turn the per-process history of the network off")
	fs.Usage = func() {
		fmt.Fprintf(fs.Output(), "usage: %s [options] HOST PORT\n", prog)
		fs.PrintDefaults()
	}
	if err := fs.Parse(args); err != nil {
		return o, err
	}
	if fs.NArg() != 2 {
		fs.Usage()
		return o, errors.New("want HOST and PORT")
	}
	for _, t := range []struct {
		name string
		ms   int
		dst  *time.Duration
	}{{"resolv-timeout", *resolv, &o.ResolvTimeout}, {"connect-timeout", *connect, &o.ConnectTimeout}, {"open-timeout", *open, &o.OpenTimeout}} {
		if t.ms < 0 {
			return o, fmt.Errorf("--%s %d: must be >= 0", t.name, t.ms)
		}
		*t.dst = time.Duration(t.ms) * time.Millisecond
	}
	if o.Family != 0 && o.Family != 4 && o.Family != 6 {
		return o, fmt.Errorf("--family %d: want 4 or 6", o.Family)
	}
	if o.Repeat < 1 || o.Repeat > MaxRepeat {
		return o, fmt.Errorf("--repeat %d: want 1..%d", o.Repeat, MaxRepeat)
	}
	if o.Resolver != "system" && o.Resolver != "builtin" {
		return o, fmt.Errorf("--resolver %q: want system or builtin", o.Resolver)
	}
	o.Host = fs.Arg(0)
	if o.Host == "" {
		return o, errors.New("empty HOST")
	}
	port, err := strconv.ParseUint(fs.Arg(1), 10, 16)
	if err != nil || port == 0 {
		return o, fmt.Errorf("PORT %q: want 1..65535", fs.Arg(1))
	}
	o.Port = uint16(port)
	return o, nil
}

// TraceFiles are the optional trace-file flags' values.
type TraceFiles struct {
	SVG, Qlog, Chrome string
}

// Any reports whether any trace file was asked for.
func (t TraceFiles) Any() bool { return t.SVG != "" || t.Qlog != "" || t.Chrome != "" }

// TraceFlags are the client flags that ask for files under dir, one name per
// format: what the suite adds to a client's words with --trace-files.
func TraceFlags(dir, name string) (TraceFiles, []string) {
	t := TraceFiles{SVG: dir + "/" + name + ".svg", Qlog: dir + "/" + name + ".qlog", Chrome: dir + "/" + name + ".json"}
	return t, []string{"--svg", t.SVG, "--qlog", t.Qlog, "--chrome-trace", t.Chrome}
}

// Error is the contract's "error" object.
type Error struct {
	Errno   string `json:"errno"`
	EAI     string `json:"eai"`
	Timeout string `json:"timeout"`
	Message string `json:"message"`
}

// Event is one entry of the optional "events" list.
type Event struct {
	AtMS    float64  `json:"at_ms"`
	Kind    string   `json:"kind"`
	Family  string   `json:"family,omitempty"`
	Addr    string   `json:"addr,omitempty"`
	Addrs   []string `json:"addrs,omitempty"`
	Timeout string   `json:"timeout,omitempty"`
	Error   string   `json:"error,omitempty"`
	// Detail is a word of context: the NAT64 prefixes of nat64-prefix,
	// "from IPv4" of synthesized.
	Detail string `json:"detail,omitempty"`
}

// MaxRepeat bounds --repeat.
const MaxRepeat = 1000

// Output is the contract's one JSON line.
type Output struct {
	OK        bool    `json:"ok"`
	Address   string  `json:"address,omitempty"`
	Family    string  `json:"family,omitempty"`
	Port      int     `json:"port"`
	ElapsedMS float64 `json:"elapsed_ms"`
	Error     *Error  `json:"error,omitempty"`
	Events    []Event `json:"events,omitempty"`
	// Report is the race's establishment report (report.go); optional.
	Report *Report `json:"report,omitempty"`
	// SynthesizedFrom is the IPv4 address a NAT64-synthesized winner
	// embeds (absent otherwise).
	SynthesizedFrom string `json:"synthesized_from,omitempty"`
	// Runs is every connect of --repeat (absent without it).
	Runs []Run `json:"runs,omitempty"`
}

// Run is one connect of --repeat.
type Run struct {
	OK           bool    `json:"ok"`
	Address      string  `json:"address,omitempty"`
	Family       string  `json:"family,omitempty"`
	Port         int     `json:"port"`
	ElapsedMS    float64 `json:"elapsed_ms"`
	Error        *Error  `json:"error,omitempty"`
	FirstAttempt string  `json:"first_attempt,omitempty"`
	History      string  `json:"history,omitempty"`
}

// AsRun is o as one run of --repeat.
func (o Output) AsRun() Run {
	return Run{OK: o.OK, Address: o.Address, Family: o.Family, Port: o.Port, ElapsedMS: o.ElapsedMS, Error: o.Error}
}

// Repeated is the line of a --repeat run: the first connect's fields and
// every run.
func Repeated(first Output, runs []Run) Output {
	first.Runs = runs
	return first
}

// Success fills an Output for a won connection.
func Success(winner netip.AddrPort, elapsed time.Duration) Output {
	fam := "ipv6"
	if winner.Addr().Unmap().Is4() {
		fam = "ipv4"
	}
	return Output{OK: true, Address: winner.Addr().Unmap().String(), Family: fam,
		Port: int(winner.Port()), ElapsedMS: Millis(elapsed)}
}

// Failure fills an Output for a failed connection.
func Failure(port uint16, e Error, elapsed time.Duration) Output {
	return Output{Port: int(port), ElapsedMS: Millis(elapsed), Error: &e}
}

// Millis is d in milliseconds with microsecond precision.
func Millis(d time.Duration) float64 { return float64(d.Microseconds()) / 1000 }

// Print writes the line and returns the exit status that goes with it
// (success only if every run connected).
func (o Output) Print() int {
	line, err := json.Marshal(o)
	if err != nil {
		fmt.Fprintln(os.Stderr, "contract: encoding the result:", err)
		return ExitFailure
	}
	fmt.Println(string(line))
	for _, r := range o.Runs {
		if !r.OK {
			return ExitFailure
		}
	}
	if o.OK {
		return ExitOK
	}
	return ExitFailure
}
