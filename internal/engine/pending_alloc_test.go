package engine

import (
	"context"
	"errors"
	"testing"
)

// A pending library-driven race (a connect the shared poller watches)
// costs two allocations from its start to its cancel, whatever was
// cheaper before: the LibraryRace handle and the race's memory (registered
// with the poller, so never reused). Its slices (attempts' fds, poller
// tokens, the event a cancel steps) and its Error, with the attempts'
// account, live in the race's memory, and the poller's registration is a
// method and an id, not a closure. With 10,000 handles pending, each
// allocation is also garbage for the collector to find while the live
// heap is large (bench_pending); the cancel makes none.
func TestPendingRaceStartAllocatesTwoAndItsCancelNone(t *testing.T) {
	port := synDropListener(t, "127.0.0.1")
	checkLeaks(t)
	var d Options
	var lastErr error
	onDone := func(_ *Result, err error) { lastErr = err } // made once, not counted
	start := func() *LibraryRace {
		p, err := d.StartLibrary("127.0.0.1", uint16(port), onDone)
		if err != nil {
			t.Fatal(err)
		}
		return p
	}
	allocs := testing.AllocsPerRun(200, func() { start().Cancel(context.Canceled) })
	if !errors.Is(lastErr, context.Canceled) {
		t.Fatalf("outcome %v, want canceled", lastErr)
	}
	if allocs > 2 {
		t.Errorf("%v allocations from start to cancel, want at most 2", allocs)
	}

	// The cancel alone, over races started beforehand (AllocsPerRun runs
	// the function once more than asked, to warm up).
	const runs = 100
	pending := make([]*LibraryRace, runs+1)
	for i := range pending {
		pending[i] = start()
	}
	next := 0
	allocs = testing.AllocsPerRun(runs, func() {
		pending[next].Cancel(context.Canceled)
		next++
	})
	if !errors.Is(lastErr, context.Canceled) {
		t.Fatalf("outcome %v, want canceled", lastErr)
	}
	if allocs != 0 {
		t.Errorf("%v allocations per cancel of a pending race, want none", allocs)
	}
}
