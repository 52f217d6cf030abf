// Package contract implements the command-line side of hev2's shared
// scenario-client contract for Go clients (hev2-dial and the Go peers):
//
//	client [--resolv-timeout MS] [--connect-timeout MS] [--open-timeout MS]
//	       [--no-fast-fallback] [--family 4|6] [--resolver system|builtin]
//	       [--no-nat64] [--repeat N] [--no-history]
//	       [--https-rr [--alpn LIST] [--ech]] HOST PORT
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
//
// --https-rr: the connect also asks the HTTPS record (RFC 9460; Happy
// Eyeballs v3) and tries its services first. --alpn LIST (comma-separated,
// only meaningful with --https-rr) is the protocols the caller's TLS
// offers (default h2,http/1.1): a service with none of them is skipped.
// --ech (only meaningful with --https-rr): the caller's TLS uses ECH, so no connection
// is handed over before the HTTPS answer is final, and when every service
// carries ECH the origin's own addresses are never tried. A client that
// cannot ask HTTPS records (or has no ECH mode) answers 2 to these flags;
// the suite then runs no HTTPS row through it and says so.
//
// The line's "svcb" is null when no HTTPS query was made, else
//
//	{"state": "answered"|"nodata"|"nxdomain"|"failed"|"timeout"|"malformed"|"alias-limit",
//	 "service": null | {"priority": N, "target": "name.", "port": N,
//	                    "alpn": ["h2", ...], "ech": true|false}}
//
// service is the record the winner came from (null when the winner came
// from the origin's own A/AAAA, or the connect failed); its port 0 means
// the origin's port, and the line's "port" is always the winner's. A race
// that ended before the HTTPS answer says "timeout". A client that prints
// no "svcb" at all has no HTTPS support; the suite requires the field on
// the rows that ask for it.
package contract

import (
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"
	"net/netip"
	"os"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/hev2/hev2/internal/race"
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
	// HTTPSRR asks the HTTPS record too (--https-rr).
	HTTPSRR bool
	// ALPN is --alpn's comma-separated list as given ("": the client's
	// default, h2,http/1.1); ALPNList splits it.
	ALPN string
	// ECH is --ech: the caller's TLS uses ECH.
	ECH bool
}

// ALPNList is --alpn's protocols, nil when it was not given.
func (o Options) ALPNList() []string {
	if o.ALPN == "" {
		return nil
	}
	return strings.Split(o.ALPN, ",")
}

// HTTPSFlags reports whether any of the HTTPS flags was given: a client
// that cannot ask HTTPS records answers ExitUsage then.
func (o Options) HTTPSFlags() bool { return o.HTTPSRR || o.ALPN != "" || o.ECH }

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
	fs.BoolVar(&o.HTTPSRR, "https-rr", false, "ask the HTTPS record (RFC 9460) too and try its services first")
	fs.StringVar(&o.ALPN, "alpn", "", "comma-separated protocols the caller's TLS offers (with --https-rr; default h2,http/1.1)")
	fs.BoolVar(&o.ECH, "ech", false, "the caller's TLS uses ECH: wait for the HTTPS answer, no origin fallback when every service has ECH (with --https-rr)")
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
	if o.ALPN != "" && slices.Contains(o.ALPNList(), "") {
		return o, fmt.Errorf("--alpn %q: an empty protocol", o.ALPN)
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
	// SVCB is what the HTTPS query gave (null: no HTTPS query was made).
	SVCB *SVCB `json:"svcb"`
}

// SVCB is the contract's "svcb" object: the HTTPS query's state and the
// service the winner came from.
type SVCB struct {
	// State is "answered", "nodata", "nxdomain", "failed", "timeout",
	// "malformed" or "alias-limit".
	State string `json:"state"`
	// Service is the winner's service, nil when the winner came from the
	// origin's own addresses (or the connect failed).
	Service *Service `json:"service"`
}

// Service is the "service" object of "svcb".
type Service struct {
	Priority int    `json:"priority"`
	Target   string `json:"target"` // fully qualified, final dot
	Port     int    `json:"port"`   // 0: the origin's port
	// ALPN is the service's protocol set (its alpn list, plus http/1.1
	// unless no-default-alpn).
	ALPN []string `json:"alpn"`
	ECH  bool     `json:"ech"` // the service carries an ECH configuration
}

// SVCBStates are the states "svcb" can say, in the order of the C ABI's
// HEV2_HTTPS_* (1..7).
var SVCBStates = []string{"answered", "nodata", "nxdomain", "failed", "timeout", "malformed", "alias-limit"}

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

// FromHTTPS is the "svcb" object of a race's HTTPS outcome (Result.HTTPS,
// Error.HTTPS): nil when no HTTPS query was made; the winner's service
// only when won. A race that ended before the answer says "timeout", as
// hev2-connect says for HEV2_HTTPS_PENDING.
func FromHTTPS(o *race.HTTPSOutcome, won bool) *SVCB {
	if o == nil {
		return nil
	}
	out := &SVCB{State: o.State.String()}
	if o.State == race.HTTPSPending {
		out.State = race.HTTPSTimeout.String()
	}
	if svc := o.WinnerService(); svc != nil && won {
		out.Service = &Service{Priority: int(svc.Priority), Target: svc.Target, Port: int(svc.Port),
			ALPN: append([]string{}, svc.ALPN...), ECH: len(svc.ECH) > 0}
	}
	return out
}
