package netio

import "time"

// A race's clock is the monotonic clock alone, read as an offset from one
// origin taken when the package loads: time.Now reads the wall clock as
// well, two vDSO calls where this makes one, and a race never needs the
// wall clock (its times are offsets from its own start). A healthy
// connect reads the clock twice (the start, the outcome): on a loopback
// connect, every reading is a visible share of the library's own time
// (docs/decisions.md).
var clockOrigin = time.Now()

// monoNow is the time since clockOrigin: one reading of the monotonic
// clock.
func monoNow() time.Duration { return time.Since(clockOrigin) }

// monoOf is t (a Time with a monotonic reading, as time.Now gives) on the
// same scale as monoNow, without reading the clock.
func monoOf(t time.Time) time.Duration { return t.Sub(clockOrigin) }
