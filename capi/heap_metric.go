package main

import (
	"runtime/metrics"
	"sync"
)

// heapInUse is hev2_stats' go_heap_inuse: the bytes of the heap's spans in
// use (MemStats.HeapInuse), read through runtime/metrics, which does not
// stop the world. runtime.ReadMemStats does, for tens of microseconds:
// every race the library drives would pause while a host polls its stats.
func heapInUse() uint64 {
	heapSamples.Lock()
	defer heapSamples.Unlock()
	metrics.Read(heapSamples.s[:])
	var n uint64
	for _, s := range heapSamples.s {
		if s.Value.Kind() == metrics.KindUint64 {
			n += s.Value.Uint64()
		}
	}
	return n
}

// heapSamples is reused by every call (metrics.Read fills it in place).
var heapSamples = struct {
	sync.Mutex
	s [2]metrics.Sample
}{s: [2]metrics.Sample{
	// In-use spans are the live and dead objects in them plus their
	// unused slots: MemStats.HeapInuse's definition.
	{Name: "/memory/classes/heap/objects:bytes"},
	{Name: "/memory/classes/heap/unused:bytes"},
}}
