package contract

import (
	"encoding/json"
	"io"
	"slices"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/hev2/hev2/internal/race"
)

func TestParse(t *testing.T) {
	o, err := Parse("t", []string{"--resolv-timeout", "300", "--connect-timeout", "400", "--open-timeout", "0",
		"--no-fast-fallback", "--family", "6", "--resolver", "builtin", "x.hev2.test", "8080"}, io.Discard)
	if err != nil {
		t.Fatal(err)
	}
	want := Options{ResolvTimeout: 300 * time.Millisecond, ConnectTimeout: 400 * time.Millisecond,
		NoFastFallback: true, Family: 6, Resolver: "builtin", Host: "x.hev2.test", Port: 8080, Repeat: 1}
	if o != want {
		t.Errorf("got %+v, want %+v", o, want)
	}
	o, err = Parse("t", []string{"--repeat", "10", "--no-history", "x.hev2.test", "8080"}, io.Discard)
	if err != nil || o.Repeat != 10 || !o.NoHistory {
		t.Errorf("--repeat 10 --no-history: %+v, %v", o, err)
	}
	for _, bad := range [][]string{
		{},
		{"host"},
		{"host", "80", "extra"},
		{"host", "0"},
		{"host", "65536"},
		{"host", "http"},
		{"--family", "5", "host", "80"},
		{"--resolver", "dns", "host", "80"},
		{"--open-timeout", "-1", "host", "80"},
		{"--bogus", "host", "80"},
		{"--repeat", "0", "host", "80"},
		{"--repeat", "1001", "host", "80"},
		{"", "80"},
	} {
		if _, err := Parse("t", bad, io.Discard); err == nil {
			t.Errorf("Parse(%q) accepted", bad)
		}
	}
}

func TestNames(t *testing.T) {
	if n := ErrnoName(syscall.ECONNREFUSED); n != "ECONNREFUSED" {
		t.Errorf("ErrnoName(ECONNREFUSED) = %q", n)
	}
	if n := ErrnoName(0); n != "" {
		t.Errorf("ErrnoName(0) = %q", n)
	}
	if n := EAIName(-2); n != "EAI_NONAME" {
		t.Errorf("EAIName(-2) = %q", n)
	}
	if n := EAIName(-99); n != "EAI_-99" {
		t.Errorf("EAIName(-99) = %q", n)
	}
}

func TestParseTraceFiles(t *testing.T) {
	o, err := Parse("t", []string{"--svg", "a.svg", "--chrome-trace", "a.json", "x.hev2.test", "80"}, io.Discard)
	if err != nil {
		t.Fatal(err)
	}
	if want := (TraceFiles{SVG: "a.svg", Chrome: "a.json"}); o.TraceFiles != want || !o.TraceFiles.Any() {
		t.Errorf("TraceFiles = %+v, want %+v", o.TraceFiles, want)
	}
	if o, _ := Parse("t", []string{"x.hev2.test", "80"}, io.Discard); o.TraceFiles.Any() {
		t.Error("trace files asked for without a flag")
	}
}

func TestParseHTTPS(t *testing.T) {
	o, err := Parse("t", []string{"--https-rr", "--alpn", "h2,http/1.1", "--ech", "x.hev2.test", "8080"}, io.Discard)
	if err != nil {
		t.Fatal(err)
	}
	if !o.HTTPSRR || !o.ECH || !slices.Equal(o.ALPNList(), []string{"h2", "http/1.1"}) || !o.HTTPSFlags() {
		t.Errorf("got %+v", o)
	}
	if o, _ := Parse("t", []string{"x.hev2.test", "80"}, io.Discard); o.HTTPSFlags() || o.ALPNList() != nil {
		t.Errorf("HTTPS flags without asking: %+v", o)
	}
	if _, err := Parse("t", []string{"--https-rr", "--alpn", "h2,,x", "host", "80"}, io.Discard); err == nil {
		t.Error("an empty protocol in --alpn accepted")
	}
}

func TestFromHTTPS(t *testing.T) {
	if FromHTTPS(nil, true) != nil {
		t.Error("no query: want svcb null")
	}
	o := &race.HTTPSOutcome{State: race.HTTPSAnswered, Winner: 0,
		Services: []race.Service{{Priority: 1, Target: "svc.hev2.test.", Port: 8090, ALPN: []string{"h2", "http/1.1"}, ECH: []byte{1}}}}
	line, err := json.Marshal(Output{OK: true, SVCB: FromHTTPS(o, true)})
	if err != nil {
		t.Fatal(err)
	}
	want := `"svcb":{"state":"answered","service":{"priority":1,"target":"svc.hev2.test.","port":8090,"alpn":["h2","http/1.1"],"ech":true}}`
	if !strings.Contains(string(line), want) {
		t.Errorf("got %s, want %s", line, want)
	}
	if s := FromHTTPS(o, false); s.Service != nil {
		t.Error("a failed connect has no service")
	}
	if s := FromHTTPS(&race.HTTPSOutcome{State: race.HTTPSPending, Winner: -1}, true); s.State != "timeout" || s.Service != nil {
		t.Errorf("pending: got %+v, want timeout without service", s)
	}
	line, _ = json.Marshal(Output{})
	if !strings.Contains(string(line), `"svcb":null`) {
		t.Errorf("no query: %s, want \"svcb\":null", line)
	}
	for i, st := range SVCBStates {
		if got := race.HTTPSState(i + 1).String(); got != st {
			t.Errorf("state %d: race says %q, the contract %q", i+1, got, st)
		}
	}
}
