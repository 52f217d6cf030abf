package main

/*
#include <string.h>
#include <sys/socket.h>
#include "internal.h"
*/
import "C"

import (
	"net/netip"
	"strings"
	"time"

	"github.com/hev2/hev2/core"
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
		a, perr := netip.ParseAddr(strings.TrimSuffix(strings.TrimPrefix(s, "["), "]"))
		if perr != nil {
			return nil, fail(statusOptions, "local_host %q is not an IP address", s)
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

// parseStaticHosts reads "NAME:ADDR[,ADDR...]" entries separated by ';' or
// white space (curl's --resolve without the port).
func parseStaticHosts(s string) (map[string][]netip.Addr, error) {
	hosts := map[string][]netip.Addr{}
	entries := strings.FieldsFunc(s, func(r rune) bool {
		return r == ';' || r == ' ' || r == '\t' || r == '\n' || r == '\r'
	})
	for _, e := range entries {
		name, list, ok := strings.Cut(e, ":")
		if !ok || name == "" || list == "" || len(name) > C.HEV2_MAX_HOSTLEN {
			return nil, fail(statusOptions, "static_hosts entry %q is not NAME:ADDR[,ADDR...]", e)
		}
		for _, a := range strings.Split(list, ",") {
			addr, err := netip.ParseAddr(strings.TrimSuffix(strings.TrimPrefix(a, "["), "]"))
			if err != nil {
				return nil, fail(statusOptions, "static_hosts entry %q: %q is not an IP address", e, a)
			}
			hosts[name] = append(hosts[name], addr)
		}
	}
	if len(hosts) == 0 {
		return nil, fail(statusOptions, "static_hosts %q has no entry", s)
	}
	return hosts, nil
}

// parseNameservers reads comma-separated "IP", "IP:PORT" or "[IPv6]:PORT".
func parseNameservers(s string) ([]netip.AddrPort, error) {
	var out []netip.AddrPort
	for _, f := range strings.Split(s, ",") {
		f = strings.TrimSpace(f)
		if a, err := netip.ParseAddr(f); err == nil {
			out = append(out, netip.AddrPortFrom(a, 53))
			continue
		}
		ap, err := netip.ParseAddrPort(f)
		if err != nil || ap.Port() == 0 {
			return nil, fail(statusOptions, "nameserver %q is not IP, IP:PORT or [IPv6]:PORT", f)
		}
		out = append(out, ap)
	}
	return out, nil
}
