package main

/*
#include <string.h>
#include <sys/socket.h>
#include "internal.h"
// It copies the address and keeps no pointer: the address can stay on
// the Go stack (hev2_result then allocates nothing).
#cgo noescape hev2c_fill_sockaddr
#cgo nocallback hev2c_fill_sockaddr
*/
import "C"

import (
	"errors"
	"fmt"
	"net"
	"net/netip"
	"strconv"
	"strings"
	"syscall"
	"time"
	"unsafe"

	"github.com/hev2/hev2/core"
	"github.com/hev2/hev2/internal/race"
)

// doneConn returns the handle if it is done, or the status to answer.
// The caller drops the reference it holds on success (unref).
func doneConn(id C.hev2_conn) (*conn, C.int) {
	c := lookup(id)
	if c == nil {
		return nil, unknownHandle(id)
	}
	select {
	case <-c.done:
		return c, C.HEV2_OK
	default:
		c.unref()
		return nil, refuse(statusAgain, "handle %d is still running", uint64(id))
	}
}

// doneHeld returns the handle if it is done and not released, with a
// reference taken and its lock held (let go with c.leave), or the status
// to answer.
func doneHeld(id C.hev2_conn) (*conn, C.int) {
	c, rc := doneConn(id)
	if c == nil {
		return nil, rc
	}
	c.mu.Lock()
	if c.released {
		c.mu.Unlock()
		c.unref()
		return nil, unknownHandle(id)
	}
	return c, C.HEV2_OK
}

// leave undoes doneHeld.
func (c *conn) leave() {
	c.mu.Unlock()
	c.unref()
}

//export hev2go_result
func hev2go_result(id C.hev2_conn, r *C.hev2_result_info) (rc C.int) {
	defer guard(&rc)
	c, rc := doneHeld(id)
	if c == nil {
		return rc
	}
	defer c.leave()
	r.status = C.int(c.out.status)
	r.fd = -1
	r.elapsed_ms = C.double(ms(c.elapsed))
	r.error = C.int(c.out.errno)
	r.eai = C.int(c.out.eai)
	r.timeout = C.int(c.out.timeout)
	var lookups [2]core.LookupInfo
	var attempts []core.AttemptInfo
	var hist core.HistoryInput
	if c.res != nil {
		lookups, attempts, hist = c.res.Lookups, c.res.Attempts, c.res.History
		ap := c.res.Addr
		r.fd = C.int(c.res.FD)
		c.fdTaken = true
		r.family = familyOf(ap.Addr())
		r.port = C.int(ap.Port())
		putAddr(r.address[:], ap.Addr())
		putAddr(r.synthesized_from[:], c.res.SynthesizedFrom)
		a := ap.Addr().Unmap()
		b, n := a.As16(), 16
		if a.Is4() {
			b4 := a.As4()
			n = copy(b[:], b4[:])
		}
		C.hev2c_fill_sockaddr(r, (*C.uchar)(unsafe.Pointer(&b[0])), C.int(n), C.int(ap.Port()), C.uint32_t(scopeID(a)))
	} else {
		var ce *core.Error
		if errors.As(c.err, &ce) {
			lookups, attempts, hist = ce.Lookups, ce.Attempts, ce.History
		}
	}
	for i := range lookups {
		fillLookup(&r.lookups[i], lookups[i], i)
	}
	r.history_family = cFamilyOrNone(hist.First)
	if hist.DelayFromRTT {
		r.history_samples = C.int(hist.Samples)
		r.history_srtt_ms = C.double(ms(hist.SRTT))
		r.attempt_delay_ms = C.double(ms(hist.AttemptDelay))
	}
	putString(r.history_reason[:], hist.Reason)
	r.n_attempts = C.int(len(attempts))
	r.n_events = C.int(len(c.events))
	return C.HEV2_OK
}

func fillLookup(l *C.hev2_lookup_info, li core.LookupInfo, i int) {
	l.family = C.AF_INET6
	if i == 1 {
		l.family = C.AF_INET
	}
	switch {
	case !li.Started:
		l.state = C.HEV2_LOOKUP_NOT_STARTED
	case li.Err != nil:
		l.state = C.HEV2_LOOKUP_FAILED
	case li.Done:
		l.state = C.HEV2_LOOKUP_ANSWERED
	default:
		l.state = C.HEV2_LOOKUP_PENDING
	}
	if li.Err != nil { // errors.As's target escapes: not on every answered lookup
		var re *core.ResolveError
		var te *core.TimeoutError
		if errors.As(li.Err, &re) {
			l.eai = C.int(re.Code)
			l.sys_errno = C.int(re.Errno)
		} else if errors.As(li.Err, &te) {
			l.sys_errno = C.int(syscall.ETIMEDOUT)
		}
	}
	l.n_addrs = C.int(len(li.Addrs))
	l.elapsed_ms = C.double(ms(li.Elapsed))
}

//export hev2go_get_attempt
func hev2go_get_attempt(id C.hev2_conn, i C.int, a *C.hev2_attempt_info) (rc C.int) {
	defer guard(&rc)
	c, rc := doneHeld(id)
	if c == nil {
		return rc
	}
	defer c.leave()
	var attempts []core.AttemptInfo
	var ce *core.Error
	if c.res != nil {
		attempts = c.res.Attempts
	} else if errors.As(c.err, &ce) {
		attempts = ce.Attempts
	}
	if i < 0 || int(i) >= len(attempts) {
		return refuse(statusInval, "attempt index %d out of range (handle has %d attempts)", int(i), len(attempts))
	}
	at := attempts[i]
	putString(a.address[:], at.Addr.Addr().String())
	a.family = familyOf(at.Addr.Addr())
	a.port = C.int(at.Addr.Port())
	a.error = C.int(errnoOf(at.Err))
	a.won = boolInt(at.Won)
	var be *core.BindError
	a.bind_failed = boolInt(errors.As(at.Err, &be))
	a.start_ms = C.double(ms(at.Start))
	a.end_ms = C.double(ms(at.End))
	putAddr(a.synthesized_from[:], at.SynthesizedFrom)
	a.lost = boolInt(at.Lost)
	return C.HEV2_OK
}

//export hev2go_get_event
func hev2go_get_event(id C.hev2_conn, i C.int, e *C.hev2_event_info) (rc C.int) {
	defer guard(&rc)
	c, rc := doneHeld(id)
	if c == nil {
		return rc
	}
	defer c.leave()
	if i < 0 || int(i) >= len(c.events) {
		return refuse(statusInval, "event index %d out of range (handle has %d events)", int(i), len(c.events))
	}
	ev := c.events[i]
	e.at_ms = C.double(ms(ev.At))
	e.kind = C.int(ev.Kind)
	e.family = cFamilyOrNone(ev.Family)
	e.attempt = -1
	var detail string
	switch ev.Kind {
	case core.TraceHistory, core.TraceServiceState, core.TraceServiceSkipped:
		detail = ev.Detail
	case core.TraceServiceLookupStarted, core.TraceServiceLookupCanceled, core.TraceServiceLookupFailed:
		detail = ev.Query.String() + " " + ev.Detail
	case core.TraceServiceLookupAnswered:
		detail = ev.Query.String() + " " + ev.Detail
		if ev.Query == race.QueryHTTPS {
			detail += " " + strconv.Itoa(ev.Attempt) + " records"
		}
		for _, a := range ev.Addrs {
			detail += " " + a.String()
		}
	case core.TraceServiceAdded:
		e.attempt = C.int(ev.Attempt)
		detail = ev.Detail
	case core.TraceEndpointRemoved:
		putString(e.address[:], ev.Addr.Addr().String())
		e.port = C.int(ev.Addr.Port())
		e.family = familyOf(ev.Addr.Addr())
	case core.TraceAttemptStarted, core.TraceAttemptFailed, core.TraceAttemptWon, core.TraceAttemptClosed:
		e.attempt = C.int(ev.Attempt)
		putString(e.address[:], ev.Addr.Addr().String())
		e.port = C.int(ev.Addr.Port())
		if e.family == 0 {
			e.family = familyOf(ev.Addr.Addr())
		}
	case core.TraceResolutionDelay, core.TraceAttemptDelay:
		detail = fmt.Sprintf("until %.3f ms", ms(ev.Until))
	case core.TraceLookupAnswered:
		parts := make([]string, len(ev.Addrs))
		for k, a := range ev.Addrs {
			parts[k] = a.String()
		}
		detail = strings.Join(parts, " ")
	case core.TraceNat64Discovery:
		detail = ev.Detail
	case core.TraceNat64Prefix:
		parts := make([]string, len(ev.Prefixes))
		for k, p := range ev.Prefixes {
			parts[k] = p.String()
		}
		detail = strings.Join(parts, " ")
		if detail == "" {
			detail = "none"
		}
		if ev.Detail != "" {
			detail += " (" + ev.Detail + ")"
		}
	case core.TraceSynthesized:
		putString(e.address[:], ev.Addr.Addr().String())
		e.port = C.int(ev.Addr.Port())
		e.family = C.AF_INET6
		detail = "from " + ev.From.String()
	}
	e.error = C.int(errnoOf(ev.Err))
	var re *core.ResolveError
	if errors.As(ev.Err, &re) {
		e.eai = C.int(re.Code)
	}
	e.timeout = C.int(ev.Timeout)
	if ev.Err != nil && detail == "" {
		detail = ev.Err.Error()
	}
	putString(e.detail[:], detail)
	return C.HEV2_OK
}

//export hev2go_errmsg
func hev2go_errmsg(id C.hev2_conn, buf *C.char, size C.size_t) (rc C.int) {
	defer guard(&rc)
	out := unsafe.Slice(buf, int(size))
	c := lookup(id)
	if c == nil {
		return C.HEV2_EHANDLE
	}
	defer c.unref()
	select {
	case <-c.done:
	default:
		putString(out, "in progress")
		return C.HEV2_OK
	}
	putString(out, c.errmsg())
	return C.HEV2_OK
}

// errmsg is one line explaining c's outcome; c is done.
func (c *conn) errmsg() string {
	c.mu.Lock()
	defer c.mu.Unlock()
	var msg string
	switch {
	case c.res != nil:
		msg = fmt.Sprintf("connected to %s in %.3f ms", c.res.Addr, ms(c.elapsed))
	case c.out.status == statusCancelled:
		msg = fmt.Sprintf("connect %s: canceled", shownHostPort(c.host, c.port))
		if c.err != nil {
			msg += " (" + c.err.Error() + ")"
		}
	case c.err != nil:
		msg = c.err.Error()
	}
	return msg
}

// shownHostPort is host:port for a message, the host as the caller gave it
// (an IPv6 literal in brackets or not).
func shownHostPort(host string, port uint16) string {
	if strings.HasPrefix(host, "[") {
		return host + ":" + strconv.Itoa(int(port))
	}
	return net.JoinHostPort(host, strconv.Itoa(int(port)))
}

// errnoOf extracts the errno of an attempt or event error (ETIMEDOUT for
// one of the caller's timeouts).
func errnoOf(err error) int {
	if err == nil {
		return 0
	}
	var te *core.TimeoutError
	if errors.As(err, &te) {
		return int(syscall.ETIMEDOUT)
	}
	var re *core.ResolveError
	if errors.As(err, &re) {
		return int(re.Errno)
	}
	var en syscall.Errno
	if errors.As(err, &en) {
		return int(en)
	}
	return 0
}

// cFamilyOrNone is f as AF_INET6, AF_INET, or 0 for FamilyUnspec.
func cFamilyOrNone(f core.Family) C.int {
	switch f {
	case core.IPv6:
		return C.AF_INET6
	case core.IPv4:
		return C.AF_INET
	}
	return 0
}

func familyOf(a netip.Addr) C.int {
	if a.Unmap().Is4() {
		return C.AF_INET
	}
	return C.AF_INET6
}

// scopeID turns an IPv6 zone (a number or an interface name) into the
// sockaddr_in6 scope id.
func scopeID(a netip.Addr) uint32 {
	z := a.Zone()
	if z == "" {
		return 0
	}
	if n, err := strconv.ParseUint(z, 10, 32); err == nil {
		return uint32(n)
	}
	if ifi, err := net.InterfaceByName(z); err == nil {
		return uint32(ifi.Index)
	}
	return 0
}

// putString copies s into a C char array, cut to fit, NUL-terminated.
func putString[T string | []byte](dst []C.char, s T) {
	if len(dst) == 0 {
		return
	}
	n := copy(unsafe.Slice((*byte)(unsafe.Pointer(&dst[0])), len(dst)-1), s)
	dst[n] = 0
}

func ms(d time.Duration) float64 { return float64(d) / float64(time.Millisecond) }

func boolInt(b bool) C.int {
	if b {
		return 1
	}
	return 0
}

// putAddr writes a's text ("" for the zero Addr) without allocating it.
func putAddr(dst []C.char, a netip.Addr) {
	var text [64]byte // an IPv6 address with an interface name fits
	putString(dst, a.AppendTo(text[:0]))
}
