package main

import (
	"runtime"
	"testing"
)

// heapInUse must report what MemStats.HeapInuse would (hev2_stats'
// go_heap_inuse kept its meaning when it stopped stopping the world).
func TestHeapInUseIsMemStatsHeapInuse(t *testing.T) {
	keep := make([][]byte, 0, 256)
	for i := 0; i < 256; i++ {
		keep = append(keep, make([]byte, 4096))
	}
	runtime.GC()
	var ms runtime.MemStats
	runtime.ReadMemStats(&ms)
	got := heapInUse()
	diff := int64(got) - int64(ms.HeapInuse)
	if diff < -256<<10 || diff > 256<<10 {
		t.Fatalf("heapInUse %d, MemStats.HeapInuse %d: differ by %d bytes", got, ms.HeapInuse, diff)
	}
	if got < 1<<20 {
		t.Fatalf("heapInUse %d with 1 MiB live", got)
	}
	runtime.KeepAlive(keep)
}
