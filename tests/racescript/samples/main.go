// Command samples writes every scripted race (racescript.Scripts) as SVG,
// qlog and Chrome trace into a directory, and manifest.json: for each
// race, the lanes its picture must have, counted from the race's trace
// (not from the picture). make test-render opens the pictures in a real
// browser and compares.
//
//	go run ./tests/racescript/samples DIR
package main

import (
	"encoding/json"
	"fmt"
	"io"
	"os"
	"path/filepath"

	"github.com/hev2/hev2/internal/race"
	"github.com/hev2/hev2/internal/render"
	"github.com/hev2/hev2/tests/racescript"
)

func main() {
	if len(os.Args) != 2 {
		fmt.Fprintln(os.Stderr, "usage: samples DIR")
		os.Exit(2)
	}
	dir := os.Args[1]
	if err := os.MkdirAll(dir, 0o755); err != nil {
		fmt.Fprintln(os.Stderr, "samples:", err)
		os.Exit(1)
	}
	var manifest []lanes
	for _, s := range racescript.Scripts() {
		events, cfg := racescript.Run(s)
		manifest = append(manifest, expect(s.Name, events))
		meta := racescript.Meta(cfg)
		for _, f := range []struct {
			ext   string
			write func(io.Writer, []race.TraceEvent, render.Meta) error
		}{{".svg", render.WriteSVG}, {".qlog", render.WriteQlog}, {".json", render.WriteChromeTrace}} {
			if err := write(filepath.Join(dir, s.Name+f.ext), func(w io.Writer) error { return f.write(w, events, meta) }); err != nil {
				fmt.Fprintln(os.Stderr, "samples:", err)
				os.Exit(1)
			}
		}
	}
	b, err := json.MarshalIndent(manifest, "", "  ")
	if err == nil {
		err = os.WriteFile(filepath.Join(dir, "manifest.json"), append(b, '\n'), 0o644)
	}
	if err != nil {
		fmt.Fprintln(os.Stderr, "samples:", err)
		os.Exit(1)
	}
}

// lanes is what a race's picture must show, from its trace.
type lanes struct {
	Name     string         `json:"name"`
	Lookups  int            `json:"lookups"`
	Attempts int            `json:"attempts"`
	Outcomes map[string]int `json:"outcomes"` // attempt lanes by outcome
	Timers   []string       `json:"timers"`   // data-timer values, in order
}

func expect(name string, events []race.TraceEvent) lanes {
	l := lanes{Name: name, Outcomes: map[string]int{}, Timers: []string{}}
	rd, ad := false, false
	for _, ev := range events {
		switch ev.Kind {
		case race.TraceLookupStarted:
			l.Lookups++
		case race.TraceAttemptStarted:
			l.Attempts++
		case race.TraceAttemptWon:
			l.Outcomes["won"]++
		case race.TraceAttemptFailed:
			l.Outcomes["failed"]++
		case race.TraceAttemptClosed:
			l.Outcomes["closed"]++
		case race.TraceResolutionDelay:
			rd = true
		case race.TraceAttemptDelay:
			ad = true
		}
	}
	if rd {
		l.Timers = append(l.Timers, "resolution-delay")
	}
	if ad {
		l.Timers = append(l.Timers, "attempt-delay")
	}
	return l
}

func write(path string, fn func(io.Writer) error) error {
	f, err := os.Create(path)
	if err != nil {
		return err
	}
	if err := fn(f); err != nil {
		f.Close()
		return err
	}
	return f.Close()
}
