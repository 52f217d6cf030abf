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

	"github.com/hev2/hev2/core"
	"github.com/hev2/hev2/internal/cparse"
)

// connOptions is a C hev2_options converted: the Dialer plus what capi
// itself needs (completion routes, event recording).
type connOptions struct {
	dialer       core.Dialer
	doneFn       uintptr // hev2_done_fn, 0 for none
	doneData     uintptr
	job          C.hev2_job
	recordEvents bool
	// waiterDriven: the race is played by the thread inside hev2_wait
	// (HEV2_DRIVE_WAITER), not by a library thread.
	waiterDriven bool
}

// convertOptions reads a full-size hev2_options (the shim has already
// checked and copied the caller's size-versioned struct). Each field is
// checked on its own so that a garbage struct is refused, not half-used.
func convertOptions(o *C.hev2_options) (*connOptions, error) {
	co := &connOptions{}
	d := &co.dialer
	var err error
	ms := func(name string, v C.int) time.Duration {
		if err == nil && (v < 0 || int64(v) > C.HEV2_MAX_TIMEOUT_MS) {
			err = fail(statusOptions, "%s %d ms out of range [0, %d]", name, int(v), C.HEV2_MAX_TIMEOUT_MS)
		}
		return time.Duration(v) * time.Millisecond
	}
	flag := func(name string, v C.int) bool {
		if err == nil && v != 0 && v != 1 {
			err = fail(statusOptions, "%s must be 0 or 1, not %d", name, int(v))
		}
		return v == 1
	}
	d.ResolutionDelay = ms("resolution_delay_ms", o.resolution_delay_ms)
	d.ConnectionAttemptDelay = ms("connection_attempt_delay_ms", o.connection_attempt_delay_ms)
	d.ResolvTimeout = ms("resolv_timeout_ms", o.resolv_timeout_ms)
	d.ConnectTimeout = ms("connect_timeout_ms", o.connect_timeout_ms)
	d.OpenTimeout = ms("open_timeout_ms", o.open_timeout_ms)
	d.KeepAlive = ms("keepalive_ms", o.keepalive_ms)
	d.DisableFastFallback = !flag("fast_fallback", o.fast_fallback)
	d.NoDelay = flag("nodelay", o.nodelay)
	d.BlockingFD = flag("blocking", o.blocking)
	co.recordEvents = flag("record_events", o.record_events)
	if err != nil {
		return nil, err
	}
	if n := o.first_address_family_count; n < 0 || n > 64 {
		return nil, fail(statusOptions, "first_address_family_count %d out of range [0, 64]", int(n))
	}
	d.FirstAddressFamilyCount = int(o.first_address_family_count)
	switch o.family {
	case C.AF_UNSPEC:
		d.Family = core.FamilyUnspec
	case C.AF_INET:
		d.Family = core.IPv4
	case C.AF_INET6:
		d.Family = core.IPv6
	default:
		return nil, fail(statusOptions, "family %d is not AF_UNSPEC, AF_INET or AF_INET6", int(o.family))
	}
	if o.local_host != nil {
		s := C.GoStringN(o.local_host, C.int(C.strnlen(o.local_host, 128)))
		a, perr := cparse.LocalHost(s)
		if perr != nil {
			return nil, fail(statusOptions, "%s", perr)
		}
		d.LocalAddr = a
	}
	if p := o.local_port; p < 0 || p > 65535 {
		return nil, fail(statusOptions, "local_port %d out of range [0, 65535]", int(p))
	}
	d.LocalPort = uint16(o.local_port)
	if o.static_hosts != nil {
		hosts, herr := parseStaticHosts(cString(o.static_hosts, 1<<20))
		if herr != nil {
			return nil, herr
		}
		d.Hosts = hosts
	}
	var nameservers []netip.AddrPort
	if o.nameservers != nil {
		if nameservers, err = parseNameservers(cString(o.nameservers, 1<<16)); err != nil {
			return nil, err
		}
	}
	if d.Resolver, err = resolverFor(int(o.resolver), nameservers); err != nil {
		return nil, err
	}
	if o.job != 0 && C.hev2c_job_registered(o.job) == 0 {
		return nil, fail(statusOptions, "job %d is not a registered job", int(o.job))
	}
	co.job = o.job
	switch o.drive {
	case C.HEV2_DRIVE_LIBRARY:
	case C.HEV2_DRIVE_WAITER:
		co.waiterDriven = true
	default:
		return nil, fail(statusOptions, "drive %d is not HEV2_DRIVE_LIBRARY (0) or HEV2_DRIVE_WAITER (1)", int(o.drive))
	}
	switch o.nat64 {
	case C.HEV2_NAT64_AUTO:
	case C.HEV2_NAT64_OFF:
		d.DisableNAT64 = true
	default:
		return nil, fail(statusOptions, "nat64 %d is not HEV2_NAT64_AUTO (0) or HEV2_NAT64_OFF (1)", int(o.nat64))
	}
	co.doneFn = uintptr(C.hev2c_done_fn_of(o))
	co.doneData = uintptr(C.hev2c_done_data_of(o))
	if verr := d.Validate(); verr != nil {
		return nil, fail(statusOptions, "%s", verr.Error())
	}
	return co, nil
}

// cString copies a NUL-terminated C string of at most max bytes (a longer
// one is cut, and then refused by the parser as malformed).
func cString(p *C.char, max int) string {
	return C.GoStringN(p, C.int(C.strnlen(p, C.size_t(max))))
}

// parseStaticHosts and parseNameservers are internal/cparse's parsers
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
