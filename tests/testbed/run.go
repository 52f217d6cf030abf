package testbed

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os/exec"
	"sort"
	"strconv"
	"strings"
	"time"

	"github.com/hev2/hev2/tests/testbed/contract"
)

// ClientResult is the one JSON line of the scenario-client contract.
type ClientResult struct {
	OK        bool         `json:"ok"`
	Address   string       `json:"address"`
	Family    string       `json:"family"`
	Port      int          `json:"port"`
	ElapsedMS float64      `json:"elapsed_ms"`
	Error     *ClientError `json:"error"`
	// SynthesizedFrom: the IPv4 address a NAT64 winner stands for (an
	// optional field: clients whose API does not tell leave it out).
	SynthesizedFrom string `json:"synthesized_from"`
	// Runs: every connect of a --repeat row.
	Runs []ClientRun `json:"runs"`
	// SVCB is the "svcb" field as printed: empty when absent, "null" when
	// no HTTPS query was made.
	SVCB json.RawMessage `json:"svcb"`
	// Report is the optional "report": its attempts, where the client
	// prints it.
	Report *struct {
		Attempts []struct {
			Address string `json:"address"`
			Port    int    `json:"port"`
		} `json:"attempts"`
	} `json:"report"`
}

// ClientRun is one connect of --repeat.
type ClientRun struct {
	OK           bool         `json:"ok"`
	Address      string       `json:"address"`
	Family       string       `json:"family"`
	ElapsedMS    float64      `json:"elapsed_ms"`
	Error        *ClientError `json:"error"`
	FirstAttempt string       `json:"first_attempt"`
	History      string       `json:"history"`
}

// ClientError is the contract's "error" object.
type ClientError struct {
	Errno   string `json:"errno"`
	EAI     string `json:"eai"`
	Timeout string `json:"timeout"`
	Message string `json:"message"`
}

// Verdict is how a row ended for one client.
type Verdict uint8

const (
	Pass Verdict = iota
	Fail
	// Unsupported: the client answered 2 (usage error) to the row's options.
	Unsupported
	// Excluded: the row was left out on request (--exclude / --lacks).
	Excluded
	// NotApplicable: the row uses an optional feature (OptionalFeatures:
	// HTTPS records, ECH) the client answered 2 to when probed.
	NotApplicable
)

func (v Verdict) String() string {
	return [...]string{"PASS", "FAIL", "UNSUPPORTED", "EXCLUDED", "NOT APPLICABLE"}[v]
}

// RowResult is one run of one row with one client.
type RowResult struct {
	Scenario Scenario
	Verdict  Verdict
	Reason   string // why it failed or was excluded
	Exit     int
	Result   *ClientResult
	Wall     time.Duration // the whole `ip netns exec` process
	Stderr   string
}

// Measured is the client's own elapsed time, or the wall time when the
// client printed none.
//
// For a --repeat row it is the median of the 2nd and later connects.
func (r RowResult) Measured() float64 {
	if r.Result != nil && len(r.Result.Runs) > 1 {
		later := make([]float64, 0, len(r.Result.Runs)-1)
		for _, run := range r.Result.Runs[1:] {
			later = append(later, run.ElapsedMS)
		}
		sort.Float64s(later)
		return later[len(later)/2]
	}
	if r.Result != nil && r.Result.ElapsedMS > 0 {
		return r.Result.ElapsedMS
	}
	return float64(r.Wall) / float64(time.Millisecond)
}

// Outcome is what the client ended with, in a few words.
func (r RowResult) Outcome() string {
	if r.Result == nil {
		return fmt.Sprintf("exit %d, no result", r.Exit)
	}
	if r.Result.OK {
		return r.Result.Family + " " + r.Result.Address
	}
	e := r.Result.Error
	if e == nil {
		return "failed (no error object)"
	}
	var parts []string
	for _, p := range []string{e.Errno, e.EAI, e.Timeout} {
		if p != "" {
			parts = append(parts, p)
		}
	}
	return "fail " + strings.Join(parts, "/")
}

// RunRow runs client (the command words of a contract client) for row
// inside the bed's client namespace and judges the result.
func RunRow(ctx context.Context, bed *Bed, client []string, row Scenario) RowResult {
	return runRow(ctx, bed, client, row, "")
}

// runRow is RunRow; with traceDir set, the client is also asked for the
// race's trace files (the contract's optional --svg/--qlog/--chrome-trace,
// into traceDir/<row>.*), and a row whose files are missing, invalid or
// tell another race than the contract line fails.
func runRow(ctx context.Context, bed *Bed, client []string, row Scenario, traceDir string) RowResult {
	if row.serialized() {
		// Before the row's clock starts: waiting for another NAT64
		// row is not the client's time.
		bed.pref64.Lock()
		defer bed.pref64.Unlock()
		bed.setPref64(row.Pref64)
	}
	// A hung client is killed well past the row's gross bound. The row is
	// judged on the time the client measures around its connect, so the
	// margin is only for hangs, and it holds an interpreter's start-up on a
	// loaded machine (a Python client took 5 s to reach its usage error
	// with both cores busy).
	ctx, cancel := context.WithTimeout(ctx, time.Duration(row.BoundMS)*time.Millisecond+30*time.Second)
	defer cancel()
	argv := append([]string{}, client...)
	var files contract.TraceFiles
	if traceDir != "" {
		var flags []string
		files, flags = contract.TraceFlags(traceDir, row.Name)
		argv = append(argv, flags...)
	}
	port := row.PortOn(bed)
	argv = append(append(argv, row.Args...), row.Host, strconv.Itoa(int(port)))
	start := time.Now()
	res, err := bed.ExecIn(ctx, bed.ClientNSFor(row), argv...)
	rr := RowResult{Scenario: row, Exit: res.ExitCode, Wall: time.Since(start), Stderr: res.Stderr}
	if err != nil {
		rr.Verdict, rr.Reason = Fail, err.Error()
		if errors.Is(ctx.Err(), context.DeadlineExceeded) {
			rr.Reason = fmt.Sprintf("client hung: killed after %v", rr.Wall.Round(time.Millisecond))
		}
		return rr
	}
	if res.ExitCode == 2 {
		rr.Verdict = Unsupported
		rr.Reason = "usage error: " + firstLine(res.Stderr)
		return rr
	}
	rr.Result, err = parseResult(res.Stdout)
	if err != nil {
		rr.Verdict, rr.Reason = Fail, err.Error()+"; stderr: "+firstLine(res.Stderr)
		return rr
	}
	rr.Verdict, rr.Reason = judge(row, port, res.ExitCode, rr.Result)
	if rr.Verdict == Pass {
		rr.Verdict, rr.Reason = checkQueries(bed, row, port, start)
	}
	if rr.Verdict == Pass && traceDir != "" {
		if err := checkTraceFiles(files, rr.Result); err != nil {
			rr.Verdict, rr.Reason = Fail, err.Error()
		}
	}
	return rr
}

func firstLine(s string) string {
	s = strings.TrimSpace(s)
	if i := strings.IndexByte(s, '\n'); i >= 0 {
		return s[:i]
	}
	return s
}

// parseResult reads the last non-empty stdout line as the contract's JSON.
func parseResult(stdout string) (*ClientResult, error) {
	lines := strings.Split(strings.TrimSpace(stdout), "\n")
	last := strings.TrimSpace(lines[len(lines)-1])
	if last == "" {
		return nil, errors.New("client printed no result line")
	}
	var r ClientResult
	if err := json.Unmarshal([]byte(last), &r); err != nil {
		return nil, fmt.Errorf("client result %q is not the contract's JSON: %v", last, err)
	}
	return &r, nil
}

// judge compares a client's result with the row's expectation and the
// row's gross time bound.
func judge(row Scenario, port uint16, exit int, r *ClientResult) (Verdict, string) {
	want := row.Want
	if v, why := judgeHTTPS(row, port, r); v != Pass {
		return v, why
	}
	if want.Winner.IsValid() {
		if !r.OK || exit != 0 {
			return Fail, fmt.Sprintf("want %s %v, got %s (exit %d)", want.Family(), want.Winner, describe(r), exit)
		}
		if r.Address != want.Winner.String() || r.Family != want.Family() {
			return Fail, fmt.Sprintf("want winner %s %v, got %s %s", want.Family(), want.Winner, r.Family, r.Address)
		}
		if r.SynthesizedFrom != "" {
			if !want.SynthesizedFrom.IsValid() {
				return Fail, fmt.Sprintf("winner %s reported as synthesized from %s, want no synthesis", r.Address, r.SynthesizedFrom)
			}
			if r.SynthesizedFrom != want.SynthesizedFrom.String() {
				return Fail, fmt.Sprintf("winner %s synthesized from %s, want from %v", r.Address, r.SynthesizedFrom, want.SynthesizedFrom)
			}
		}
	} else {
		if r.OK || exit != 1 {
			return Fail, fmt.Sprintf("want failure %s, got %s (exit %d)", want, describe(r), exit)
		}
		e := r.Error
		if e == nil {
			return Fail, "failure without the contract's error object"
		}
		for _, c := range []struct{ field, want, got string }{
			{"errno", want.Errno, e.Errno}, {"eai", want.EAI, e.EAI}, {"timeout", want.Timeout, e.Timeout},
		} {
			if c.want != "" && c.want != c.got {
				return Fail, fmt.Sprintf("want %s %s, got %s (%s)", c.field, c.want, describe(r), e.Message)
			}
		}
	}
	if r.ElapsedMS > row.BoundMS {
		return Fail, fmt.Sprintf("took %.0f ms, beyond the gross bound of %.0f ms", r.ElapsedMS, row.BoundMS)
	}
	if n := row.Repeat(); n > 1 {
		return judgeRuns(row, n, r.Runs)
	}
	return Pass, ""
}

// judgeRuns checks every connect of a --repeat row: each must end as the
// row wants; the 2nd and later within RepeatBoundMS and, where the client
// says which address it tried first, trying the winner first.
func judgeRuns(row Scenario, n int, runs []ClientRun) (Verdict, string) {
	if len(runs) != n {
		return Fail, fmt.Sprintf("--repeat %d: the client reported %d runs", n, len(runs))
	}
	want := row.Want
	for i, run := range runs {
		if want.Winner.IsValid() && (!run.OK || run.Address != want.Winner.String()) {
			return Fail, fmt.Sprintf("connect %d of %d: want %v, got %s", i+1, n, want.Winner, describe(&ClientResult{OK: run.OK, Address: run.Address, Family: run.Family, Error: run.Error}))
		}
		if i == 0 || row.RepeatBoundMS == 0 {
			continue
		}
		if run.ElapsedMS > row.RepeatBoundMS {
			return Fail, fmt.Sprintf("connect %d of %d took %.0f ms, beyond %.0f ms", i+1, n, run.ElapsedMS, row.RepeatBoundMS)
		}
		if want.Winner.IsValid() && run.FirstAttempt != "" && run.FirstAttempt != want.Winner.String() {
			return Fail, fmt.Sprintf("connect %d of %d tried %s first, want %v", i+1, n, run.FirstAttempt, want.Winner)
		}
	}
	return Pass, ""
}

// judgeHTTPS checks what the HTTPS rows add: the winner's port, the
// "svcb" field (required on a row with --https-rr, null or absent on the
// others) and, where the client prints its report, the first attempt.
func judgeHTTPS(row Scenario, port uint16, r *ClientResult) (Verdict, string) {
	want := row.Want
	if fa := want.FirstAttempt; fa.IsValid() && r.Report != nil && len(r.Report.Attempts) > 0 {
		got := r.Report.Attempts[0]
		if got.Address != fa.Addr().String() || got.Port != int(fa.Port()) {
			return Fail, fmt.Sprintf("the report's first attempt is %s port %d, want %v", got.Address, got.Port, fa)
		}
	}
	raw := strings.TrimSpace(string(r.SVCB))
	if !row.UsesHTTPS() {
		if raw != "" && raw != "null" {
			return Fail, fmt.Sprintf("\"svcb\" is %s without --https-rr, want null", raw)
		}
		return Pass, ""
	}
	if want.Winner.IsValid() && r.OK {
		wantPort := want.Port
		if wantPort == 0 {
			wantPort = port
		}
		if r.Port != int(wantPort) {
			return Fail, fmt.Sprintf("want the winner on port %d, got port %d", wantPort, r.Port)
		}
	}
	if raw == "" {
		return Fail, "no \"svcb\" field on a row with --https-rr"
	}
	var got *contract.SVCB
	if err := json.Unmarshal(r.SVCB, &got); err != nil {
		return Fail, fmt.Sprintf("\"svcb\" %s: %v", raw, err)
	}
	if want.SVCB == nil {
		return Pass, ""
	}
	if got == nil {
		return Fail, fmt.Sprintf("\"svcb\" is null, want %s", svcbString(want.SVCB))
	}
	if svcbString(got) != svcbString(want.SVCB) {
		return Fail, fmt.Sprintf("\"svcb\" is %s, want %s", svcbString(got), svcbString(want.SVCB))
	}
	return Pass, ""
}

// svcbString is s as compact JSON, the form two of them are compared in.
func svcbString(s *contract.SVCB) string {
	if s == nil {
		return "null"
	}
	c := *s
	if c.Service != nil {
		svc := *c.Service
		if svc.ALPN == nil {
			svc.ALPN = []string{}
		}
		c.Service = &svc
	}
	b, _ := json.Marshal(c)
	return string(b)
}

// checkQueries checks the row's Queries against what the DNS server was
// asked since start.
func checkQueries(bed *Bed, row Scenario, port uint16, start time.Time) (Verdict, string) {
	for _, q := range row.Queries {
		name := q.Name
		if name == HTTPSQueryName {
			name = row.HTTPSName(port)
		}
		asked := false
		for _, got := range bed.DNS.Queries(name) {
			if got.Type == q.Type && !got.At.Before(start) {
				asked = true
				break
			}
		}
		if asked != q.Asked {
			q.Name = name
			return Fail, "the DNS server's log: want " + q.String()
		}
	}
	return Pass, ""
}

func describe(r *ClientResult) string {
	return RowResult{Result: r}.Outcome()
}

// commandWords splits a client command line on blanks (no shell quoting:
// client commands are paths and flags).
func commandWords(s string) []string { return strings.Fields(s) }

// checkClient gives a clear error for a client that does not exist, before
// every row fails with the same message.
func checkClient(client []string) error {
	if len(client) == 0 {
		return errors.New("testbed: empty client command")
	}
	if _, err := exec.LookPath(client[0]); err != nil {
		return fmt.Errorf("testbed: client %q: %w", client[0], err)
	}
	return nil
}
