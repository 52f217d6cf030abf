package testbed

import (
	"context"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"sync"
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
		case Excluded:
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
		default:
			fmt.Fprintf(w, "%-6s %-22s %9s %12s  %s", shortVerdict(r.Verdict), s.Name,
				fmt.Sprintf("%.1fms", r.Measured()), ideal+"ms", r.Outcome())
			if r.Reason != "" {
				fmt.Fprintf(w, "  <- %s", r.Reason)
			}
			fmt.Fprintln(w)
		}
	}
	p, f, sk := Counts(results)
	fmt.Fprintf(w, "testbed: %d passed, %d failed, %d skipped\n", p, f, sk)
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
