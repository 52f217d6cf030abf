package main

import (
	"flag"
	"fmt"
	"os"
	"regexp"
	"strings"

	"github.com/hev2/hev2/tests/testbed"
)

// selectionFlags are the row filters shared by suite and scenarios.
type selectionFlags struct {
	only, exclude, lacks, require string
}

func (s *selectionFlags) register(fs *flag.FlagSet) {
	fs.StringVar(&s.only, "only", "", "run only the scenarios whose name matches this regexp")
	fs.StringVar(&s.exclude, "exclude", "", "comma-separated scenario names to leave out (reported as EXCLUDED)")
	fs.StringVar(&s.lacks, "lacks", "", "comma-separated client options the client lacks (e.g. resolv-timeout,no-fast-fallback): rows using them are EXCLUDED")
	fs.StringVar(&s.require, "require", "", "comma-separated optional features (https-rr, ech) the client must accept: without --require, rows of a feature the client answers 2 to are N/A")
}

func (s *selectionFlags) selection() (testbed.Selection, error) {
	sel := testbed.Selection{Exclude: testbed.ParseList(s.exclude), Lacks: testbed.ParseList(s.lacks), Require: testbed.ParseList(s.require)}
	if s.only != "" {
		re, err := regexp.Compile(s.only)
		if err != nil {
			return sel, fmt.Errorf("--only: %w", err)
		}
		sel.Only = re
	}
	return sel, nil
}

func cmdSuite(args []string) int {
	fs := flag.NewFlagSet("suite", flag.ContinueOnError)
	client := fs.String("client", "", `client command words, run as: ip netns exec NS CLIENT [row options] HOST PORT (required)`)
	parallel := fs.Int("parallel", 4, "rows run at the same time")
	list := fs.Bool("list", false, "list the scenarios and exit (no root needed)")
	traceDir := fs.String("trace-files", "", "also ask the client for each row's trace files (--svg/--qlog/--chrome-trace into DIR/<row>.*) and check them")
	var sf selectionFlags
	sf.register(fs)
	fs.Usage = func() {
		fmt.Fprintln(fs.Output(), "usage: hev2-testbed suite --client \"CMD [OPTIONS]\" [--only RE] [--exclude NAMES] [--lacks OPTIONS] [--require FEATURES] [--parallel N] [--trace-files DIR]")
		fs.PrintDefaults()
	}
	if err := fs.Parse(args); err != nil {
		return 2
	}
	if *list {
		listScenarios()
		return 0
	}
	if *client == "" || fs.NArg() != 0 {
		fs.Usage()
		return 2
	}
	rows, sel, ok := sf.selectedRows()
	if !ok {
		return 2
	}
	bed, ctx, stop, code := startBed(testbed.Options{})
	if bed == nil {
		return code
	}
	defer stop()
	results, err := testbed.RunSuiteTraced(ctx, bed, strings.Fields(*client), rows, sel, *parallel, *traceDir)
	if err != nil {
		fmt.Fprintln(os.Stderr, "hev2-testbed:", err)
		return 1
	}
	testbed.PrintSuite(os.Stdout, *client, results)
	if _, failed, _ := testbed.Counts(results); failed > 0 {
		for _, r := range results {
			if r.Verdict != testbed.Pass && r.Verdict != testbed.Excluded && r.Stderr != "" {
				fmt.Printf("--- stderr of %s:\n%s", r.Scenario.Name, r.Stderr)
			}
		}
		return 1
	}
	return 0
}

// selectedRows is the scenario table with the selection the flags asked
// for, checked against it; a bad selection is reported and ok is false.
func (s *selectionFlags) selectedRows() (rows []testbed.Scenario, sel testbed.Selection, ok bool) {
	sel, err := s.selection()
	if err == nil {
		rows = testbed.Scenarios()
		err = sel.Validate(rows)
	}
	if err != nil {
		fmt.Fprintln(os.Stderr, "hev2-testbed:", err)
		return nil, sel, false
	}
	return rows, sel, true
}

func listScenarios() {
	for _, r := range testbed.Scenarios() {
		opts := strings.Join(r.Args, " ")
		fmt.Printf("%-22s ideal %4.0f ms  want %-28s %-36s %s\n", r.Name, r.IdealMS, r.Want, opts, r.About)
	}
}

// clientList collects repeated --client flags.
type clientList []testbed.Client

func (c *clientList) String() string { return fmt.Sprint(*c) }
func (c *clientList) Set(s string) error {
	cl, err := testbed.ParseClient(s)
	if err != nil {
		return err
	}
	*c = append(*c, cl)
	return nil
}

func cmdScenarios(args []string) int {
	fs := flag.NewFlagSet("scenarios", flag.ContinueOnError)
	var clients clientList
	fs.Var(&clients, "client", `NAME="CMD [OPTIONS]": a client column; repeat for each client`)
	runs := fs.Int("runs", 3, "runs per cell; the median is shown")
	var sf selectionFlags
	sf.register(fs)
	fs.Usage = func() {
		fmt.Fprintln(fs.Output(), "usage: hev2-testbed scenarios --client NAME=\"CMD\" [--client ...] [--runs N] [--only RE] [--exclude NAMES]")
		fs.PrintDefaults()
	}
	if err := fs.Parse(args); err != nil {
		return 2
	}
	if len(clients) == 0 || fs.NArg() != 0 {
		fs.Usage()
		return 2
	}
	rows, sel, ok := sf.selectedRows()
	if !ok {
		return 2
	}
	bed, ctx, stop, code := startBed(testbed.Options{})
	if bed == nil {
		return code
	}
	defer stop()
	table, err := testbed.RunTable(ctx, bed, clients, rows, sel, *runs)
	if err != nil {
		fmt.Fprintln(os.Stderr, "hev2-testbed:", err)
		return 1
	}
	testbed.PrintTable(os.Stdout, clients, rows, table)
	return 0
}
