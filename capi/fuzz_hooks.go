package main

/*
#include <stdlib.h>
#include "internal.h"
*/
import "C"

import "unsafe"

// optionsFromFields builds a C hev2_options from fuzzed field values and
// runs the conversion hev2_connect would, for options_fuzz_test.go (a test
// file cannot use cgo itself). Strings are copied into C memory for the
// call; absent ones are NULL, as the header allows.
func optionsFromFields(ints [16]int32, strs [3]*string) (*connOptions, error) {
	var o C.hev2_options
	C.hev2_options_init_size(&o, C.size_t(unsafe.Sizeof(o)))
	o.resolution_delay_ms = C.int(ints[0])
	o.connection_attempt_delay_ms = C.int(ints[1])
	o.first_address_family_count = C.int(ints[2])
	o.resolv_timeout_ms = C.int(ints[3])
	o.connect_timeout_ms = C.int(ints[4])
	o.open_timeout_ms = C.int(ints[5])
	o.fast_fallback = C.int(ints[6])
	o.family = C.int(ints[7])
	o.local_port = C.int(ints[8])
	o.resolver = C.int(ints[9])
	o.nodelay = C.int(ints[10])
	o.keepalive_ms = C.int(ints[11])
	o.blocking = C.int(ints[12])
	o.record_events = C.int(ints[13])
	o.drive = C.int(ints[14])
	o.job = C.hev2_job(uint32(ints[15]))
	var frees []unsafe.Pointer
	defer func() {
		for _, p := range frees {
			C.free(p)
		}
	}()
	cstr := func(s *string) *C.char {
		if s == nil {
			return nil
		}
		p := C.CString(*s)
		frees = append(frees, unsafe.Pointer(p))
		return p
	}
	o.local_host = cstr(strs[0])
	o.nameservers = cstr(strs[1])
	o.static_hosts = cstr(strs[2])
	return convertOptions(&o)
}
