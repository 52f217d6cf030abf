// Command emptylib is an empty Go -buildmode=c-shared library: one exported
// function that does nothing. bench_startup (bench/c) loads it in fresh
// processes beside libhev2, built with the same go build flags (mk/capi.mk's
// CAPI_SHARED_FLAGS): its first call costs the Go runtime's start and
// nothing else, the floor under libhev2's first call.
package main

import "C"

//export hev2bench_noop
func hev2bench_noop() {}

func main() {}
