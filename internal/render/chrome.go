package render

import (
	"bufio"
	"encoding/json"
	"io"
	"sort"
	"strconv"
	"strings"
	"time"

	"github.com/hev2/hev2/internal/race"
)

// The Chrome trace-event format (JSON object form): one process for the
// race, one thread (track) per lookup, per delay and per attempt, each a
// matched pair of "B"/"E" events; the caller's timeouts, a cancel and the
// end of the race are instant events on the process. Times are
// microseconds since the race started.

type chromeFile struct {
	DisplayTimeUnit string        `json:"displayTimeUnit"`
	TraceEvents     []chromeEvent `json:"traceEvents"`
}

type chromeEvent struct {
	Name  string         `json:"name"`
	Phase string         `json:"ph"`
	TS    int64          `json:"ts"`
	PID   int            `json:"pid"`
	TID   int            `json:"tid"`
	Scope string         `json:"s,omitempty"`
	Args  map[string]any `json:"args,omitempty"` // encoding/json sorts map keys
}

// Track ids: lookups first, then the delays, then attempts.
const (
	chromePID         = 1
	tidLookups        = 1       // + index in start order
	tidResolution     = 10      // the Resolution Delay
	tidAttemptDelay   = 11      // the Connection Attempt Delay
	tidAttemptsOffset = 100     // + attempt id
	tidServices       = 1 << 20 // + index: the HTTPS part's lookups
)

func us(d time.Duration) int64 { return int64(d / time.Microsecond) }

// WriteChromeTrace writes the race as a Chrome trace-event JSON file.
func WriteChromeTrace(w io.Writer, events []race.TraceEvent, meta Meta) error {
	if len(events) == 0 {
		return ErrNoEvents
	}
	m := build(events)
	var meta0, spans []chromeEvent
	name := "hev2 race"
	if meta.Host != "" {
		name += " " + meta.Host + " port " + strconv.Itoa(int(meta.Port))
	}
	meta0 = append(meta0, chromeEvent{Name: "process_name", Phase: "M", PID: chromePID, Args: map[string]any{"name": name}})
	track := func(tid int, label string, sort int) {
		meta0 = append(meta0,
			chromeEvent{Name: "thread_name", Phase: "M", PID: chromePID, TID: tid, Args: map[string]any{"name": label}},
			chromeEvent{Name: "thread_sort_index", Phase: "M", PID: chromePID, TID: tid, Args: map[string]any{"sort_index": sort}})
	}
	span := func(tid int, name string, start, end time.Duration, begin, finish map[string]any) {
		spans = append(spans,
			chromeEvent{Name: name, Phase: "B", TS: us(start), PID: chromePID, TID: tid, Args: begin},
			chromeEvent{Name: name, Phase: "E", TS: us(end), PID: chromePID, TID: tid, Args: finish})
	}
	order := 0
	for i, l := range m.lookups {
		tid := tidLookups + i
		track(tid, recordType(l.family)+" lookup", order)
		order++
		end := map[string]any{"outcome": l.outcome}
		if len(l.addrs) > 0 {
			addrs := make([]string, len(l.addrs))
			for k, a := range l.addrs {
				addrs[k] = a.String()
			}
			end["addresses"] = addrs
		}
		if l.err != nil {
			end["error"] = errCode(l.err)
		}
		span(tid, "lookup", l.start, m.laneEnd(l.outcome, l.end), map[string]any{"record": recordType(l.family)}, end)
	}
	for i, l := range m.services {
		// The HTTPS part's lookups (Happy Eyeballs v3), after the
		// address lookups: span "service-lookup".
		tid := tidServices + i
		track(tid, l.query.String()+" "+strings.TrimSuffix(l.name, "."), order)
		order++
		end := map[string]any{"outcome": l.outcome}
		if len(l.addrs) > 0 {
			addrs := make([]string, len(l.addrs))
			for k, a := range l.addrs {
				addrs[k] = a.String()
			}
			end["addresses"] = addrs
		}
		if l.query == race.QueryHTTPS && l.outcome == outAnswered {
			end["service_records"] = l.records
		}
		if l.err != nil {
			end["error"] = errCode(l.err)
		}
		span(tid, "service-lookup", l.start, m.laneEnd(l.outcome, l.end), map[string]any{"record": l.query.String(), "name": l.name}, end)
	}
	if m.httpsState != "" {
		spans = append(spans, chromeEvent{Name: "https-state", Phase: "i", Scope: "p", TS: us(m.httpsStateAt), PID: chromePID,
			Args: map[string]any{"state": m.httpsState, "services": len(m.svcs)}})
	}
	if len(m.rd) > 0 {
		track(tidResolution, "Resolution Delay", order)
		order++
		for _, sp := range m.rd {
			span(tidResolution, "resolution-delay", sp.start, sp.end, map[string]any{"until_ms": msFloat(sp.until)}, nil)
		}
	}
	if len(m.ad) > 0 {
		track(tidAttemptDelay, "Connection Attempt Delay", order)
		order++
		for _, sp := range m.ad {
			span(tidAttemptDelay, "attempt-delay", sp.start, sp.end, map[string]any{"until_ms": msFloat(sp.until)}, nil)
		}
	}
	for _, a := range m.attempts {
		tid := tidAttemptsOffset + a.id
		track(tid, "attempt #"+strconv.Itoa(a.id)+" "+a.addr.String(), order)
		order++
		end := map[string]any{"outcome": a.outcome}
		if a.err != nil {
			end["error"] = errCode(a.err)
		}
		span(tid, "attempt", a.start, m.laneEnd(a.outcome, a.end),
			map[string]any{"address": a.addr.Addr().String(), "port": a.addr.Port(), "family": familyName(race.FamilyOf(a.addr.Addr()))}, end)
	}
	for _, t := range m.timeouts {
		spans = append(spans, chromeEvent{Name: "timeout", Phase: "i", Scope: "p", TS: us(t.at), PID: chromePID,
			Args: map[string]any{"timeout": t.kind.String()}})
	}
	if m.canceled {
		spans = append(spans, chromeEvent{Name: "canceled", Phase: "i", Scope: "p", TS: us(m.cancelAt), PID: chromePID})
	}
	if m.done {
		args := map[string]any{"outcome": "connected"}
		if m.doneErr != nil || m.winner < 0 {
			args["outcome"] = "failed"
			if m.doneErr != nil {
				args["error"] = m.doneErr.Error()
			}
		} else {
			args["winner"] = m.winner
		}
		spans = append(spans, chromeEvent{Name: "done", Phase: "i", Scope: "p", TS: us(m.doneAt), PID: chromePID, Args: args})
	}
	// Viewers read events in time order; a stable sort keeps each track's
	// B before its E, and one delay's E before the next one's B.
	sort.SliceStable(spans, func(i, j int) bool { return spans[i].TS < spans[j].TS })
	bw := bufio.NewWriter(w)
	enc := json.NewEncoder(bw)
	if err := enc.Encode(chromeFile{DisplayTimeUnit: "ms", TraceEvents: append(meta0, spans...)}); err != nil {
		return err
	}
	return bw.Flush()
}
