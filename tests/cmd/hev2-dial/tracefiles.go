package main

import (
	"fmt"
	"os"

	"github.com/hev2/hev2/core"
	"github.com/hev2/hev2/tests/testbed/contract"
)

// writeTraceFiles writes the recorded race to the files the contract's
// optional --svg/--qlog/--chrome-trace asked for (core's one renderer, as
// hev2_write_trace uses). A file that cannot be written is reported.
func writeTraceFiles(files contract.TraceFiles, events []core.TraceEvent, meta core.TraceMeta) error {
	for _, f := range []struct {
		path   string
		format core.TraceFormat
	}{{files.SVG, core.TraceSVG}, {files.Qlog, core.TraceQlog}, {files.Chrome, core.TraceChrome}} {
		if f.path == "" {
			continue
		}
		out, err := os.Create(f.path)
		if err != nil {
			return err
		}
		werr := core.WriteTrace(out, f.format, events, meta)
		if cerr := out.Close(); werr == nil {
			werr = cerr
		}
		if werr != nil {
			return fmt.Errorf("%s: %w", f.path, werr)
		}
	}
	return nil
}

// recorded is the trace's events as core gave them.
func (t *traceLog) recorded() []core.TraceEvent {
	t.mu.Lock()
	defer t.mu.Unlock()
	return append([]core.TraceEvent(nil), t.evs...)
}
