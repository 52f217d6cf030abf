package testbed

import (
	"context"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"sync"
	"time"
)

// Selection says which rows to run. Nothing is dropped silently: a row left
// out is reported as EXCLUDED with the reason.
type Selection struct {
	// Only, when set, keeps the rows whose name matches.
	Only *regexp.Regexp
	// Exclude names rows to leave out.
	Exclude map[string]bool
	// Lacks names client options (e.g. "resolv-timeout") the client does
	// not have: rows using them are left out.
	Lacks map[string]bool
	// Require names optional capabilities (OptionalFeatures: "https-rr",
	// "ech") the client must accept: one it answers 2 to fails the suite
	// instead of making its rows not applicable.
	Require map[string]bool
}

// OptionalFeature is a part of the contract a client may not have: the
// suite asks the client once (Probe on an IP literal, where no HTTPS query
// is made), and when it answers 2 (usage error) the rows that use any of
// Flags are not applicable to it: printed as N/A with the reason and
// counted as skipped, never run, never silently dropped.
type OptionalFeature struct {
	Name  string
	Probe []string
	Flags []string
}

// OptionalFeatures are the contract's optional capabilities: HTTPS records
// (--https-rr and --alpn; a client with no HTTPS query, as the peers,
// answers 2) and ECH (--ech).
var OptionalFeatures = []OptionalFeature{
	{Name: "https-rr", Probe: []string{"--https-rr", "--alpn", "h2,http/1.1"}, Flags: []string{"https-rr", "alpn", "ech"}},
	{Name: "ech", Probe: []string{"--https-rr", "--ech"}, Flags: []string{"ech"}},
}

// uses reports whether row uses any of f's flags.
func (f OptionalFeature) uses(row Scenario) bool {
	for _, x := range row.Features() {
		if slices.Contains(f.Flags, x) {
			return true
		}
	}
	return false
}

// probeFeatures asks client, for each optional feature some row to run
// uses, whether it accepts the feature's flags; it returns why each
// refused feature is missing. A refused feature the selection requires is
// an error.
func probeFeatures(ctx context.Context, bed *Bed, client []string, rows []Scenario, sel Selection) (map[string]string, error) {
	missing := map[string]string{}
	for _, f := range OptionalFeatures {
		needed := false
		for _, r := range rows {
			if _, out := sel.why(r); !out && f.uses(r) {
				needed = true
				break
			}
		}
		if !needed {
			continue
		}
		argv := append(append(append([]string{}, client...), f.Probe...), V4Good1.String(), strconv.Itoa(int(bed.Port)))
		pctx, cancel := context.WithTimeout(ctx, 30*time.Second)
		res, err := bed.ExecIn(pctx, bed.ClientNS, argv...)
		cancel()
		if err != nil {
			return nil, fmt.Errorf("testbed: probing the client for %s: %w", f.Name, err)
		}
		if res.ExitCode != ExitUsage {
			continue
		}
		if sel.Require[f.Name] {
			return nil, fmt.Errorf("testbed: --require %s: the client answers 2 (usage) to %s: %s",
				f.Name, strings.Join(f.Probe, " "), firstLine(res.Stderr))
		}
		missing[f.Name] = firstLine(res.Stderr)
	}
	return missing, nil
}

// ExitUsage is the contract's exit status for a usage error.
const ExitUsage = 2

// notApplicable says why row cannot run with a client missing features,
// and what the client said when probed ("" when it can run).
func notApplicable(row Scenario, missing map[string]string) (why, said string) {
	for _, f := range OptionalFeatures {
		if said, ok := missing[f.Name]; ok && f.uses(row) {
			return "not applicable: no " + f.Name + " (the client answers 2 to " + strings.Join(f.Probe, " ") + ")", said
		}
	}
	return "", ""
}

// ParseList turns "a,b,c" into a set.
func ParseList(s string) map[string]bool {
	m := map[string]bool{}
	for _, x := range strings.Split(s, ",") {
		if x = strings.TrimSpace(x); x != "" {
			m[x] = true
		}
	}
	return m
}

// Validate rejects names that match no row: a typo must not quietly run
// everything.
func (sel Selection) Validate(rows []Scenario) error {
	names := map[string]bool{}
	features := map[string]bool{}
	for _, r := range rows {
		names[r.Name] = true
		for _, f := range r.Features() {
			features[f] = true
		}
	}
	for n := range sel.Exclude {
		if !names[n] {
			return fmt.Errorf("testbed: --exclude %q: no such scenario", n)
		}
	}
	for f := range sel.Lacks {
		if !features[f] {
			return fmt.Errorf("testbed: --lacks %q: no scenario uses that option", f)
		}
	}
	for f := range sel.Require {
		if !slices.ContainsFunc(OptionalFeatures, func(o OptionalFeature) bool { return o.Name == f }) {
			return fmt.Errorf("testbed: --require %q: not an optional feature (https-rr, ech)", f)
		}
	}
	return nil
}

func (sel Selection) why(row Scenario) (string, bool) {
	if sel.Only != nil && !sel.Only.MatchString(row.Name) {
		return "not selected by --only", true
	}
	if sel.Exclude[row.Name] {
		return "excluded by --exclude", true
	}
	for _, f := range row.Features() {
		if sel.Lacks[f] {
			return "client lacks --" + f, true
		}
	}
	return "", false
}

// RunSuite runs rows with client, at most parallel at a time (rows of the
// standard layout never interfere), and returns the results in row order.
func RunSuite(ctx context.Context, bed *Bed, client []string, rows []Scenario, sel Selection, parallel int) ([]RowResult, error) {
	return RunSuiteTraced(ctx, bed, client, rows, sel, parallel, "")
}

// RunSuiteTraced is RunSuite that also asks the client for each row's trace
// files in traceDir (which it creates) and checks them ("" for none).
func RunSuiteTraced(ctx context.Context, bed *Bed, client []string, rows []Scenario, sel Selection, parallel int, traceDir string) ([]RowResult, error) {
	if traceDir != "" {
		// The client runs in another namespace, maybe another directory.
		abs, err := filepath.Abs(traceDir)
		if err == nil {
			err = os.MkdirAll(abs, 0o755)
		}
		if err != nil {
			return nil, err
		}
		traceDir = abs
	}
	if err := checkClient(client); err != nil {
		return nil, err
	}
	if err := sel.Validate(rows); err != nil {
		return nil, err
	}
	if parallel < 1 {
		parallel = 1
	}
	for _, r := range rows {
		if err := r.Install(bed); err != nil {
			return nil, err
		}
	}
	missing, err := probeFeatures(ctx, bed, client, rows, sel)
	if err != nil {
		return nil, err
	}
	results := make([]RowResult, len(rows))
	sem := make(chan struct{}, parallel)
	// Every row holds running for reading, an Alone row for writing.
	var running sync.RWMutex
	var wg sync.WaitGroup
	for i, row := range rows {
		if reason, out := sel.why(row); out {
			results[i] = RowResult{Scenario: row, Verdict: Excluded, Reason: reason}
			continue
		}
		if why, said := notApplicable(row, missing); why != "" {
			results[i] = RowResult{Scenario: row, Verdict: NotApplicable, Reason: why, Stderr: said}
			continue
		}
		wg.Add(1)
		go func() {
			defer wg.Done()
			sem <- struct{}{}
			defer func() { <-sem }()
			if row.Alone {
				running.Lock()
				defer running.Unlock()
			} else {
				running.RLock()
				defer running.RUnlock()
			}
			results[i] = runRow(ctx, bed, client, row, traceDir)
		}()
	}
	wg.Wait()
	return results, ctx.Err()
}

// Counts tallies verdicts: unsupported rows that were not excluded count
// as failures (a client must support the row or have it excluded).
func Counts(results []RowResult) (passed, failed, skipped int) {
	for _, r := range results {
		switch r.Verdict {
		case Pass:
			passed++
		case Excluded, NotApplicable:
			skipped++
		default:
			failed++
		}
	}
	return
}

// PrintSuite writes one line per row and the closing count line.
func PrintSuite(w io.Writer, client string, results []RowResult) {
	fmt.Fprintf(w, "scenario suite, client: %s\n", client)
	fmt.Fprintf(w, "%-6s %-22s %9s %12s  %s\n", "", "scenario", "measured", "ideal", "outcome")
	for _, r := range results {
		s := r.Scenario
		ideal := fmt.Sprintf("%.0f±%.0f", s.IdealMS, s.TolMS)
		switch r.Verdict {
		case Excluded:
			fmt.Fprintf(w, "%-6s %-22s %9s %12s  (%s)\n", "EXCL", s.Name, "-", ideal, r.Reason)
		case NotApplicable:
			fmt.Fprintf(w, "%-6s %-22s %9s %12s  (%s)\n", "N/A", s.Name, "-", ideal, r.Reason)
		default:
			fmt.Fprintf(w, "%-6s %-22s %9s %12s  %s", shortVerdict(r.Verdict), s.Name,
				fmt.Sprintf("%.1fms", r.Measured()), ideal+"ms", r.Outcome())
			if r.Reason != "" {
				fmt.Fprintf(w, "  <- %s", r.Reason)
			}
			fmt.Fprintln(w)
		}
	}
	for _, line := range NotApplicableSummary(client, results) {
		fmt.Fprintln(w, line)
	}
	p, f, sk := Counts(results)
	fmt.Fprintf(w, "testbed: %d passed, %d failed, %d skipped\n", p, f, sk)
}

// NotApplicableSummary is one line per reason rows were not applicable to
// client: the reason and the rows.
func NotApplicableSummary(client string, results []RowResult) []string {
	var reasons []string
	rows := map[string][]string{}
	said := map[string]string{}
	for _, r := range results {
		if r.Verdict != NotApplicable {
			continue
		}
		if _, ok := rows[r.Reason]; !ok {
			reasons = append(reasons, r.Reason)
			said[r.Reason] = r.Stderr
		}
		rows[r.Reason] = append(rows[r.Reason], r.Scenario.Name)
	}
	var out []string
	for _, why := range reasons {
		out = append(out, fmt.Sprintf("N/A: %d rows not applicable to %s, %s, which said %q: %s", len(rows[why]), client,
			strings.TrimPrefix(why, "not applicable: "), said[why], strings.Join(rows[why], " ")))
	}
	return out
}

func shortVerdict(v Verdict) string {
	switch v {
	case Pass:
		return "PASS"
	case Unsupported:
		return "UNSUP"
	}
	return "FAIL"
}
