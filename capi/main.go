// Command capi is libhev2.so: the C ABI of hev2 (include/hev2.h).
//
// This package only converts. The public symbols are the thin C functions
// of shim.c, which check for a fork child before entering Go and then call
// the hev2go_* exports defined here; every algorithm lives in core. No Go
// pointer crosses the boundary: handles are ids, and the caller's callback
// and user data travel as integers.
package main

/*
#cgo CFLAGS: -I${SRCDIR}/../include -Wall -Wextra -Werror -Wno-unused-parameter
#include "internal.h"
*/
import "C"

func main() {}
