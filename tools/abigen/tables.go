package main

import (
	"fmt"
	"regexp"
	"sort"
	"strings"
)

// A name table maps the values of one family of constants to names: the
// status codes to their C names, event kinds to hev2_event_name's text,
// timeout kinds to the option that fired. A constant appended to a family
// in the header joins its table with no change here.
type table struct {
	ident string         // STATUS_NAMES
	doc   string         // one line for the generated files
	match *regexp.Regexp // the family; group 1 is the suffix
	name  func(suffix, full string) string
	keep  func(v int64) bool // nil: every value
}

var tables = []table{
	{"STATUS_NAMES", "status code -> its C name (HEV2_OK, HEV2_E*)",
		regexp.MustCompile(`^HEV2_(OK|E[A-Z0-9]+)$`),
		func(_, full string) string { return full },
		// HEV2_ERRMSGLEN is no status: statuses are 0 and negative.
		func(v int64) bool { return v <= 0 }},
	{"EVENT_NAMES", "event kind (HEV2_EV_*) -> hev2_event_name's text",
		regexp.MustCompile(`^HEV2_EV_([A-Z0-9_]+)$`),
		func(s, _ string) string { return strings.ReplaceAll(strings.ToLower(s), "_", "-") }, nil},
	{"TIMEOUT_NAMES", "timeout kind (HEV2_TIMEOUT_*) -> the option that fired (\"none\" for none)",
		regexp.MustCompile(`^HEV2_TIMEOUT_([A-Z0-9_]+)$`),
		func(s, _ string) string {
			if s == "NONE" {
				return "none"
			}
			return strings.ToLower(s) + "_timeout"
		}, nil},
	{"LOOKUP_STATE_NAMES", "lookup state (HEV2_LOOKUP_*) -> name",
		regexp.MustCompile(`^HEV2_LOOKUP_([A-Z0-9_]+)$`),
		func(s, _ string) string { return strings.ToLower(s) }, nil},
	{"REPORT_REASON_NAMES", "why the winner's family won (HEV2_REPORT_REASON_*) -> core's name",
		regexp.MustCompile(`^HEV2_REPORT_REASON_([A-Z0-9_]+)$`), dashed, nil},
	{"REPORT_LOOKUP_NAMES", "how a lookup ended, in the report (HEV2_REPORT_LOOKUP_*) -> core's name",
		regexp.MustCompile(`^HEV2_REPORT_LOOKUP_([A-Z0-9_]+)$`), dashed, nil},
	{"REPORT_ATTEMPT_NAMES", "how an attempt ended, in the report (HEV2_REPORT_ATTEMPT_*) -> core's name",
		regexp.MustCompile(`^HEV2_REPORT_ATTEMPT_([A-Z0-9_]+)$`), dashed, nil},
	{"HTTPS_STATE_NAMES", "what the HTTPS query gave (HEV2_HTTPS_*) -> hev2-connect's JSON name",
		regexp.MustCompile(`^HEV2_HTTPS_([A-Z0-9_]+)$`), dashed, nil},
	{"REPORT_SERVICE_LOOKUP_NAMES", "how a lookup of the HTTPS part ended (HEV2_REPORT_SERVICE_LOOKUP_*) -> core's name",
		regexp.MustCompile(`^HEV2_REPORT_SERVICE_LOOKUP_([A-Z0-9_]+)$`), dashed, nil},
	{"REPORT_QUERY_NAMES", "record type of a lookup of the HTTPS part (HEV2_REPORT_QUERY_*) -> its DNS name",
		regexp.MustCompile(`^HEV2_REPORT_QUERY_([A-Z0-9_]+)$`),
		func(s, _ string) string { return s }, nil},
	{"ORIGIN_NAMES", "where an attempt's endpoint came from (HEV2_ORIGIN_*) -> core's name",
		regexp.MustCompile(`^HEV2_ORIGIN_([A-Z0-9_]+)$`), dashed, nil},
	{"RESOLVER_NAMES", "resolver (HEV2_RESOLVER_*) -> name",
		regexp.MustCompile(`^HEV2_RESOLVER_([A-Z0-9_]+)$`),
		func(s, _ string) string { return strings.ToLower(s) }, nil},
}

// dashed is a suffix as core names it: lower case, words joined by '-'.
func dashed(s, _ string) string { return strings.ReplaceAll(strings.ToLower(s), "_", "-") }

type entry struct {
	value int64
	name  string
}

// build fills every table from the measured constants, in value order.
func buildTables(h *header, m *measured) (map[string][]entry, error) {
	out := map[string][]entry{}
	for _, t := range tables {
		byValue := map[int64]string{}
		var es []entry
		for _, c := range h.consts {
			sm := t.match.FindStringSubmatch(c)
			if sm == nil {
				continue
			}
			v := m.consts[c]
			if v.isStr {
				return nil, fmt.Errorf("%s: %s is not an integer", t.ident, c)
			}
			if t.keep != nil && !t.keep(v.i) {
				continue
			}
			name := t.name(sm[1], c)
			if prev, dup := byValue[v.i]; dup {
				return nil, fmt.Errorf("%s: %s and %s have the same value %d", t.ident, prev, name, v.i)
			}
			byValue[v.i] = name
			es = append(es, entry{v.i, name})
		}
		if len(es) == 0 {
			return nil, fmt.Errorf("%s: no constant of its family in the header", t.ident)
		}
		sort.SliceStable(es, func(i, j int) bool { return abs(es[i].value) < abs(es[j].value) })
		out[t.ident] = es
	}
	// The event names must be the library's own (capi/strerror.c).
	if len(m.eventNames) > 0 {
		for _, e := range out["EVENT_NAMES"] {
			if got := m.eventNames[e.value]; got != e.name {
				return nil, fmt.Errorf("hev2_event_name(%d) is %q in capi/strerror.c, the header's name says %q", e.value, got, e.name)
			}
		}
	}
	return out, nil
}

func abs(v int64) int64 {
	if v < 0 {
		return -v
	}
	return v
}
