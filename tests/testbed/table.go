package testbed

import (
	"context"
	"fmt"
	"io"
	"sort"
	"strings"
)

// Client is a named client command for the timing table.
type Client struct {
	Name string
	Argv []string
}

// ParseClient reads "NAME=COMMAND WORDS" (or just "COMMAND WORDS", named
// after its first word).
func ParseClient(s string) (Client, error) {
	name, cmd, found := strings.Cut(s, "=")
	if !found || strings.ContainsAny(name, " \t/") {
		cmd = s
		name = ""
	}
	argv := commandWords(cmd)
	if len(argv) == 0 {
		return Client{}, fmt.Errorf("testbed: empty client command in %q", s)
	}
	if name == "" {
		name = argv[0][strings.LastIndexByte(argv[0], '/')+1:]
	}
	return Client{Name: name, Argv: argv}, nil
}

// RunTable runs every row with every client, one process at a time (so
// the timings do not disturb each other), runs times each, and keeps for
// each cell the run with the median measured time. A failed run wins over
// passing ones, so a flaky outcome shows.
func RunTable(ctx context.Context, bed *Bed, clients []Client, rows []Scenario, sel Selection, runs int) ([][]RowResult, error) {
	if runs < 1 {
		runs = 1
	}
	table := make([][]RowResult, len(clients))
	for ci, c := range clients {
		var all [][]RowResult
		for i := 0; i < runs; i++ {
			res, err := RunSuite(ctx, bed, c.Argv, rows, sel, 1)
			if err != nil {
				return nil, err
			}
			all = append(all, res)
		}
		table[ci] = make([]RowResult, len(rows))
		for ri := range rows {
			cell := make([]RowResult, runs)
			for i := range all {
				cell[i] = all[i][ri]
			}
			table[ci][ri] = medianCell(cell)
		}
	}
	return table, nil
}

func medianCell(runs []RowResult) RowResult {
	for _, r := range runs {
		if r.Verdict == Fail || r.Verdict == Unsupported || r.Verdict == Excluded || r.Verdict == NotApplicable {
			return r
		}
	}
	sort.Slice(runs, func(i, j int) bool { return runs[i].Measured() < runs[j].Measured() })
	return runs[len(runs)/2]
}

// PrintTable writes the timing table: the RFC-ideal time beside each
// client's measured time in ms. A mark follows a cell whose outcome is not
// the expected one ("!" wrong winner or error, "n/a" the client rejected
// the options, "-" excluded); the notes under the table say what happened.
func PrintTable(w io.Writer, clients []Client, rows []Scenario, table [][]RowResult) {
	const first = 22
	width := 12
	for _, c := range clients {
		if len(c.Name)+2 > width {
			width = len(c.Name) + 2
		}
	}
	fmt.Fprintf(w, "%-*s %10s", first, "scenario (ms)", "ideal")
	for _, c := range clients {
		fmt.Fprintf(w, " %*s", width, c.Name)
	}
	fmt.Fprintln(w)
	var notes []string
	for ci, c := range clients {
		notes = append(notes, NotApplicableSummary(c.Name, table[ci])...)
	}
	for ri, row := range rows {
		fmt.Fprintf(w, "%-*s %10s", first, row.Name, fmt.Sprintf("%.0f±%.0f", row.IdealMS, row.TolMS))
		for ci, c := range clients {
			r := table[ci][ri]
			var cell string
			switch r.Verdict {
			case Pass:
				cell = fmt.Sprintf("%.1f", r.Measured())
				if r.Measured() > row.IdealMS+row.TolMS {
					cell += "~" // right outcome, slower than the ideal allows
				}
			case Fail:
				cell = fmt.Sprintf("%.1f!", r.Measured())
				notes = append(notes, fmt.Sprintf("%s/%s: %s", c.Name, row.Name, r.Reason))
			case Unsupported:
				cell = "n/a"
				notes = append(notes, fmt.Sprintf("%s/%s: %s", c.Name, row.Name, r.Reason))
			case Excluded:
				cell = "-"
			case NotApplicable:
				cell = "n/a"
			}
			fmt.Fprintf(w, " %*s", width, cell)
		}
		fmt.Fprintln(w)
	}
	fmt.Fprintln(w, "marks: ~ right outcome but slower than ideal+tolerance; ! wrong outcome (see notes); n/a options not supported; - excluded")
	if len(notes) > 0 {
		fmt.Fprintln(w, "notes:")
		for _, n := range notes {
			fmt.Fprintln(w, "  "+n)
		}
	}
}
