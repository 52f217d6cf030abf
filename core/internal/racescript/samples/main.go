// Command samples writes every scripted race (racescript.Scripts) as SVG,
// qlog and Chrome trace into a directory: the pictures make test-render
// opens in a real browser.
//
//	go run ./core/internal/racescript/samples DIR
package main

import (
	"fmt"
	"io"
	"os"
	"path/filepath"

	"github.com/hev2/hev2/core/internal/race"
	"github.com/hev2/hev2/core/internal/racescript"
	"github.com/hev2/hev2/core/internal/render"
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
	for _, s := range racescript.Scripts() {
		events, cfg := racescript.Run(s)
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
