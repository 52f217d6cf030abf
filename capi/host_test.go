package main

import (
	"testing"
	"unsafe"
)

// A host passed again is the kept string, with no copy; another host is
// copied (never the caller's memory, which is only valid during the call)
// and becomes the one kept.
func TestSameHostReusesTheLastHostOnly(t *testing.T) {
	buf := []byte("192.0.2.1")
	view := unsafe.String(&buf[0], len(buf))
	first := sameHost(view)
	if unsafe.StringData(first) == &buf[0] {
		t.Fatal("sameHost returned the caller's memory")
	}
	if allocs := testing.AllocsPerRun(100, func() {
		if s := sameHost(view); unsafe.StringData(s) != unsafe.StringData(first) {
			t.Fatal("the same host was copied again")
		}
	}); allocs != 0 {
		t.Fatalf("%v allocations for the same host again, want 0", allocs)
	}
	// The caller reuses its buffer for another host: the kept string
	// must not change with it.
	copy(buf, "192.0.2.2")
	if first != "192.0.2.1" {
		t.Fatalf("kept host changed with the caller's memory: %q", first)
	}
	second := sameHost(view)
	if second != "192.0.2.2" || unsafe.StringData(second) == unsafe.StringData(first) {
		t.Fatalf("another host gave %q (shared with the last: %v)", second, unsafe.StringData(second) == unsafe.StringData(first))
	}
}
