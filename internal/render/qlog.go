package render

import (
	"bufio"
	"encoding/json"
	"errors"
	"io"
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

// HEAttemptTarget (only the fields hev2 knows).
type qlogTarget struct {
	Address   string `json:"address"`
	Port      uint16 `json:"port"`
	Family    string `json:"family"`
	Transport string `json:"transport"`
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

type qlogDNSFinished struct {
	Session      string           `json:"he_session_id"`
	DNSID        string           `json:"dns_id"`
	Hostname     string           `json:"hostname"`
	Results      []qlogDNSAddress `json:"results"`
	AnswerType   string           `json:"answer_type"`
	ErrorCode    string           `json:"error_code,omitempty"`
	ErrorMessage string           `json:"error_message,omitempty"`
	DurationMS   int64            `json:"duration_ms"`
}

type qlogCandidate struct {
	Session string     `json:"he_session_id"`
	Source  string     `json:"source"`
	Target  qlogTarget `json:"target"`
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
	q := &qlogWriter{meta: meta, lookups: map[race.Family]time.Duration{}, timerDue: -1}
	q.configSet(events[0].At)
	for _, ev := range events {
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
			Results: []qlogDNSAddress{}, DurationMS: msUint(ev.At - start)}
		if ev.Kind == race.TraceLookupAnswered {
			fin.AnswerType = "positive"
			for _, a := range ev.Addrs {
				fin.Results = append(fin.Results, qlogDNSAddress{Type: "address", Address: a.String(), Family: familyName(race.FamilyOf(a))})
			}
		} else {
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
		q.emit(ev.At, "hev3:dns_query_finished", fin)
		for _, a := range ev.Addrs {
			q.emit(ev.At, "hev3:candidate_discovered", qlogCandidate{Session: s, Source: "dns",
				Target: qlogTarget{Address: a.String(), Port: q.meta.Port, Family: familyName(race.FamilyOf(a)), Transport: "tcp"}})
		}
	case race.TraceLookupCanceled:
		start, ok := q.lookups[ev.Family]
		if !ok {
			return
		}
		delete(q.lookups, ev.Family)
		q.emit(ev.At, "hev2:dns_query_canceled", qlogDNSCanceled{Session: s, DNSID: dnsID(ev.Family),
			Hostname: q.meta.Host, DurationMS: msUint(ev.At - start)})
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
		q.emit(ev.At, "hev3:attempt_started", qlogAttemptStarted{Session: s, AttemptID: strconv.Itoa(ev.Attempt),
			Target: qlogTarget{Address: ev.Addr.Addr().String(), Port: ev.Addr.Port(), Family: familyName(fam), Transport: "tcp"}})
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
