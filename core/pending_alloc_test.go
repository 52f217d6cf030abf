package core

import (
	"context"
	"errors"
	"testing"
)

// A pending library-driven race (a connect the shared poller watches)
// costs three allocations from its start to its cancel, whatever was
// cheaper before: the Pending handle, the race's memory (registered with
// the poller, so never reused), and the Error, which holds the attempts'
// account in the same allocation. Its slices (attempts' fds, poller
// tokens, the event a cancel steps) live in the race's memory, and the
// poller's registration is a method and an id, not a closure. With 10,000
// handles pending, each allocation is also garbage for the collector to
// find while the live heap is large (bench_pending).
func TestPendingRaceStartAndCancelAllocateThree(t *testing.T) {
	port := synDropListener(t, "127.0.0.1", 0)
	checkLeaks(t)
	var d Dialer
	var lastErr error
	onDone := func(_ *Result, err error) { lastErr = err } // made once, not counted
	allocs := testing.AllocsPerRun(200, func() {
		p, err := d.ConnectAsync("127.0.0.1", uint16(port), onDone)
		if err != nil {
			t.Fatal(err)
		}
		p.Cancel(context.Canceled)
	})
	if !errors.Is(lastErr, context.Canceled) {
		t.Fatalf("outcome %v, want canceled", lastErr)
	}
	if allocs > 3 {
		t.Errorf("%v allocations from start to cancel, want at most 3", allocs)
	}
}
