package main

/*
#include "internal.h"
*/
import "C"

import (
	"strings"
	"sync/atomic"
	"unsafe"
)

// convertHost copies the caller's host; its rules are core's, applied
// when the race is configured. A length beyond any host core accepts is
// cut to the bound hev2_connect's strnlen uses, so that an absurd length is
// never read whole and is still refused as too long.
func convertHost(host *C.char, n C.size_t) (string, error) {
	if host == nil {
		return "", fail(statusHost, "host is NULL")
	}
	if n > C.HEV2_MAX_HOSTLEN+8 {
		n = C.HEV2_MAX_HOSTLEN + 8
	}
	return sameHost(unsafe.String((*byte)(unsafe.Pointer(host)), int(n))), nil
}

// lastHost is the host of the latest connect, as a Go string. Programs
// connect to the same host again and again (a pool refilling, retries, a
// client of one service), and the copy of the caller's string was the one
// allocation left on a connect to a literal: perf put it at 5% of the
// user-space time of a one-call loopback connect. A Go string never
// changes, so one can serve every call and thread that passes the same
// bytes; a different host costs a copy, as before, and becomes the one
// kept.
var lastHost atomic.Pointer[string]

// sameHost is view (the caller's memory, valid during the call) as a Go
// string of its own: lastHost when the bytes are the same.
func sameHost(view string) string {
	if p := lastHost.Load(); p != nil && *p == view {
		return *p
	}
	s := strings.Clone(view)
	lastHost.Store(&s)
	return s
}
