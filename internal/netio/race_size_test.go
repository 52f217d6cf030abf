package netio

import (
	"testing"
	"unsafe"
)

// A pending handle's memory is mostly its race, allocated in the size
// class that holds it (bench_pending: at most 4 KiB a handle with 10,000
// pending). The races keep their decided outcome (Result or Error) in
// their own memory, so that a cancel allocates nothing; this holds them to
// the size classes they had before: Go's 2304 and 2688 bytes, less the
// 8-byte header the allocator puts before an object of more than 512
// bytes that holds pointers.
func TestPendingRacesStayInTheirSizeClasses(t *testing.T) {
	const mallocHeader = 8
	if n := unsafe.Sizeof(LibraryDriven{}) + mallocHeader; n > 2304 {
		t.Errorf("LibraryDriven takes %d bytes with its header, over its 2304-byte size class", n)
	}
	if n := unsafe.Sizeof(WaiterDriven{}) + mallocHeader; n > 2688 {
		t.Errorf("WaiterDriven takes %d bytes with its header, over its 2688-byte size class", n)
	}
}
