package render_test

import (
	"bytes"
	"errors"
	"io"
	"os"
	"regexp"
	"strings"
	"testing"

	"github.com/hev2/hev2/internal/race"
	"github.com/hev2/hev2/internal/render"
	"github.com/hev2/hev2/tests/racescript"
	"github.com/hev2/hev2/tests/tracecheck"
)

type writer func(io.Writer, []race.TraceEvent, render.Meta) error

var formats = []struct {
	name  string
	write writer
}{{"svg", render.WriteSVG}, {"qlog", render.WriteQlog}, {"chrome", render.WriteChromeTrace}}

func output(t *testing.T, w writer, s racescript.Script) []byte {
	t.Helper()
	events, cfg := racescript.Run(s)
	var b bytes.Buffer
	if err := w(&b, events, racescript.Meta(cfg)); err != nil {
		t.Fatalf("%s: %v", s.Name, err)
	}
	return b.Bytes()
}

// Under the fake clock a race is the same race every time, and so are its
// files, byte for byte.
func TestSameRaceSameBytes(t *testing.T) {
	for _, s := range racescript.Scripts() {
		for _, f := range formats {
			a, b := output(t, f.write, s), output(t, f.write, s)
			if !bytes.Equal(a, b) {
				t.Errorf("%s %s: two runs of the same script differ", s.Name, f.name)
			}
		}
	}
}

func started(events []race.TraceEvent) int {
	n := 0
	for _, ev := range events {
		if ev.Kind == race.TraceAttemptStarted {
			n++
		}
	}
	return n
}

// The qlog validates against the draft's schema, and each started attempt
// has exactly one outcome event.
func TestQlogValidOneOutcomePerAttempt(t *testing.T) {
	for _, s := range racescript.Scripts() {
		events, _ := racescript.Run(s)
		q, err := tracecheck.CheckQlog(output(t, render.WriteQlog, s))
		if err != nil {
			t.Errorf("%s: %v", s.Name, err)
			continue
		}
		total := 0
		for _, n := range q.Outcomes {
			total += n
		}
		if q.Attempts != started(events) || total != q.Attempts {
			t.Errorf("%s: %d attempts started in the trace, %d in qlog, %d outcomes", s.Name, started(events), q.Attempts, total)
		}
	}
}

// A file that breaks the draft's rules is refused: the check is not a
// rubber stamp.
func TestQlogCheckRefusesBrokenFiles(t *testing.T) {
	good := string(output(t, render.WriteQlog, racescript.Scripts()[0]))
	for name, bad := range map[string]string{
		"unknown hev3 event": strings.Replace(good, `"hev3:metrics"`, `"hev3:summary"`, 1),
		"missing field":      strings.Replace(good, `"hostname":"race.hev2.test",`, ``, 1),
		"bad enum":           strings.Replace(good, `"result":"success"`, `"result":"won"`, 1),
		"second outcome":     good + "\x1e" + `{"time":999,"name":"hev3:attempt_outcome","data":{"he_session_id":"1","attempt_id":"1","result":"failure"}}` + "\n",
		"no framing":         strings.ReplaceAll(good, "\x1e", ""),
		"uint32 negative":    strings.Replace(good, `"duration_ms":5`, `"duration_ms":-5`, 1),
	} {
		if _, err := tracecheck.CheckQlog([]byte(bad)); err == nil {
			t.Errorf("%s: accepted", name)
		}
	}
}

func TestChromeTracksAndPairs(t *testing.T) {
	for _, s := range racescript.Scripts() {
		events, _ := racescript.Run(s)
		c, err := tracecheck.CheckChrome(output(t, render.WriteChromeTrace, s))
		if err != nil {
			t.Errorf("%s: %v", s.Name, err)
			continue
		}
		if c.Spans["attempt"] != started(events) {
			t.Errorf("%s: %d attempt spans, %d attempts started", s.Name, c.Spans["attempt"], started(events))
		}
		if c.Spans["lookup"] != 2 {
			t.Errorf("%s: %d lookup spans, want 2", s.Name, c.Spans["lookup"])
		}
	}
	if _, err := tracecheck.CheckChrome([]byte(`{"traceEvents":[{"name":"x","ph":"B","ts":1,"pid":1,"tid":1}]}`)); err == nil {
		t.Error("an unclosed B was accepted")
	}
}

func lanes(t *testing.T, s racescript.Script) []tracecheck.Lane {
	svg, err := tracecheck.CheckSVG(output(t, render.WriteSVG, s))
	if err != nil {
		t.Fatalf("%s: %v", s.Name, err)
	}
	return svg.Lanes
}

func script(t *testing.T, name string) racescript.Script {
	for _, s := range racescript.Scripts() {
		if s.Name == name {
			return s
		}
	}
	t.Fatalf("no script %q", name)
	return racescript.Script{}
}

// The demo's race: both lookups answer, IPv6 hangs, IPv4 starts one
// attempt delay later and wins, IPv6 is closed.
func TestSVGLanesOfTheFallback(t *testing.T) {
	got := lanes(t, script(t, "ipv6-blackhole-ipv4-wins"))
	want := []tracecheck.Lane{
		{Kind: "lookup", Family: "ipv6", Outcome: "answered"},
		{Kind: "lookup", Family: "ipv4", Outcome: "answered"},
		{Kind: "timer", Timer: "attempt-delay"},
		{Kind: "attempt", Family: "ipv6", Outcome: "closed", Attempt: "0"},
		{Kind: "attempt", Family: "ipv4", Outcome: "won", Attempt: "1"},
	}
	if len(got) != len(want) {
		t.Fatalf("lanes %+v, want %+v", got, want)
	}
	for i := range want {
		if got[i] != want[i] {
			t.Errorf("lane %d = %+v, want %+v", i, got[i], want[i])
		}
	}
	got = lanes(t, script(t, "a-first-resolution-delay"))
	if got[2] != (tracecheck.Lane{Kind: "timer", Timer: "resolution-delay"}) {
		t.Errorf("A first: lane 2 = %+v, want the Resolution Delay", got[2])
	}
	if n := len(lanes(t, script(t, "eight-attempts"))); n != 2+1+8 {
		t.Errorf("eight attempts: %d lanes, want 11", n)
	}
}

// Every name the writers emit is listed in docs/trace-names.md.
func TestEveryNameDocumented(t *testing.T) {
	doc, err := os.ReadFile("../../docs/trace-names.md")
	if err != nil {
		t.Fatal(err)
	}
	documented := map[string]bool{}
	for _, m := range regexp.MustCompile("`([^`]+)`").FindAllStringSubmatch(string(doc), -1) {
		documented[m[1]] = true
	}
	check := func(what, name string) {
		if !documented[name] {
			t.Errorf("%s name %q is not in docs/trace-names.md", what, name)
		}
	}
	for k := race.TraceKind(1); k.String() != "unknown"; k++ {
		check("trace kind", k.String())
	}
	seen := 0
	for _, s := range racescript.Scripts() {
		q, err := tracecheck.CheckQlog(output(t, render.WriteQlog, s))
		if err != nil {
			t.Fatal(err)
		}
		for _, n := range q.Names {
			check("qlog event", n)
			seen++
		}
		c, err := tracecheck.CheckChrome(output(t, render.WriteChromeTrace, s))
		if err != nil {
			t.Fatal(err)
		}
		for _, n := range c.Names {
			check("chrome event", n)
		}
	}
	for _, uri := range []string{render.QlogHEv3Schema, render.QlogHev2Schema} {
		check("qlog schema", uri)
	}
	if seen == 0 {
		t.Fatal("no qlog events seen")
	}
}

func TestNoEventsNoFile(t *testing.T) {
	for _, f := range formats {
		var b bytes.Buffer
		if err := f.write(&b, nil, render.Meta{}); !errors.Is(err, render.ErrNoEvents) || b.Len() != 0 {
			t.Errorf("%s of no events: %v, %d bytes", f.name, err, b.Len())
		}
	}
}

// A trace cut short (a race still running) still draws: open lanes run to
// the last event.
func TestPartialTrace(t *testing.T) {
	events, cfg := racescript.Run(script(t, "eight-attempts"))
	cut := events[:len(events)/2]
	for _, f := range formats {
		var b bytes.Buffer
		if err := f.write(&b, cut, racescript.Meta(cfg)); err != nil {
			t.Errorf("%s: %v", f.name, err)
		}
	}
	var b bytes.Buffer
	render.WriteChromeTrace(&b, cut, racescript.Meta(cfg))
	if _, err := tracecheck.CheckChrome(b.Bytes()); err != nil {
		t.Errorf("partial chrome trace: %v", err)
	}
}
