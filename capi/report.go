package main

/*
#include "internal.h"
*/
import "C"

import (
	"errors"
	"syscall"

	"github.com/hev2/hev2/core"
)

// The establishment report (hev2_report*): core builds it from the events
// the handle recorded (record_events), once, the first time it is asked
// for; capi only copies its fields out.

// reportOf returns a done handle's report, building it on first use, or
// the status to answer. It holds c.mu, and a reference the caller drops
// (unref) after unlocking.
func reportOf(id C.hev2_conn) (*conn, *core.Report, C.int) {
	c, rc := doneConn(id)
	if c == nil {
		return nil, nil, rc
	}
	c.mu.Lock()
	if c.released {
		c.mu.Unlock()
		c.unref()
		return nil, nil, unknownHandle(id)
	}
	if c.report == nil {
		rep, err := core.NewReport(c.events)
		if err != nil {
			c.mu.Unlock()
			c.unref()
			if errors.Is(err, core.ErrNoTrace) {
				return nil, nil, refuse(statusInval, "handle %d has no recorded events (made with record_events = 0, or its race ended before it started)", uint64(id))
			}
			return nil, nil, refuse(statusInternal, "handle %d: %v", uint64(id), err)
		}
		c.report = &rep
	}
	return c, c.report, C.HEV2_OK
}

//export hev2go_report
func hev2go_report(id C.hev2_conn, r *C.hev2_report_info) (rc C.int) {
	defer guard(&rc)
	c, rep, rc := reportOf(id)
	if c == nil {
		return rc
	}
	defer c.unref()
	defer c.mu.Unlock()
	r.status = C.int(c.out.status)
	r.connected = boolInt(rep.Connected)
	r.winner = C.int(rep.Winner)
	if rep.Connected {
		r.family = cFamily(rep.Family)
	}
	r.reason = C.int(rep.Reason)
	r.timeout = C.int(rep.Timeout)
	r.elapsed_ms = C.double(ms(rep.Elapsed))
	fillPhase(&r.resolving, rep.Resolving)
	fillPhase(&r.resolution_delay, rep.ResolutionDelay)
	fillPhase(&r.connecting, rep.Connecting)
	r.resolution_delay_expired = boolInt(rep.ResolutionDelayExpired)
	r.n_attempts = C.int(len(rep.Attempts))
	return C.HEV2_OK
}

func fillPhase(p *C.hev2_report_phase, ph core.Phase) {
	if !ph.Happened {
		return // all zero, as the caller's struct was cleared
	}
	p.happened = 1
	p.start_ms = C.double(ms(ph.Start))
	p.end_ms = C.double(ms(ph.End))
}

//export hev2go_report_lookup
func hev2go_report_lookup(id C.hev2_conn, i C.int, l *C.hev2_report_lookup_info) (rc C.int) {
	defer guard(&rc)
	c, rep, rc := reportOf(id)
	if c == nil {
		return rc
	}
	defer c.unref()
	defer c.mu.Unlock()
	if i < 0 || int(i) >= len(rep.Lookups) {
		return refuse(statusInval, "lookup index %d out of range (0: AAAA, 1: A)", int(i))
	}
	lr := rep.Lookups[i]
	l.family = cFamily(lr.Family)
	l.state = C.int(lr.State)
	var re *core.ResolveError
	if errors.As(lr.Err, &re) {
		l.eai = C.int(re.Code)
		l.sys_errno = C.int(re.Errno)
	}
	l.n_addrs = C.int(len(lr.Addrs))
	l.start_ms = C.double(ms(lr.Start))
	l.end_ms = C.double(ms(lr.End))
	return C.HEV2_OK
}

//export hev2go_report_attempt
func hev2go_report_attempt(id C.hev2_conn, i C.int, a *C.hev2_report_attempt_info) (rc C.int) {
	defer guard(&rc)
	c, rep, rc := reportOf(id)
	if c == nil {
		return rc
	}
	defer c.unref()
	defer c.mu.Unlock()
	if i < 0 || int(i) >= len(rep.Attempts) {
		return refuse(statusInval, "attempt index %d out of range (the report has %d attempts)", int(i), len(rep.Attempts))
	}
	ar := rep.Attempts[i]
	putString(a.address[:], ar.Addr.Addr().String())
	a.family = cFamily(ar.Family)
	a.port = C.int(ar.Addr.Port())
	a.outcome = C.int(ar.Outcome)
	a.error = C.int(errnoOf(ar.Err))
	if ar.Outcome == core.AttemptTimedOut {
		a.error = C.int(syscall.ETIMEDOUT) // also when the race's timeout closed it
	}
	var be *core.BindError
	a.bind_failed = boolInt(errors.As(ar.Err, &be))
	a.start_ms = C.double(ms(ar.Start))
	a.end_ms = C.double(ms(ar.End))
	if ar.SynthesizedFrom.IsValid() {
		putString(a.synthesized_from[:], ar.SynthesizedFrom.String())
	}
	return C.HEV2_OK
}

func cFamily(f core.Family) C.int {
	if f == core.IPv6 {
		return C.AF_INET6
	}
	return C.AF_INET
}
