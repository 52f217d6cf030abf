package main

/*
#include "internal.h"
*/
import "C"

import (
	"errors"
	"strings"
	"syscall"

	"github.com/hev2/hev2/core"
	"github.com/hev2/hev2/internal/race"
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
	if h := rep.HTTPS; h != nil {
		r.https_state = C.HEV2_HTTPS_PENDING
		if int(h.State) < len(httpsStates) {
			r.https_state = httpsStates[h.State]
		}
		r.n_service_lookups = C.int(len(h.Lookups))
		r.n_services = C.int(len(h.Services))
		r.n_skipped = C.int(len(h.Skipped))
		r.n_replaced = C.int(len(h.Replaced))
	}
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
	a.service = C.int(ar.Service)
	a.origin = cOrigin(ar.Origin)
	return C.HEV2_OK
}

// cOrigin is the header's HEV2_ORIGIN_* (0 for none).
func cOrigin(o core.Origin) C.int {
	switch o {
	case core.OriginDNS:
		return C.HEV2_ORIGIN_DNS
	case core.OriginStatic:
		return C.HEV2_ORIGIN_STATIC
	case core.OriginSynthesized:
		return C.HEV2_ORIGIN_SYNTHESIZED
	case core.OriginHint:
		return C.HEV2_ORIGIN_HINT
	case core.OriginService:
		return C.HEV2_ORIGIN_SERVICE
	}
	return 0
}

// httpsPart is the report's HTTPS part with item i of n in range, or the
// status to answer (with c unlocked and unreferenced).
func httpsPart(id C.hev2_conn, i C.int, what string, count func(*core.HTTPSReport) int) (*conn, *core.HTTPSReport, C.int) {
	c, rep, rc := reportOf(id)
	if c == nil {
		return nil, nil, rc
	}
	n := 0
	if rep.HTTPS != nil {
		n = count(rep.HTTPS)
	}
	if i < 0 || int(i) >= n {
		c.mu.Unlock()
		c.unref()
		if rep.HTTPS == nil {
			return nil, nil, refuse(statusInval, "%s index %d out of range (the race made no HTTPS query)", what, int(i))
		}
		return nil, nil, refuse(statusInval, "%s index %d out of range (the report has %d)", what, int(i), n)
	}
	return c, rep.HTTPS, C.HEV2_OK
}

// cQuery is the header's HEV2_REPORT_QUERY_* (the DNS record type).
func cQuery(q race.QueryKind) C.int {
	switch q {
	case race.QueryA:
		return C.HEV2_REPORT_QUERY_A
	case race.QueryAAAA:
		return C.HEV2_REPORT_QUERY_AAAA
	}
	return C.HEV2_REPORT_QUERY_HTTPS
}

//export hev2go_report_service_lookup
func hev2go_report_service_lookup(id C.hev2_conn, i C.int, l *C.hev2_report_service_lookup_info) (rc C.int) {
	defer guard(&rc)
	c, h, rc := httpsPart(id, i, "service lookup", func(h *core.HTTPSReport) int { return len(h.Lookups) })
	if c == nil {
		return rc
	}
	defer c.unref()
	defer c.mu.Unlock()
	lr := h.Lookups[i]
	l.query = cQuery(lr.Query)
	l.state = C.int(lr.State)
	putString(l.name[:], lr.Name)
	l.n_records = C.int(lr.Records)
	l.n_addrs = C.int(len(lr.Addrs))
	var re *core.ResolveError
	if errors.As(lr.Err, &re) {
		l.eai = C.int(re.Code)
		l.sys_errno = C.int(re.Errno)
	}
	l.start_ms = C.double(ms(lr.Start))
	l.end_ms = C.double(ms(lr.End))
	return C.HEV2_OK
}

//export hev2go_report_service
func hev2go_report_service(id C.hev2_conn, i C.int, s *C.hev2_report_service_info) (rc C.int) {
	defer guard(&rc)
	c, h, rc := httpsPart(id, i, "service", func(h *core.HTTPSReport) int { return len(h.Services) })
	if c == nil {
		return rc
	}
	defer c.unref()
	defer c.mu.Unlock()
	sr := h.Services[i]
	s.number = C.int(sr.Number)
	s.priority = C.int(sr.Priority)
	s.port = C.int(sr.Port)
	putString(s.target[:], sr.Target)
	putString(s.alpn[:], strings.Join(sr.ALPN, ","))
	s.ech = boolInt(len(sr.ECH) > 0)
	s.n_hints = C.int(len(sr.Hints))
	return C.HEV2_OK
}

//export hev2go_report_skipped
func hev2go_report_skipped(id C.hev2_conn, i C.int, s *C.hev2_report_skipped_info) (rc C.int) {
	defer guard(&rc)
	c, h, rc := httpsPart(id, i, "skipped record", func(h *core.HTTPSReport) int { return len(h.Skipped) })
	if c == nil {
		return rc
	}
	defer c.unref()
	defer c.mu.Unlock()
	sk := h.Skipped[i]
	s.priority = C.int(sk.Priority)
	s.port = C.int(sk.Port)
	putString(s.target[:], sk.Target)
	putString(s.reason[:], sk.Reason)
	s.at_ms = C.double(ms(sk.At))
	return C.HEV2_OK
}

//export hev2go_report_replaced
func hev2go_report_replaced(id C.hev2_conn, i C.int, r *C.hev2_report_replaced_info) (rc C.int) {
	defer guard(&rc)
	c, h, rc := httpsPart(id, i, "replaced hint", func(h *core.HTTPSReport) int { return len(h.Replaced) })
	if c == nil {
		return rc
	}
	defer c.unref()
	defer c.mu.Unlock()
	rh := h.Replaced[i]
	r.service = C.int(rh.Service)
	putString(r.address[:], rh.Addr.Addr().String())
	r.family = cFamily(race.FamilyOf(rh.Addr.Addr()))
	r.port = C.int(rh.Addr.Port())
	r.at_ms = C.double(ms(rh.At))
	return C.HEV2_OK
}

func cFamily(f core.Family) C.int {
	if f == core.IPv6 {
		return C.AF_INET6
	}
	return C.AF_INET
}
