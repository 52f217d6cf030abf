package main

import (
	"fmt"
	"os"
	"sort"
)

// printRow prints a benchmark row with its goal and a verdict, in the shape
// every language's benchmarks share (bench/c/row.h):
//
//	row: NAME   1.02x [0.98-1.07]  goal <= 1.05x  ok
//
// the median of the per-round ratios and their spread; the line is also
// appended to the file $HEV2_BENCH_ROWS names, when set (make bench prints
// every row together at its end).
func printRow(name string, ratios []float64, goal float64) {
	s := append([]float64(nil), ratios...)
	sort.Float64s(s)
	med := s[len(s)/2]
	if len(s)%2 == 0 {
		med = (s[len(s)/2-1] + s[len(s)/2]) / 2
	}
	verdict := "ok"
	if med > goal {
		verdict = "ABOVE GOAL"
	}
	line := fmt.Sprintf("row: %-74s %-28s %-16s %s", name,
		fmt.Sprintf("%.2fx [%.2f-%.2f]", med, s[0], s[len(s)-1]), fmt.Sprintf("goal <= %.2fx", goal), verdict)
	fmt.Println(line)
	if path := os.Getenv("HEV2_BENCH_ROWS"); path != "" {
		f, err := os.OpenFile(path, os.O_APPEND|os.O_CREATE|os.O_WRONLY, 0o644)
		if err != nil {
			fail(err)
		}
		defer f.Close()
		if _, err := fmt.Fprintln(f, line); err != nil {
			fail(err)
		}
	}
}
