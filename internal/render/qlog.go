package render

import (
	"bufio"
	"encoding/json"
	"errors"
	"io"
	"net/netip"
	"strconv"
	"strings"
	"time"

	"github.com/hev2/hev2/internal/race"
)

// The qlog output follows draft-kuehlewind-happy-qlog-00 (event schema
// hev3-00) inside qlog's main schema (draft-ietf-quic-qlog-main-schema,
// QlogFileSeq serialized as JSON-SEQ, RFC 7464). What the draft has no
// event for goes to hev2's own namespace; docs/trace-names.md lists the
// mapping both ways.
const (
	QlogHEv3Schema = "urn:ietf:params:qlog:events:hev3-00"
	QlogHev2Schema = "urn:x-hev2:qlog:events:hev2-00"
	qlogFileSchema = "urn:ietf:params:qlog:file:sequential"
	qlogMediaType  = "application/qlog+json-seq"
	recordSep      = 0x1e // RFC 7464's record separator
)

type qlogHeader struct {
	FileSchema          string    `json:"file_schema"`
	SerializationFormat string    `json:"serialization_format"`
	Title               string    `json:"title"`
	Trace               qlogTrace `json:"trace"`
}

type qlogTrace struct {
	Title        string           `json:"title"`
	CommonFields qlogCommonFields `json:"common_fields"`
	VantagePoint qlogVantagePoint `json:"vantage_point"`
	EventSchemas []string         `json:"event_schemas"`
}

type qlogCommonFields struct {
	TimeFormat    string            `json:"time_format"`
	ReferenceTime qlogReferenceTime `json:"reference_time"`
}

// The race's times count from its start on a monotonic clock whose epoch
// is not a wall-clock moment.
type qlogReferenceTime struct {
	ClockType string `json:"clock_type"`
	Epoch     string `json:"epoch"`
}

type qlogVantagePoint struct {
	Name string `json:"name"`
	Type string `json:"type"`
}

type qlogEvent struct {
	Time float64 `json:"time"`
	Name string  `json:"name"`
	Data any     `json:"data"`
}

// HEAttemptTarget (only the fields hev2 knows; the service's for a
// candidate of the HTTPS part).
type qlogTarget struct {
	Address         string   `json:"address"`
	Port            uint16   `json:"port"`
	Family          string   `json:"family"`
	Transport       string   `json:"transport"`
	ALPN            []string `json:"alpn,omitempty"`
	ServiceName     string   `json:"service_name,omitempty"`
	ServicePriority *int     `json:"service_priority,omitempty"`
	ECHOffered      *bool    `json:"ech_offered,omitempty"`
}

// HEPolicy.
type qlogPolicy struct {
	ResolutionDelayMS           *int64 `json:"resolution_delay_ms,omitempty"`
	PreferredAddressFamilyCount *int   `json:"preferred_address_family_count,omitempty"`
	ConnectionAttemptDelayMS    *int64 `json:"connection_attempt_delay_ms,omitempty"`
	MinConnectionAttemptDelayMS int64  `json:"min_connection_attempt_delay_ms"`
	MaxConnectionAttemptDelayMS int64  `json:"max_connection_attempt_delay_ms"`
	SuccessDefinition           string `json:"success_definition"`
}

type qlogConfigSet struct {
	Session string     `json:"he_session_id"`
	Policy  qlogPolicy `json:"policy"`
	Reason  string     `json:"reason"`
}

type qlogDNSStarted struct {
	Session  string   `json:"he_session_id"`
	DNSID    string   `json:"dns_id"`
	Hostname string   `json:"hostname"`
	QTypes   []string `json:"qtypes"`
}

type qlogDNSAddress struct {
	Type    string `json:"type"`
	Address string `json:"address"`
	Family  string `json:"family"`
}

// HEDNSServiceResult: one record of an HTTPS answer (a usable
// ServiceMode record, or the AliasMode record followed).
type qlogDNSService struct {
	Type       string   `json:"type"` // "service"
	Mode       string   `json:"mode"` // "alias" or "servicemode"
	TargetName string   `json:"target_name"`
	Priority   *int     `json:"priority,omitempty"`
	ALPN       []string `json:"alpn,omitempty"`
	IPv4Hint   []string `json:"ipv4hint,omitempty"`
	IPv6Hint   []string `json:"ipv6hint,omitempty"`
}

type qlogDNSFinished struct {
	Session      string `json:"he_session_id"`
	DNSID        string `json:"dns_id"`
	Hostname     string `json:"hostname"`
	Results      []any  `json:"results"`
	AnswerType   string `json:"answer_type"`
	ErrorCode    string `json:"error_code,omitempty"`
	ErrorMessage string `json:"error_message,omitempty"`
	DurationMS   int64  `json:"duration_ms"`
	AliasFollow  bool   `json:"is_alias_follow,omitempty"`
}

type qlogCandidate struct {
	Session string     `json:"he_session_id"`
	Source  string     `json:"source"`
	Target  qlogTarget `json:"target"`
	GroupID string     `json:"group_id,omitempty"`
}

type qlogCandidateRemoved struct {
	Session          string     `json:"he_session_id"`
	Target           qlogTarget `json:"target"`
	Reason           string     `json:"reason"`
	HadActiveAttempt bool       `json:"had_active_attempt"`
}

// hev2's events of the HTTPS part.
type qlogHTTPSState struct {
	Session  string `json:"he_session_id"`
	State    string `json:"state"`
	Services int    `json:"services"`
}

type qlogServiceSkipped struct {
	Session string `json:"he_session_id"`
	Reason  string `json:"reason"`
}

type qlogAttemptStarted struct {
	Session   string     `json:"he_session_id"`
	AttemptID string     `json:"attempt_id"`
	Target    qlogTarget `json:"target"`
}

type qlogAttemptOutcome struct {
	Session           string `json:"he_session_id"`
	AttemptID         string `json:"attempt_id"`
	Result            string `json:"result"`
	ErrorCode         string `json:"error_code,omitempty"`
	ConnectDurationMS int64  `json:"connect_duration_ms"`
}

type qlogTimerSet struct {
	Session string `json:"he_session_id"`
	DelayMS int64  `json:"delay_ms"`
	Reason  string `json:"reason"`
}

type qlogSession struct {
	Session string `json:"he_session_id"`
}

type qlogTimerCanceled struct {
	Session string `json:"he_session_id"`
	Reason  string `json:"reason"`
}

type qlogSelected struct {
	Session   string `json:"he_session_id"`
	AttemptID string `json:"attempt_id"`
}

type qlogAborted struct {
	Session string `json:"he_session_id"`
	Reason  string `json:"reason"`
}

type qlogMetrics struct {
	Session               string `json:"he_session_id"`
	Outcome               string `json:"outcome"`
	TotalDurationMS       int64  `json:"total_duration_ms"`
	TTFirstSuccessMS      *int64 `json:"tt_first_success_ms,omitempty"`
	FirstSuccessFamily    string `json:"first_success_family,omitempty"`
	FirstSuccessTransport string `json:"first_success_transport,omitempty"`
	AttemptsTotal         int    `json:"attempts_total"`
	AttemptsSuccess       int    `json:"attempts_success"`
	AttemptsFailure       int    `json:"attempts_failure"`
}

// hev2's own events (namespace hev2, schema QlogHev2Schema).
type qlogDNSCanceled struct {
	Session    string `json:"he_session_id"`
	DNSID      string `json:"dns_id"`
	Hostname   string `json:"hostname"`
	DurationMS int64  `json:"duration_ms"`
}

type qlogNAT64Prefix struct {
	Session      string `json:"he_session_id"`
	Prefix       string `json:"prefix"`
	PrefixLength uint32 `json:"prefix_length"`
	Source       string `json:"source"`
}

type qlogNAT64Discovery struct {
	Session string `json:"he_session_id"`
	Source  string `json:"source"`
}

// qlogHistory is what the network's history decided before the race
// (the draft has no event for it).
type qlogHistory struct {
	Session        string `json:"he_session_id"`
	FirstFamily    string `json:"first_family,omitempty"`
	AttemptDelayMS int64  `json:"attempt_delay_ms"`
	Reason         string `json:"reason,omitempty"`
}

type qlogResolutionDelay struct {
	Session string `json:"he_session_id"`
	DelayMS int64  `json:"delay_ms"`
}

type qlogTimeout struct {
	Session string `json:"he_session_id"`
	Timeout string `json:"timeout"`
}

type qlogCanceled struct {
	Session string `json:"he_session_id"`
	Reason  string `json:"reason"`
}

// qlogWriter turns trace events into qlog records, one at a time.
type qlogWriter struct {
	meta     Meta
	out      []qlogEvent
	lookups  map[race.Family]time.Duration // started, not yet ended
	attempts []qlogOpenAttempt
	timerDue time.Duration // the pending attempt delay's end, -1 if none
	started  int
	failed   int
	won      *qlogOpenAttempt
	wonAt    time.Duration
	finished bool

	// The HTTPS part: the trace (for looking ahead), the service lookups
	// started and not ended, how many HTTPS queries were asked, the
	// usable services, the origin's answered addresses.
	events     []race.TraceEvent
	next       int // index of the event after the one being written
	svcLookups map[string]time.Duration
	httpsAsked int
	svcs       []service
	origin     map[race.Family][]netip.Addr
	// candidates: the service of each service endpoint discovered.
	candidates map[netip.AddrPort]int
}

type qlogOpenAttempt struct {
	id    int
	addr  string
	fam   race.Family
	start time.Duration
	open  bool
}

func dnsID(f race.Family) string { return recordType(f) }

// WriteQlog writes the race as a qlog JSON-SEQ file.
func WriteQlog(w io.Writer, events []race.TraceEvent, meta Meta) error {
	if len(events) == 0 {
		return ErrNoEvents
	}
	q := &qlogWriter{meta: meta, lookups: map[race.Family]time.Duration{}, timerDue: -1,
		events: events, svcLookups: map[string]time.Duration{}, origin: map[race.Family][]netip.Addr{},
		candidates: map[netip.AddrPort]int{}}
	q.configSet(events[0].At)
	for i, ev := range events {
		q.next = i + 1
		q.event(ev)
	}
	bw := bufio.NewWriter(w)
	title := "hev2 race"
	if meta.Host != "" {
		title += " " + meta.Host + " port " + strconv.Itoa(int(meta.Port))
	}
	hdr := qlogHeader{
		FileSchema: qlogFileSchema, SerializationFormat: qlogMediaType, Title: title,
		Trace: qlogTrace{
			Title: title,
			CommonFields: qlogCommonFields{TimeFormat: "relative_to_epoch",
				ReferenceTime: qlogReferenceTime{ClockType: "monotonic", Epoch: "unknown"}},
			VantagePoint: qlogVantagePoint{Name: "hev2", Type: "client"},
			EventSchemas: []string{QlogHEv3Schema, QlogHev2Schema},
		},
	}
	if err := writeRecord(bw, hdr); err != nil {
		return err
	}
	for _, e := range q.out {
		if err := writeRecord(bw, e); err != nil {
			return err
		}
	}
	return bw.Flush()
}

// ErrNoEvents is returned for an empty trace: there is no race to show.
var ErrNoEvents = errors.New("render: no events (was the race recorded?)")

func writeRecord(w *bufio.Writer, v any) error {
	b, err := json.Marshal(v)
	if err != nil {
		return err
	}
	w.WriteByte(recordSep)
	w.Write(b)
	return w.WriteByte('\n')
}

func (q *qlogWriter) emit(at time.Duration, name string, data any) {
	q.out = append(q.out, qlogEvent{Time: msFloat(at), Name: name, Data: data})
}

func (q *qlogWriter) configSet(at time.Duration) {
	p := qlogPolicy{
		MinConnectionAttemptDelayMS: msUint(race.MinConnectionAttemptDelay),
		MaxConnectionAttemptDelayMS: msUint(race.MaxConnectionAttemptDelay),
		SuccessDefinition:           "tcp_connected",
	}
	if d := q.meta.ResolutionDelay; d > 0 {
		v := msUint(d)
		p.ResolutionDelayMS = &v
	}
	if d := q.meta.ConnectionAttemptDelay; d > 0 {
		v := msUint(d)
		p.ConnectionAttemptDelayMS = &v
	}
	if n := q.meta.FirstAddressFamilyCount; n > 0 {
		p.PreferredAddressFamilyCount = &n
	}
	q.emit(at, "hev3:config_set", qlogConfigSet{Session: q.meta.session(), Policy: p, Reason: "app_config"})
}

func (q *qlogWriter) attempt(id int) *qlogOpenAttempt {
	for i := range q.attempts {
		if q.attempts[i].id == id {
			return &q.attempts[i]
		}
	}
	return nil
}

func (q *qlogWriter) event(ev race.TraceEvent) {
	s := q.meta.session()
	switch ev.Kind {
	case race.TraceLookupStarted:
		q.lookups[ev.Family] = ev.At
		q.emit(ev.At, "hev3:dns_query_started", qlogDNSStarted{Session: s, DNSID: dnsID(ev.Family),
			Hostname: q.meta.Host, QTypes: []string{recordType(ev.Family)}})
	case race.TraceLookupAnswered, race.TraceLookupFailed:
		start, ok := q.lookups[ev.Family]
		if !ok {
			return
		}
		delete(q.lookups, ev.Family)
		fin := qlogDNSFinished{Session: s, DNSID: dnsID(ev.Family), Hostname: q.meta.Host,
			Results: []any{}, DurationMS: msUint(ev.At - start)}
		finish(&fin, ev)
		q.emit(ev.At, "hev3:dns_query_finished", fin)
		for _, a := range ev.Addrs {
			q.emit(ev.At, "hev3:candidate_discovered", qlogCandidate{Session: s, Source: "dns",
				Target: qlogTarget{Address: a.String(), Port: q.meta.Port, Family: familyName(race.FamilyOf(a)), Transport: "tcp"}})
		}
		if ev.Kind == race.TraceLookupAnswered {
			q.origin[ev.Family] = ev.Addrs
			// The services whose target is the origin: its addresses
			// on their ports.
			for _, svc := range q.svcs {
				if q.meta.Host != "" && sameHost(svc.target, q.meta.Host) {
					q.serviceCandidates(ev.At, svc, ev.Addrs, "dns")
				}
			}
		}
	case race.TraceLookupCanceled:
		start, ok := q.lookups[ev.Family]
		if !ok {
			return
		}
		delete(q.lookups, ev.Family)
		q.emit(ev.At, "hev2:dns_query_canceled", qlogDNSCanceled{Session: s, DNSID: dnsID(ev.Family),
			Hostname: q.meta.Host, DurationMS: msUint(ev.At - start)})
	case race.TraceServiceLookupStarted, race.TraceServiceLookupAnswered, race.TraceServiceLookupFailed,
		race.TraceServiceLookupCanceled, race.TraceServiceState, race.TraceServiceAdded, race.TraceServiceSkipped,
		race.TraceEndpointRemoved:
		q.serviceEvent(ev)
	case race.TraceResolutionDelay:
		q.emit(ev.At, "hev2:resolution_delay_started", qlogResolutionDelay{Session: s, DelayMS: msUint(ev.Until - ev.At)})
	case race.TraceAttemptDelay:
		q.timerDue = ev.Until
		q.emit(ev.At, "hev3:next_attempt_timer_set", qlogTimerSet{Session: s, DelayMS: msUint(ev.Until - ev.At), Reason: "initial"})
	case race.TraceAttemptStarted:
		if q.attempt(ev.Attempt) != nil {
			return
		}
		if q.timerDue >= 0 && ev.At >= q.timerDue {
			q.emit(ev.At, "hev3:next_attempt_timer_fired", qlogSession{Session: s})
		}
		q.timerDue = -1
		fam := race.FamilyOf(ev.Addr.Addr())
		q.attempts = append(q.attempts, qlogOpenAttempt{id: ev.Attempt, addr: ev.Addr.Addr().String(), fam: fam, start: ev.At, open: true})
		q.started++
		t := qlogTarget{Address: ev.Addr.Addr().String(), Port: ev.Addr.Port(), Family: familyName(fam), Transport: "tcp"}
		if svc := q.service(q.candidates[ev.Addr]); svc != nil {
			svc.fill(&t, ev.Addr.Port())
		}
		q.emit(ev.At, "hev3:attempt_started", qlogAttemptStarted{Session: s, AttemptID: strconv.Itoa(ev.Attempt), Target: t})
	case race.TraceAttemptFailed, race.TraceAttemptWon, race.TraceAttemptClosed:
		a := q.attempt(ev.Attempt)
		if a == nil || !a.open {
			return
		}
		a.open = false
		out := qlogAttemptOutcome{Session: s, AttemptID: strconv.Itoa(a.id), ConnectDurationMS: msUint(ev.At - a.start)}
		switch ev.Kind {
		case race.TraceAttemptWon:
			out.Result = "success"
			q.won, q.wonAt = a, ev.At
		case race.TraceAttemptClosed:
			out.Result = "canceled"
			q.failed++
		default:
			out.Result = "failure"
			var te *race.TimeoutError
			if errors.As(ev.Err, &te) {
				out.Result = "timeout"
			}
			out.ErrorCode = errCode(ev.Err)
			q.failed++
		}
		q.emit(ev.At, "hev3:attempt_outcome", out)
		if ev.Kind == race.TraceAttemptWon {
			q.emit(ev.At, "hev3:connection_selected", qlogSelected{Session: s, AttemptID: out.AttemptID})
		}
	case race.TraceHistory:
		h := qlogHistory{Session: s, AttemptDelayMS: msUint(ev.Until), Reason: ev.Detail}
		if ev.Family != race.FamilyUnspec {
			h.FirstFamily = familyName(ev.Family)
		}
		q.emit(ev.At, "hev2:history_decision", h)
	case race.TraceNAT64Discovery:
		q.emit(ev.At, "hev2:nat64_discovery_started", qlogNAT64Discovery{Session: s, Source: ev.Detail})
	case race.TraceNAT64Prefix:
		source := "rfc7050_discovery"
		if strings.Contains(ev.Detail, "router advertisement") {
			source = "pref64_ra"
		}
		for _, p := range ev.Prefixes {
			q.emit(ev.At, "hev3:nat64_prefix_discovered", qlogNAT64Prefix{Session: s, Prefix: p.Addr().String(),
				PrefixLength: uint32(p.Bits()), Source: source})
		}
	case race.TraceSynthesized:
		q.emit(ev.At, "hev3:candidate_discovered", qlogCandidate{Session: s, Source: "nat64_synthesis",
			Target: qlogTarget{Address: ev.Addr.Addr().String(), Port: ev.Addr.Port(), Family: familyName(race.IPv6), Transport: "tcp"}})
	case race.TraceTimeout:
		q.emit(ev.At, "hev2:timeout", qlogTimeout{Session: s, Timeout: ev.Timeout.String()})
	case race.TraceCanceled:
		reason := "canceled"
		if ev.Err != nil {
			reason = ev.Err.Error()
		}
		q.emit(ev.At, "hev2:canceled", qlogCanceled{Session: s, Reason: reason})
	case race.TraceDone:
		q.done(ev)
	}
}

// finish fills a dns_query_finished's outcome from a lookup's end event:
// its addresses, or its error.
func finish(fin *qlogDNSFinished, ev race.TraceEvent) {
	if ev.Kind == race.TraceLookupAnswered || ev.Kind == race.TraceServiceLookupAnswered {
		fin.AnswerType = "positive"
		for _, a := range ev.Addrs {
			fin.Results = append(fin.Results, qlogDNSAddress{Type: "address", Address: a.String(), Family: familyName(race.FamilyOf(a))})
		}
		return
	}
	fin.AnswerType = "error"
	var re *race.ResolveError
	if errors.As(ev.Err, &re) && (re.Code == race.EAI_NONAME || re.Code == race.EAI_NODATA) {
		fin.AnswerType = "negative"
	}
	fin.ErrorCode = errCode(ev.Err)
	if ev.Err != nil {
		fin.ErrorMessage = ev.Err.Error()
	}
}

// serviceEvent writes an event of the HTTPS part (Happy Eyeballs v3):
// its lookups as the draft's dns_query_started/finished (qtype HTTPS, or
// A/AAAA of a service's target; an HTTPS answer's results are its usable
// ServiceMode records, or the AliasMode record followed, with
// is_alias_follow on the queries of alias targets), its candidates as
// candidate_discovered (source svcb_hint for address hints, dns for a
// target's answer; each with its service's port, ALPN, target name,
// priority and ECH, grouped by service) and candidate_removed
// (svcb_hint_replaced), the query's final state and the records set aside
// in hev2's namespace.
func (q *qlogWriter) serviceEvent(ev race.TraceEvent) {
	s := q.meta.session()
	id := ev.Query.String() + " " + ev.Detail
	host := strings.TrimSuffix(ev.Detail, ".")
	switch ev.Kind {
	case race.TraceServiceLookupStarted:
		if _, ok := q.svcLookups[id]; ok {
			return
		}
		q.svcLookups[id] = ev.At
		q.emit(ev.At, "hev3:dns_query_started", qlogDNSStarted{Session: s, DNSID: id, Hostname: host, QTypes: []string{ev.Query.String()}})
	case race.TraceServiceLookupAnswered, race.TraceServiceLookupFailed:
		start, ok := q.svcLookups[id]
		if !ok {
			return
		}
		delete(q.svcLookups, id)
		fin := qlogDNSFinished{Session: s, DNSID: id, Hostname: host, Results: []any{}, DurationMS: msUint(ev.At - start)}
		finish(&fin, ev)
		if ev.Query == race.QueryHTTPS {
			q.httpsAsked++
			fin.AliasFollow = q.httpsAsked > 1
			if ev.Kind == race.TraceServiceLookupAnswered {
				fin.Results = q.httpsResults(ev)
			}
		}
		q.emit(ev.At, "hev3:dns_query_finished", fin)
		if ev.Kind == race.TraceServiceLookupAnswered && ev.Query != race.QueryHTTPS {
			for _, svc := range q.svcs {
				if sameHost(svc.target, ev.Detail) {
					q.serviceCandidates(ev.At, svc, ev.Addrs, "dns")
				}
			}
		}
	case race.TraceServiceLookupCanceled:
		start, ok := q.svcLookups[id]
		if !ok {
			return
		}
		delete(q.svcLookups, id)
		q.emit(ev.At, "hev2:dns_query_canceled", qlogDNSCanceled{Session: s, DNSID: id, Hostname: host, DurationMS: msUint(ev.At - start)})
	case race.TraceServiceState:
		q.emit(ev.At, "hev2:https_state", qlogHTTPSState{Session: s, State: ev.Detail, Services: ev.Attempt})
	case race.TraceServiceSkipped:
		q.emit(ev.At, "hev2:service_skipped", qlogServiceSkipped{Session: s, Reason: ev.Detail})
	case race.TraceServiceAdded:
		svc := parseService(ev)
		q.svcs = append(q.svcs, svc)
		q.serviceCandidates(ev.At, svc, svc.hints, "svcb_hint")
		if q.meta.Host != "" && sameHost(svc.target, q.meta.Host) {
			// Its target is the origin, whose answers already in serve
			// it at once.
			for _, f := range []race.Family{race.IPv6, race.IPv4} {
				q.serviceCandidates(ev.At, svc, q.origin[f], "dns")
			}
		}
	case race.TraceEndpointRemoved:
		t := qlogTarget{Address: ev.Addr.Addr().String(), Port: ev.Addr.Port(), Family: familyName(race.FamilyOf(ev.Addr.Addr())), Transport: "tcp"}
		if svc := q.service(ev.Attempt); svc != nil {
			svc.fill(&t, ev.Addr.Port())
		}
		q.emit(ev.At, "hev3:candidate_removed", qlogCandidateRemoved{Session: s, Target: t, Reason: "svcb_hint_replaced"})
	}
}

// httpsResults are the results of the HTTPS answer ev: the usable
// ServiceMode records (the service-added events right after it, with their
// hints), or the AliasMode record (the HTTPS query of its target started
// at once).
func (q *qlogWriter) httpsResults(ev race.TraceEvent) []any {
	out := []any{}
	for _, next := range q.events[q.next:] {
		if next.At != ev.At {
			break
		}
		switch next.Kind {
		case race.TraceServiceSkipped, race.TraceServiceState:
			continue
		case race.TraceServiceAdded:
			svc := parseService(next)
			r := qlogDNSService{Type: "service", Mode: "servicemode", TargetName: svc.target, Priority: &svc.priority, ALPN: svc.alpn}
			for _, h := range svc.hints {
				if h.Is4() {
					r.IPv4Hint = append(r.IPv4Hint, h.String())
				} else {
					r.IPv6Hint = append(r.IPv6Hint, h.String())
				}
			}
			out = append(out, r)
			continue
		case race.TraceServiceLookupStarted:
			if next.Query == race.QueryHTTPS && len(out) == 0 {
				out = append(out, qlogDNSService{Type: "service", Mode: "alias", TargetName: next.Detail})
			}
		}
		break
	}
	return out
}

// service is usable service n (1 first), nil if unknown.
func (q *qlogWriter) service(n int) *service {
	for i := range q.svcs {
		if q.svcs[i].index == n {
			return &q.svcs[i]
		}
	}
	return nil
}

// serviceCandidates writes a candidate_discovered for each of svc's
// addrs, on svc's port.
func (q *qlogWriter) serviceCandidates(at time.Duration, svc service, addrs []netip.Addr, source string) {
	for _, a := range addrs {
		t := qlogTarget{Address: a.String(), Family: familyName(race.FamilyOf(a)), Transport: "tcp"}
		svc.fill(&t, q.meta.Port)
		q.candidates[netip.AddrPortFrom(a, t.Port)] = svc.index
		q.emit(at, "hev3:candidate_discovered", qlogCandidate{Session: q.meta.session(), Source: source, Target: t,
			GroupID: "service " + strconv.Itoa(svc.index)})
	}
}

// fill gives a candidate's target its service's port, ALPN set, name,
// priority and ECH.
func (svc *service) fill(t *qlogTarget, originPort uint16) {
	t.Port = svc.port
	if t.Port == 0 {
		t.Port = originPort
	}
	t.ALPN = svc.alpn
	t.ServiceName = strings.TrimSuffix(svc.target, ".")
	prio, ech := svc.priority, svc.ech
	t.ServicePriority, t.ECHOffered = &prio, &ech
}

// done closes the session: the pending timer, attempts the trace left
// open (each started attempt has exactly one outcome), the abort, metrics.
func (q *qlogWriter) done(ev race.TraceEvent) {
	if q.finished {
		return
	}
	q.finished = true
	s := q.meta.session()
	if q.timerDue > ev.At {
		reason := "abort"
		if ev.Err == nil {
			reason = "success"
		}
		q.emit(ev.At, "hev3:next_attempt_timer_canceled", qlogTimerCanceled{Session: s, Reason: reason})
	}
	q.timerDue = -1
	for i := range q.attempts {
		if a := &q.attempts[i]; a.open {
			a.open = false
			q.failed++
			q.emit(ev.At, "hev3:attempt_outcome", qlogAttemptOutcome{Session: s, AttemptID: strconv.Itoa(a.id),
				Result: "canceled", ConnectDurationMS: msUint(ev.At - a.start)})
		}
	}
	m := qlogMetrics{Session: s, Outcome: "success", TotalDurationMS: msUint(ev.At),
		AttemptsTotal: q.started, AttemptsFailure: q.failed}
	if ev.Err != nil || q.won == nil {
		m.Outcome = "aborted"
		reason := "failed"
		if ev.Err != nil {
			reason = ev.Err.Error()
		}
		q.emit(ev.At, "hev3:connection_aborted", qlogAborted{Session: s, Reason: reason})
	} else {
		tt := msUint(q.wonAt)
		m.TTFirstSuccessMS = &tt
		m.FirstSuccessFamily = familyName(q.won.fam)
		m.FirstSuccessTransport = "tcp"
		m.AttemptsSuccess = 1
	}
	q.emit(ev.At, "hev3:metrics", m)
}
