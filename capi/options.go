package main

/*
#include <string.h>
#include <sys/socket.h>
#include "internal.h"
*/
import "C"

import (
	"net/netip"
	"time"
	"unsafe"

	"github.com/hev2/hev2/capi/internal/cparse"
	"github.com/hev2/hev2/core"
	"github.com/hev2/hev2/internal/engine"
)

// connOptions is a C hev2_options converted: the Dialer plus what capi
// itself needs (completion routes, event recording).
type connOptions struct {
	dialer   engine.Options
	doneFn   uintptr // hev2_done_fn, 0 for none
	doneData uintptr
	job      C.hev2_job
	// jobDirect: job runs on the thread that triggers it
	// (HEV2_JOB_DIRECT), so only a library thread may trigger it.
	jobDirect    bool
	recordEvents bool
	// waiterDriven: the race is played by the thread inside hev2_wait
	// (HEV2_DRIVE_WAITER), not by a library thread.
	waiterDriven bool
}

// notifies reports whether the options ask for a callback or a job.
func (co *connOptions) notifies() bool { return co.doneFn != 0 || co.job != 0 }

// convertOptions reads a full-size hev2_options (the shim has already
// checked and copied the caller's size-versioned struct) into a Dialer.
// It only converts C's representation: a flag must be 0 or 1, an enum one
// of its constants, a string parse, a port fit 16 bits. Whether the values
// make sense (ranges, timeouts that exclude each other) is core's to say,
// once, when the race is configured (Dialer.Validate); each field is
// converted on its own so that a garbage struct is refused, not half-used.
func convertOptions(o *C.hev2_options) (*connOptions, error) {
	co := &connOptions{}
	if err := convertOptionsInto(o, co); err != nil {
		return nil, err
	}
	return co, nil
}

// convertOptionsInto is convertOptions into the handle's own connOptions
// (one allocation fewer per connect). The plain options (the members whose
// @option note in hev2.h names a Dialer field) are converted by the
// generated convertPlain (options_gen.go); the members below are the
// special and internal ones, whose handling is capi's own.
func convertOptionsInto(o *C.hev2_options, co *connOptions) error {
	d := &co.dialer
	err := convertPlain(o, d)
	d.BlockingFD = flag("blocking", o.blocking, &err)
	co.recordEvents = flag("record_events", o.record_events, &err)
	if err != nil {
		return err
	}
	switch o.family {
	case C.AF_UNSPEC:
		d.Family = core.FamilyUnspec
	case C.AF_INET:
		d.Family = core.IPv4
	case C.AF_INET6:
		d.Family = core.IPv6
	default:
		return fail(statusOptions, "family %d is not AF_UNSPEC, AF_INET or AF_INET6", int(o.family))
	}
	if o.local_host != nil {
		s := cString(o.local_host, 128)
		a, perr := cparse.LocalHost(s)
		if perr != nil {
			return fail(statusOptions, "%s", perr)
		}
		d.LocalAddr = a
	}
	if p := o.local_port; C.int(uint16(p)) != p {
		return fail(statusOptions, "local_port %d is not a port number (0-65535)", int(p))
	}
	d.LocalPort = uint16(o.local_port)
	if o.alpn != nil {
		alpn, aerr := cparse.ALPN(cString(o.alpn, 16*256+16))
		if aerr != nil {
			return fail(statusOptions, "%s", aerr)
		}
		d.ALPN = alpn
	}
	if o.static_hosts != nil {
		hosts, herr := parseStaticHosts(cString(o.static_hosts, 1<<20))
		if herr != nil {
			return herr
		}
		d.Hosts = hosts
	}
	var nameservers []netip.AddrPort
	if o.nameservers != nil {
		if nameservers, err = parseNameservers(cString(o.nameservers, 1<<16)); err != nil {
			return err
		}
	}
	if d.Resolver, err = resolverFor(int(o.resolver), nameservers); err != nil {
		return err
	}
	if o.job != 0 {
		flags := C.hev2c_job_flags(o.job)
		if flags < 0 {
			return fail(statusOptions, "job %d is not a registered job", int(o.job))
		}
		co.jobDirect = flags&C.HEV2_JOB_DIRECT != 0
	}
	co.job = o.job
	switch o.drive {
	case C.HEV2_DRIVE_LIBRARY:
	case C.HEV2_DRIVE_WAITER:
		co.waiterDriven = true
	default:
		return fail(statusOptions, "drive %d is not HEV2_DRIVE_LIBRARY (0) or HEV2_DRIVE_WAITER (1)", int(o.drive))
	}
	// Read as integers, never as Go pointers (see hev2c_call_done_u: the
	// data may be any bit pattern), and in Go: a call into C for them on
	// every connect cost more than the whole conversion.
	co.doneFn = *(*uintptr)(unsafe.Pointer(&o.on_done))
	co.doneData = *(*uintptr)(unsafe.Pointer(&o.on_done_data))
	return nil
}

// millis is a duration field in ms as a Duration (any C int fits).
func millis(v C.int) time.Duration { return time.Duration(v) * time.Millisecond }

// flag is a 0/1 field as a bool; any other value makes *err the refusal
// (unless it holds an earlier one) and reads as false. A pointer rather
// than a closure over err: nothing escapes, nothing is allocated.
func flag(name string, v C.int, err *error) bool {
	if *err == nil && v != 0 && v != 1 {
		*err = fail(statusOptions, "%s must be 0 or 1, not %d", name, int(v))
	}
	return v == 1
}

// cString copies a NUL-terminated C string of at most max bytes (a longer
// one is cut, and then refused by the parser as malformed).
func cString(p *C.char, max int) string {
	return C.GoStringN(p, C.int(cStrnlen(p, max)))
}

// cView is the C string at p (at most max bytes) seen as a Go string
// without copying it: only for a callee that keeps nothing of it once it
// returns (a parser; its error messages are formatted copies), while the
// caller's memory is valid, i.e. within the C call. It spares the port,
// parsed on every connect, an allocation.
func cView(p *C.char, max int) string {
	return unsafe.String((*byte)(unsafe.Pointer(p)), cStrnlen(p, max))
}

// cStrnlen is strnlen(3) in Go: the port string is measured on every
// connect, and a call into C for it costs more than the loop. It reads byte
// by byte up to the NUL or max, never further, as strnlen may.
func cStrnlen(p *C.char, max int) int {
	b := unsafe.Pointer(p)
	for n := 0; n < max; n++ {
		if *(*byte)(unsafe.Add(b, n)) == 0 {
			return n
		}
	}
	return max
}

// parseStaticHosts and parseNameservers are capi/internal/cparse's parsers
// (pure Go, fuzzed there) with their errors as HEV2_EOPTIONS.
func parseStaticHosts(s string) (map[string][]netip.Addr, error) {
	hosts, err := cparse.StaticHosts(s, C.HEV2_MAX_HOSTLEN)
	if err != nil {
		return nil, fail(statusOptions, "%s", err)
	}
	return hosts, nil
}

func parseNameservers(s string) ([]netip.AddrPort, error) {
	ns, err := cparse.Nameservers(s)
	if err != nil {
		return nil, fail(statusOptions, "%s", err)
	}
	return ns, nil
}
