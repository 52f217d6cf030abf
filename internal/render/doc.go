// Package render turns the trace of one race (the race machine's
// TraceEvents, as Dialer.Trace and the C ABI's record_events collect them)
// into files other tools read: a waterfall picture (SVG), a qlog file
// (JSON-SEQ, the Happy Eyeballs qlog draft's hev3-00 event schema) and a
// Chrome trace-event file (Perfetto, chrome://tracing).
//
// It is the one implementation behind core.WriteSVG, core.WriteQlog and
// core.WriteChromeTrace, the C ABI's hev2_write_trace, hev2-connect's
// --svg/--qlog/--chrome-trace and the bindings. Every writer reads only the
// events and the Meta it is given: the same input gives the same bytes
// (no clock, no map iteration, fixed number formatting), which is what
// the tests under the fake clock compare. docs/trace-names.md documents every
// name the writers emit.
package render
