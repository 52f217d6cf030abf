package testbed

import (
	"fmt"
	"os"

	"github.com/hev2/hev2/tests/testbed/contract"
	"github.com/hev2/hev2/tests/tracecheck"
)

// checkTraceFiles judges the trace files a client wrote for a row (suite
// --trace-files): each valid on its own (the qlog against the Happy
// Eyeballs qlog draft's schema and its one-outcome-per-attempt rule, the
// Chrome trace's begin/end pairs, the SVG self-contained with lanes), and
// all three telling the race the contract line told: the same number of
// attempts, a winner exactly when the client connected.
func checkTraceFiles(files contract.TraceFiles, r *ClientResult) error {
	read := func(path string) ([]byte, error) {
		b, err := os.ReadFile(path)
		if err != nil {
			return nil, fmt.Errorf("trace files: %w", err)
		}
		return b, nil
	}
	b, err := read(files.Qlog)
	if err != nil {
		return err
	}
	q, err := tracecheck.CheckQlog(b)
	if err != nil {
		return fmt.Errorf("trace files: %s: %w", files.Qlog, err)
	}
	if b, err = read(files.Chrome); err != nil {
		return err
	}
	c, err := tracecheck.CheckChrome(b)
	if err != nil {
		return fmt.Errorf("trace files: %s: %w", files.Chrome, err)
	}
	if b, err = read(files.SVG); err != nil {
		return err
	}
	svg, err := tracecheck.CheckSVG(b)
	if err != nil {
		return fmt.Errorf("trace files: %s: %w", files.SVG, err)
	}
	lanes, won := 0, 0
	for _, l := range svg.Lanes {
		if l.Kind == "attempt" {
			lanes++
			if l.Outcome == "won" {
				won++
			}
		}
	}
	if lanes != q.Attempts || c.Spans["attempt"] != q.Attempts {
		return fmt.Errorf("trace files disagree: %d attempts in qlog, %d attempt spans in the Chrome trace, %d attempt lanes in the SVG",
			q.Attempts, c.Spans["attempt"], lanes)
	}
	// A race that asked the HTTPS record ("svcb" not null) shows its
	// query in each file; one that did not, nowhere.
	https := 0
	for _, l := range svg.Lanes {
		if l.Kind == "service" && l.Query == "HTTPS" {
			https++
		}
	}
	asked := len(r.SVCB) > 0 && string(r.SVCB) != "null"
	if asked != (q.HTTPSQueries > 0) || asked != (https > 0) || asked != (c.Spans["service-lookup"] > 0) {
		return fmt.Errorf("trace files: the client's svcb is %s, the qlog has %d HTTPS queries, the SVG %d HTTPS lanes, the Chrome trace %d service lookups",
			string(r.SVCB), q.HTTPSQueries, https, c.Spans["service-lookup"])
	}
	want := 0
	if r.OK {
		want = 1
	}
	if q.Outcomes["success"] != want || won != want {
		return fmt.Errorf("trace files: the client reported ok=%v, the qlog has %d successful attempts and the SVG %d winners",
			r.OK, q.Outcomes["success"], won)
	}
	return nil
}
