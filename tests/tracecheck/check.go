// Package tracecheck checks hev2's trace files the way a reader of them
// would: a qlog file against the Happy Eyeballs qlog draft's schema
// (hev3-00.schema.json, translated from the draft's CDDL) and its
// conformance rule (every started attempt has exactly one outcome), a
// Chrome trace for matched begin/end pairs on every track, an SVG for being
// a well-formed, self-contained picture with the lanes of the race. The
// render package's tests and the scenario suite (hev2-testbed suite
// --trace-files) both use it.
package tracecheck

import (
	"bytes"
	"encoding/json"
	"encoding/xml"
	"errors"
	"fmt"
	"io"
	"sort"
	"strings"
)

// Qlog is what a valid qlog file held.
type Qlog struct {
	Names    []string       // every event name, in order
	Attempts int            // attempts started
	Outcomes map[string]int // attempt_outcome results by kind
	// The HTTPS part (Happy Eyeballs v3): the dns_query_started events
	// that ask HTTPS, the candidates discovered by source ("dns",
	// "svcb_hint", "nat64_synthesis"), the candidates removed.
	HTTPSQueries int
	Candidates   map[string]int
	Removed      int
}

// CheckQlog validates a JSON-SEQ qlog file: RFC 7464 framing, the header
// and every record against the schema, and the draft's conformance rules
// (each attempt_started has exactly one attempt_outcome; a
// connection_selected names an attempt whose outcome is success; one
// metrics event).
func CheckQlog(data []byte) (*Qlog, error) {
	s, err := HEv3Schema()
	if err != nil {
		return nil, err
	}
	if len(data) == 0 || data[0] != 0x1e {
		return nil, errors.New("qlog: the file does not start with a record separator (RFC 7464)")
	}
	records := bytes.Split(data[1:], []byte{0x1e})
	q := &Qlog{Outcomes: map[string]int{}, Candidates: map[string]int{}}
	started := map[string]bool{}
	queries := map[string]bool{} // dns_id of every query started
	outcome := map[string]string{}
	var selected []string
	metrics := 0
	for i, rec := range records {
		if !bytes.HasSuffix(rec, []byte("\n")) {
			return nil, fmt.Errorf("qlog record %d does not end with a line feed (RFC 7464)", i)
		}
		var v any
		if err := json.Unmarshal(rec, &v); err != nil {
			return nil, fmt.Errorf("qlog record %d: %w", i, err)
		}
		def := "Record"
		if i == 0 {
			def = "QlogFileSeq"
		}
		if err := s.Validate(def, v); err != nil {
			return nil, fmt.Errorf("qlog record %d (%s): %w", i, def, err)
		}
		if i == 0 {
			continue
		}
		ev := v.(map[string]any)
		name := ev["name"].(string)
		data := ev["data"].(map[string]any)
		q.Names = append(q.Names, name)
		id, _ := data["attempt_id"].(string)
		switch name {
		case "hev3:attempt_started":
			if started[id] {
				return nil, fmt.Errorf("qlog: attempt %q started twice", id)
			}
			started[id] = true
			q.Attempts++
		case "hev3:attempt_outcome":
			if !started[id] {
				return nil, fmt.Errorf("qlog: outcome of attempt %q, which never started", id)
			}
			if prev, dup := outcome[id]; dup {
				return nil, fmt.Errorf("qlog: attempt %q has two outcomes (%s, then %v)", id, prev, data["result"])
			}
			outcome[id] = data["result"].(string)
			q.Outcomes[outcome[id]]++
		case "hev3:connection_selected":
			selected = append(selected, id)
		case "hev3:dns_query_started":
			dnsID, _ := data["dns_id"].(string)
			queries[dnsID] = true
			if qt, _ := data["qtypes"].([]any); len(qt) > 0 {
				for _, t := range qt {
					if t == "HTTPS" {
						q.HTTPSQueries++
					}
				}
			}
		case "hev3:dns_query_finished":
			if dnsID, _ := data["dns_id"].(string); !queries[dnsID] {
				return nil, fmt.Errorf("qlog: dns_query_finished of %q, which never started", dnsID)
			}
		case "hev3:candidate_discovered":
			src, _ := data["source"].(string)
			q.Candidates[src]++
		case "hev3:candidate_removed":
			q.Removed++
		case "hev3:metrics":
			metrics++
		}
	}
	for id := range started {
		if _, ok := outcome[id]; !ok {
			return nil, fmt.Errorf("qlog: attempt %q started and has no outcome", id)
		}
	}
	for _, id := range selected {
		if outcome[id] != "success" {
			return nil, fmt.Errorf("qlog: connection_selected names attempt %q, whose outcome is %q", id, outcome[id])
		}
	}
	if metrics != 1 {
		return nil, fmt.Errorf("qlog: %d metrics events, want 1", metrics)
	}
	return q, nil
}

// Chrome is what a valid Chrome trace held.
type Chrome struct {
	Names  []string       // every event name, in order
	Tracks map[int]string // thread names by tid
	Spans  map[string]int // complete B/E pairs by name
}

type chromeEvent struct {
	Name  string         `json:"name"`
	Phase string         `json:"ph"`
	TS    *float64       `json:"ts"`
	PID   *int           `json:"pid"`
	TID   *int           `json:"tid"`
	Args  map[string]any `json:"args"`
	Scope string         `json:"s"`
}

// CheckChrome checks a trace-event JSON file: the object form with a
// traceEvents array, known phases, times that never go back on a track,
// and every "B" closed by an "E" of the same name on the same track.
func CheckChrome(data []byte) (*Chrome, error) {
	var f struct {
		TraceEvents []chromeEvent `json:"traceEvents"`
	}
	if err := json.Unmarshal(data, &f); err != nil {
		return nil, fmt.Errorf("chrome trace: %w", err)
	}
	if len(f.TraceEvents) == 0 {
		return nil, errors.New("chrome trace: no traceEvents")
	}
	c := &Chrome{Tracks: map[int]string{}, Spans: map[string]int{}}
	type key struct{ pid, tid int }
	open := map[key][]string{}
	last := map[key]float64{}
	for i, e := range f.TraceEvents {
		if e.Name == "" || e.PID == nil {
			return nil, fmt.Errorf("chrome trace: event %d has no name or pid", i)
		}
		c.Names = append(c.Names, e.Name)
		tid := 0
		if e.TID != nil {
			tid = *e.TID
		}
		k := key{*e.PID, tid}
		switch e.Phase {
		case "M":
			if e.Name == "thread_name" {
				n, _ := e.Args["name"].(string)
				c.Tracks[tid] = n
			}
			continue
		case "B", "E", "i", "I":
		default:
			return nil, fmt.Errorf("chrome trace: event %d (%s): phase %q", i, e.Name, e.Phase)
		}
		if e.TS == nil {
			return nil, fmt.Errorf("chrome trace: event %d (%s) has no ts", i, e.Name)
		}
		if *e.TS < last[k] {
			return nil, fmt.Errorf("chrome trace: event %d (%s) goes back in time on track %d", i, e.Name, tid)
		}
		last[k] = *e.TS
		switch e.Phase {
		case "B":
			open[k] = append(open[k], e.Name)
		case "E":
			stack := open[k]
			if len(stack) == 0 || stack[len(stack)-1] != e.Name {
				return nil, fmt.Errorf("chrome trace: event %d: E %q on track %d matches no open B (open: %v)", i, e.Name, tid, stack)
			}
			open[k] = stack[:len(stack)-1]
			c.Spans[e.Name]++
		}
	}
	keys := make([]key, 0, len(open))
	for k := range open {
		keys = append(keys, k)
	}
	sort.Slice(keys, func(i, j int) bool { return keys[i].tid < keys[j].tid })
	for _, k := range keys {
		if len(open[k]) > 0 {
			return nil, fmt.Errorf("chrome trace: track %d ends with unclosed %v", k.tid, open[k])
		}
	}
	return c, nil
}

// SVG is what a valid picture held.
type SVG struct {
	Lanes []Lane
}

// Lane is one row of the waterfall, from its data-* attributes.
type Lane struct {
	Kind, Family, Outcome, Timer, Attempt string
	// Query is a service lookup's record type (HTTPS, A, AAAA).
	Query string
}

// CheckSVG checks a waterfall picture: well-formed XML whose root is an
// svg element, self-contained (no script, no foreignObject, no reference
// to anything outside the file, no external style), with its lanes.
func CheckSVG(data []byte) (*SVG, error) {
	dec := xml.NewDecoder(bytes.NewReader(data))
	out := &SVG{}
	depth := 0
	for {
		tok, err := dec.Token()
		if err == io.EOF {
			break
		}
		if err != nil {
			return nil, fmt.Errorf("svg: %w", err)
		}
		se, ok := tok.(xml.StartElement)
		if !ok {
			if _, end := tok.(xml.EndElement); end {
				depth--
			}
			continue
		}
		if depth == 0 && (se.Name.Local != "svg" || se.Name.Space != "http://www.w3.org/2000/svg") {
			return nil, fmt.Errorf("svg: root element is %v, want svg in the SVG namespace", se.Name)
		}
		depth++
		switch se.Name.Local {
		case "script", "foreignObject", "image", "use", "a", "style", "link":
			return nil, fmt.Errorf("svg: <%s> makes the picture depend on more than itself", se.Name.Local)
		}
		var lane Lane
		isLane := false
		for _, a := range se.Attr {
			if a.Name.Local == "href" || strings.HasPrefix(a.Name.Local, "on") {
				return nil, fmt.Errorf("svg: <%s %s=...>: no links or handlers in a self-contained picture", se.Name.Local, a.Name.Local)
			}
			if strings.Contains(a.Value, "url(") {
				return nil, fmt.Errorf("svg: <%s %s=%q> refers to something else", se.Name.Local, a.Name.Local, a.Value)
			}
			switch a.Name.Local {
			case "class":
				isLane = se.Name.Local == "g" && a.Value == "lane"
			case "data-kind":
				lane.Kind = a.Value
			case "data-family":
				lane.Family = a.Value
			case "data-outcome":
				lane.Outcome = a.Value
			case "data-timer":
				lane.Timer = a.Value
			case "data-attempt":
				lane.Attempt = a.Value
			case "data-query":
				lane.Query = a.Value
			}
		}
		if isLane {
			out.Lanes = append(out.Lanes, lane)
		}
	}
	if len(out.Lanes) == 0 {
		return nil, errors.New("svg: no lanes")
	}
	return out, nil
}
