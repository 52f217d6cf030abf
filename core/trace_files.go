package core

import (
	"fmt"
	"io"

	"github.com/hev2/hev2/internal/render"
)

// TraceMeta describes a recorded race for the trace files: its target, a
// session id for qlog, and the delays it ran with (Dialer.TraceMeta fills
// it). Zero fields are left out.
type TraceMeta = render.Meta

// TraceFormat names a trace file format (numbered as the C ABI's
// HEV2_TRACE_* are).
type TraceFormat int

const (
	// TraceSVG is a waterfall picture of the race: one lane per lookup,
	// per delay and per attempt on a time axis in ms; self-contained SVG.
	TraceSVG TraceFormat = 1
	// TraceQlog is qlog JSON-SEQ with the Happy Eyeballs qlog draft's
	// events (draft-kuehlewind-happy-qlog-00, hev3-00), hev2's own where
	// the draft has none (docs/trace-names.md).
	TraceQlog TraceFormat = 2
	// TraceChrome is Chrome trace-event JSON (Perfetto, chrome://tracing):
	// one track per lookup, delay and attempt.
	TraceChrome TraceFormat = 3
)

// ErrNoEvents is returned when there is no event to write (the race was
// not recorded: set Dialer.Trace and keep what it is given).
var ErrNoEvents = render.ErrNoEvents

// WriteTrace writes the recorded events of one race (every TraceEvent
// Dialer.Trace was given, in order) to w in format f. The same events
// always give the same bytes.
func WriteTrace(w io.Writer, f TraceFormat, events []TraceEvent, meta TraceMeta) error {
	switch f {
	case TraceSVG:
		return render.WriteSVG(w, events, meta)
	case TraceQlog:
		return render.WriteQlog(w, events, meta)
	case TraceChrome:
		return render.WriteChromeTrace(w, events, meta)
	}
	return fmt.Errorf("%w: unknown trace format %d", ErrInvalidOptions, int(f))
}

// WriteSVG writes the race as a waterfall picture (TraceSVG).
func WriteSVG(w io.Writer, events []TraceEvent, meta TraceMeta) error {
	return render.WriteSVG(w, events, meta)
}

// WriteQlog writes the race as qlog JSON-SEQ (TraceQlog).
func WriteQlog(w io.Writer, events []TraceEvent, meta TraceMeta) error {
	return render.WriteQlog(w, events, meta)
}

// WriteChromeTrace writes the race as Chrome trace-event JSON (TraceChrome).
func WriteChromeTrace(w io.Writer, events []TraceEvent, meta TraceMeta) error {
	return render.WriteChromeTrace(w, events, meta)
}

// TraceMeta describes a race of this Dialer to host:port for the trace
// files (the delays it runs with, after defaults and clamping).
func (d *Dialer) TraceMeta(host string, port uint16) TraceMeta {
	return d.options().TraceMeta(host, port)
}
