package render

import (
	"net/netip"
	"strconv"
	"strings"
	"time"

	"github.com/hev2/hev2/internal/race"
)

// Meta is what a trace file says besides the events: the race's target and
// the delays it ran with (zero: not known, left out).
type Meta struct {
	Host string
	Port uint16
	// SessionID names the race in qlog's he_session_id ("" means "1").
	SessionID string

	ResolutionDelay         time.Duration
	ConnectionAttemptDelay  time.Duration
	FirstAddressFamilyCount int
}

func (m Meta) session() string {
	if m.SessionID == "" {
		return "1"
	}
	return m.SessionID
}

// Outcomes of a lane.
const (
	outAnswered = "answered" // lookup
	outFailed   = "failed"   // lookup or attempt
	outCanceled = "canceled" // lookup no longer needed
	outPending  = "pending"  // no end in the trace
	outWon      = "won"      // attempt
	outClosed   = "closed"   // attempt closed as a loser (or at the race's end)
)

// lookupLane is one family's lookup.
type lookupLane struct {
	family     race.Family
	start, end time.Duration
	outcome    string
	addrs      []netip.Addr
	err        error
}

// attemptLane is one connection attempt.
type attemptLane struct {
	id         int
	addr       netip.AddrPort
	start, end time.Duration
	outcome    string
	err        error
}

// timerSpan is a delay from its start to the moment it stopped mattering:
// when it ran out (until), or earlier when what it waited for happened.
type timerSpan struct {
	start, until, end time.Duration
}

// timeoutMark is one of the caller's timeouts that fired.
type timeoutMark struct {
	at   time.Duration
	kind race.TimeoutKind
}

// model is a race rebuilt from its trace: what the three writers draw.
type model struct {
	lookups  []*lookupLane // in the order they started (AAAA first)
	attempts []*attemptLane
	rd, ad   []timerSpan // Resolution Delay, Connection Attempt Delay
	timeouts []timeoutMark
	canceled bool
	cancelAt time.Duration

	done    bool
	doneAt  time.Duration
	doneErr error
	winner  int // attempt id, -1 if none
	end     time.Duration

	// The HTTPS part: its lookups in the order they started, its state
	// ("" until final), its services.
	services     []*serviceLane
	httpsState   string
	httpsStateAt time.Duration
	svcs         []service
}

// build rebuilds the race from events. It tolerates any sequence (a
// partial trace, events of unknown kinds): what cannot be placed is left
// out, and lanes with no end run to the last event's time.
func build(events []race.TraceEvent) *model {
	m := &model{winner: -1}
	lookup := func(f race.Family) *lookupLane {
		for _, l := range m.lookups {
			if l.family == f {
				return l
			}
		}
		return nil
	}
	serviceLookup := func(q race.QueryKind, name string) *serviceLane {
		for _, l := range m.services {
			if l.query == q && l.name == name {
				return l
			}
		}
		return nil
	}
	attempt := func(id int) *attemptLane {
		for _, a := range m.attempts {
			if a.id == id {
				return a
			}
		}
		return nil
	}
	for _, ev := range events {
		if ev.At > m.end {
			m.end = ev.At
		}
		switch ev.Kind {
		case race.TraceLookupStarted:
			if lookup(ev.Family) == nil {
				m.lookups = append(m.lookups, &lookupLane{family: ev.Family, start: ev.At, outcome: outPending})
			}
		case race.TraceLookupAnswered, race.TraceLookupFailed, race.TraceLookupCanceled:
			l := lookup(ev.Family)
			if l == nil || l.outcome != outPending {
				continue
			}
			l.end, l.err = ev.At, ev.Err
			switch ev.Kind {
			case race.TraceLookupAnswered:
				l.outcome, l.addrs = outAnswered, ev.Addrs
			case race.TraceLookupFailed:
				l.outcome = outFailed
			default:
				l.outcome = outCanceled
			}
		case race.TraceServiceLookupStarted:
			if serviceLookup(ev.Query, ev.Detail) == nil {
				m.services = append(m.services, &serviceLane{query: ev.Query, name: ev.Detail, start: ev.At, outcome: outPending})
			}
		case race.TraceServiceLookupAnswered, race.TraceServiceLookupFailed, race.TraceServiceLookupCanceled:
			l := serviceLookup(ev.Query, ev.Detail)
			if l == nil || l.outcome != outPending {
				continue
			}
			l.end, l.err = ev.At, ev.Err
			switch ev.Kind {
			case race.TraceServiceLookupAnswered:
				l.outcome, l.addrs, l.records = outAnswered, ev.Addrs, ev.Attempt
			case race.TraceServiceLookupFailed:
				l.outcome = outFailed
			default:
				l.outcome = outCanceled
			}
		case race.TraceServiceState:
			m.httpsState, m.httpsStateAt = ev.Detail, ev.At
		case race.TraceServiceAdded:
			m.svcs = append(m.svcs, parseService(ev))
		case race.TraceResolutionDelay:
			m.rd = append(m.rd, timerSpan{start: ev.At, until: ev.Until, end: -1})
		case race.TraceAttemptDelay:
			m.ad = append(m.ad, timerSpan{start: ev.At, until: ev.Until, end: -1})
		case race.TraceAttemptStarted:
			if attempt(ev.Attempt) == nil {
				m.attempts = append(m.attempts, &attemptLane{id: ev.Attempt, addr: ev.Addr, start: ev.At, outcome: outPending})
			}
		case race.TraceAttemptFailed, race.TraceAttemptWon, race.TraceAttemptClosed:
			a := attempt(ev.Attempt)
			if a == nil || a.outcome != outPending {
				continue
			}
			a.end, a.err = ev.At, ev.Err
			switch ev.Kind {
			case race.TraceAttemptFailed:
				a.outcome = outFailed
			case race.TraceAttemptWon:
				a.outcome = outWon
				m.winner = a.id
			default:
				a.outcome = outClosed
			}
		case race.TraceTimeout:
			m.timeouts = append(m.timeouts, timeoutMark{at: ev.At, kind: ev.Timeout})
		case race.TraceCanceled:
			m.canceled, m.cancelAt = true, ev.At
		case race.TraceDone:
			if !m.done {
				m.done, m.doneAt, m.doneErr = true, ev.At, ev.Err
			}
		}
	}
	m.cutTimers()
	return m
}

// cutTimers ends each delay where it stopped mattering: the Resolution
// Delay at its end, the first attempt or AAAA's answer; an attempt delay
// at its end, the next attempt or the next attempt delay; both at the
// race's end.
func (m *model) cutTimers() {
	stop := func(sp *timerSpan, at time.Duration) {
		if at >= sp.start && (sp.end < 0 || at < sp.end) {
			sp.end = at
		}
	}
	for i := range m.rd {
		sp := &m.rd[i]
		stop(sp, sp.until)
		for _, a := range m.attempts {
			stop(sp, a.start)
		}
		for _, l := range m.lookups {
			if l.family == race.IPv6 && l.outcome != outPending {
				stop(sp, l.end)
			}
		}
		m.stopAtEnd(sp)
	}
	for i := range m.ad {
		sp := &m.ad[i]
		stop(sp, sp.until)
		for _, a := range m.attempts {
			if a.start > sp.start {
				stop(sp, a.start)
			}
		}
		if i+1 < len(m.ad) {
			stop(sp, m.ad[i+1].start)
		}
		m.stopAtEnd(sp)
	}
}

func (m *model) stopAtEnd(sp *timerSpan) {
	end := m.end
	if m.done {
		end = m.doneAt
	}
	if end >= sp.start && end < sp.end {
		sp.end = end
	}
}

// laneEnd is when a lane stops: its own end, or the race's for one that
// has none in the trace.
func (m *model) laneEnd(outcome string, end time.Duration) time.Duration {
	if outcome == outPending {
		if m.done {
			return m.doneAt
		}
		return m.end
	}
	return end
}

// serviceLane is one lookup of the HTTPS part (Happy Eyeballs v3): the
// HTTPS query of the query name or of an alias target, or a service
// target's A/AAAA.
type serviceLane struct {
	query      race.QueryKind
	name       string
	start, end time.Duration
	outcome    string
	addrs      []netip.Addr
	records    int // ServiceMode records of an HTTPS answer
	err        error
}

// service is one usable service, as the service-added event tells it.
type service struct {
	index    int // 1 is tried first
	priority int
	target   string
	port     uint16 // 0: the origin's
	alpn     []string
	ech      bool
	hints    []netip.Addr
}

// parseService reads a service-added event: its Detail is
// "priority P target T [port N] alpn A,B [ech]" (race.describeService),
// its Addrs the hints.
func parseService(ev race.TraceEvent) service {
	s := service{index: ev.Attempt, hints: ev.Addrs}
	f := strings.Fields(ev.Detail)
	for i := 0; i < len(f); i++ {
		next := func() string {
			if i+1 < len(f) {
				i++
				return f[i]
			}
			return ""
		}
		switch f[i] {
		case "priority":
			s.priority, _ = strconv.Atoi(next())
		case "target":
			s.target = next()
		case "port":
			p, _ := strconv.ParseUint(next(), 10, 16)
			s.port = uint16(p)
		case "alpn":
			if v := next(); v != "" {
				s.alpn = strings.Split(v, ",")
			}
		case "ech":
			s.ech = true
		}
	}
	return s
}

// sameHost reports whether two DNS names are the same (case, final dot).
func sameHost(a, b string) bool {
	return strings.EqualFold(strings.TrimSuffix(a, "."), strings.TrimSuffix(b, "."))
}

// describe is a service in a few words: "priority 1 svc.example. port 8443
// alpn h2,http/1.1 ech hints 2001:db8::1".
func (s service) describe() string {
	var b strings.Builder
	b.WriteString("priority " + strconv.Itoa(s.priority) + " " + s.target)
	if s.port != 0 {
		b.WriteString(" port " + strconv.Itoa(int(s.port)))
	}
	if len(s.alpn) > 0 {
		b.WriteString(" alpn " + strings.Join(s.alpn, ","))
	}
	if s.ech {
		b.WriteString(" ech")
	}
	if len(s.hints) > 0 {
		b.WriteString(" hints")
		for _, h := range s.hints {
			b.WriteString(" " + h.String())
		}
	}
	return b.String()
}
