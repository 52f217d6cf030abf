package history

import (
	"runtime"
	"strconv"
	"testing"
	"time"

	"github.com/hev2/hev2/internal/race"
)

func TestLRUBoundAndClear(t *testing.T) {
	s := New(Config{Capacity: 3})
	rec := func(h string) { s.RecordAttempt(netA, h, v4, race.PathConnected, time.Millisecond) }
	rec("a")
	rec("b")
	rec("c")
	s.Decide(netA, "a", 2, &Policy{}) // a is now the most recently used
	rec("d")                          // evicts b, the least recently used
	for h, want := range map[string]bool{"a": true, "b": false, "c": true, "d": true} {
		s.mu.Lock()
		_, ok := s.entries[key{netA, h}]
		s.mu.Unlock()
		if ok != want {
			t.Errorf("entry %s held %v, want %v", h, ok, want)
		}
	}
	if st := s.Stats(); st.Entries != 3 || st.Evicted != 1 || st.Capacity != 3 {
		t.Fatalf("stats %+v: want 3 entries, 1 eviction", st)
	}
	s.Clear()
	if st := s.Stats(); st.Entries != 0 || st.Cleared != 1 {
		t.Fatalf("after Clear: %+v", st)
	}
	rec("e")
	if st := s.Stats(); st.Entries != 1 {
		t.Fatalf("after Clear and a record: %d entries, want 1", st.Entries)
	}
}

// TestEntryBytes measures what a key costs on the heap (host names aside)
// and holds EntryBytes, the figure the stats report, to it.
func TestEntryBytes(t *testing.T) {
	const n = 20000
	hosts := make([]string, n)
	for i := range hosts {
		hosts[i] = "h" + strconv.Itoa(i) // made before the measure
	}
	s := New(Config{Capacity: n})
	var before, after runtime.MemStats
	runtime.GC()
	runtime.ReadMemStats(&before)
	for _, h := range hosts {
		s.RecordAttempt(netA, h, v6, race.PathConnected, time.Millisecond)
	}
	runtime.GC()
	runtime.ReadMemStats(&after)
	per := float64(after.HeapAlloc-before.HeapAlloc) / n
	t.Logf("%.0f bytes per entry measured, EntryBytes %d", per, EntryBytes)
	if per > EntryBytes*1.25 || per < EntryBytes*0.75 {
		t.Fatalf("%.0f bytes per entry measured; EntryBytes says %d", per, EntryBytes)
	}
	runtime.KeepAlive(s)
}

// A lookup of a known key allocates nothing, nor does recording into it:
// history adds no allocation to a connect once the name is known.
func TestNoAllocations(t *testing.T) {
	s := New(Config{})
	s.RecordAttempt(netA, host, v6, race.PathConnected, time.Millisecond)
	p := &Policy{}
	if n := testing.AllocsPerRun(1000, func() {
		s.Decide(netA, host, 2, p)
		s.RecordAttempt(netA, host, v6, race.PathConnected, time.Millisecond)
	}); n != 0 {
		t.Fatalf("%v allocations per Decide+Record of a known key", n)
	}
}

func BenchmarkDecideAndRecord(b *testing.B) {
	s := New(Config{})
	s.RecordAttempt(netA, host, v6, race.PathConnected, time.Millisecond)
	p := &Policy{}
	b.ReportAllocs()
	for b.Loop() {
		s.Decide(netA, host, 2, p)
		s.RecordAttempt(netA, host, v6, race.PathConnected, time.Millisecond)
	}
}
