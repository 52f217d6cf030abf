package testbed

import (
	"encoding/json"
	"maps"
	"net/netip"
	"regexp"
	"slices"
	"strings"
	"testing"

	"github.com/hev2/hev2/core"
	"github.com/hev2/hev2/tests/testbed/contract"
)

func TestJudge(t *testing.T) {
	winV6 := Scenario{Name: "w", Want: Expect{Winner: V6Good1}, BoundMS: 2000}
	refused := Scenario{Name: "r", Want: Expect{Errno: "ECONNREFUSED"}, BoundMS: 2000}
	cases := []struct {
		name string
		row  Scenario
		exit int
		res  ClientResult
		want Verdict
	}{
		{"right winner", winV6, 0, ClientResult{OK: true, Address: "2001:db8::10", Family: "ipv6", ElapsedMS: 3}, Pass},
		{"wrong winner", winV6, 0, ClientResult{OK: true, Address: "198.18.0.10", Family: "ipv4"}, Fail},
		{"wrong family label", winV6, 0, ClientResult{OK: true, Address: "2001:db8::10", Family: "ipv4"}, Fail},
		{"ok but exit 1", winV6, 1, ClientResult{OK: true, Address: "2001:db8::10", Family: "ipv6"}, Fail},
		{"failed instead of winning", winV6, 1, ClientResult{Error: &ClientError{Errno: "ECONNREFUSED"}}, Fail},
		{"beyond the gross bound", winV6, 0, ClientResult{OK: true, Address: "2001:db8::10", Family: "ipv6", ElapsedMS: 2500}, Fail},
		{"right error", refused, 1, ClientResult{Error: &ClientError{Errno: "ECONNREFUSED"}}, Pass},
		{"wrong errno", refused, 1, ClientResult{Error: &ClientError{Errno: "ETIMEDOUT"}}, Fail},
		{"failure without error object", refused, 1, ClientResult{}, Fail},
		{"won where it must fail", refused, 0, ClientResult{OK: true, Address: "198.18.0.30", Family: "ipv4"}, Fail},
	}
	repeat := Scenario{Name: "rep", Args: []string{"--repeat", "3"}, Want: Expect{Winner: V4Good1}, BoundMS: 2000, RepeatBoundMS: 200}
	v4 := func(ms float64, first string) ClientRun {
		return ClientRun{OK: true, Address: "198.18.0.10", Family: "ipv4", ElapsedMS: ms, FirstAttempt: first}
	}
	won := ClientResult{OK: true, Address: "198.18.0.10", Family: "ipv4", ElapsedMS: 260}
	withRuns := func(runs ...ClientRun) ClientResult { r := won; r.Runs = runs; return r }
	cases = append(cases, []struct {
		name string
		row  Scenario
		exit int
		res  ClientResult
		want Verdict
	}{
		{"repeat: later connects skip the blackhole", repeat, 0, withRuns(v4(260, "2001:db8::20"), v4(3, "198.18.0.10"), v4(4, "")), Pass},
		{"repeat: a run missing", repeat, 0, withRuns(v4(260, ""), v4(3, "")), Fail},
		{"repeat: a later connect paid the attempt delay", repeat, 0, withRuns(v4(260, ""), v4(3, ""), v4(255, "")), Fail},
		{"repeat: a later connect tried the blackhole first", repeat, 0, withRuns(v4(260, ""), v4(3, "2001:db8::20"), v4(4, "")), Fail},
		{"repeat: a later connect failed", repeat, 1, withRuns(v4(260, ""), v4(3, ""), ClientRun{Error: &ClientError{Errno: "ECONNREFUSED"}}), Fail},
	}...)
	for _, c := range cases {
		got, reason := judge(c.row, 8080, c.exit, &c.res)
		if got != c.want {
			t.Errorf("%s: verdict %v (%s), want %v", c.name, got, reason, c.want)
		}
		if got == Fail && reason == "" {
			t.Errorf("%s: a failure without a reason", c.name)
		}
	}
}

func TestParseResult(t *testing.T) {
	r, err := parseResult("some log line\n{\"ok\":true,\"address\":\"198.18.0.10\",\"family\":\"ipv4\",\"port\":8080,\"elapsed_ms\":1.5}\n")
	if err != nil || !r.OK || r.Address != "198.18.0.10" || r.ElapsedMS != 1.5 {
		t.Fatalf("got %+v, %v", r, err)
	}
	for _, bad := range []string{"", "\n\n", "connected to 198.18.0.10"} {
		if _, err := parseResult(bad); err == nil {
			t.Errorf("parseResult(%q): no error", bad)
		}
	}
}

func TestSelection(t *testing.T) {
	rows := Scenarios()
	if err := (Selection{Exclude: ParseList("no-such-row")}).Validate(rows); err == nil {
		t.Error("an unknown --exclude name was accepted")
	}
	if err := (Selection{Lacks: ParseList("no-such-option")}).Validate(rows); err == nil {
		t.Error("an unknown --lacks option was accepted")
	}
	sel := Selection{Lacks: ParseList("resolv-timeout"), Exclude: ParseList("nxdomain"), Only: regexp.MustCompile("timeout|nxdomain|dual")}
	if err := sel.Validate(rows); err != nil {
		t.Fatal(err)
	}
	got := map[string]string{}
	for _, r := range rows {
		reason, out := sel.why(r)
		if out {
			got[r.Name] = reason
		} else {
			got[r.Name] = "run"
		}
	}
	for name, want := range map[string]string{
		"dual-stack": "run", "connect-timeout": "run", "resolv-timeout": "client lacks",
		"nxdomain": "excluded", "v6-blackhole": "not selected",
	} {
		if !strings.HasPrefix(got[name], want) {
			t.Errorf("%s: %q, want %q", name, got[name], want)
		}
	}
}

// TestScenarioTable checks the table itself: unique names, every expected
// winner served by a listening address, the bound above the ideal.
func TestScenarioTable(t *testing.T) {
	layout := StandardLayout()
	seen := map[string]bool{}
	for _, r := range Scenarios() {
		if seen[r.Name] {
			t.Errorf("duplicate scenario %s", r.Name)
		}
		seen[r.Name] = true
		// A row's NAT64 prefix gives the synthesis of NAT64Listeners a
		// healthy listener (Scenario.Install).
		rowLayout := layout
		if r.Pref64.IsValid() {
			rowLayout = maps.Clone(layout)
			for _, v4 := range NAT64Listeners {
				rowLayout[core.NAT64Synthesize(r.Pref64, v4)] = Healthy()
			}
		}
		if r.Want.SynthesizedFrom.IsValid() && r.Want.Winner != core.NAT64Synthesize(r.Pref64, r.Want.SynthesizedFrom) {
			t.Errorf("%s: winner %v is not %v synthesized into %v", r.Name, r.Want.Winner, r.Want.SynthesizedFrom, r.Pref64)
		}
		if w := r.Want.Winner; w.IsValid() {
			if imp, ok := rowLayout[w]; !ok || !imp.listens() || imp.Kind == KindBlackhole {
				t.Errorf("%s: winner %v cannot accept (%v)", r.Name, w, imp)
			}
		} else if r.Want.Errno == "" && r.Want.EAI == "" && r.Want.Timeout == "" {
			t.Errorf("%s: neither a winner nor an error expected", r.Name)
		}
		if r.BoundMS <= r.IdealMS+r.TolMS {
			t.Errorf("%s: gross bound %v not above ideal %v+%v", r.Name, r.BoundMS, r.IdealMS, r.TolMS)
		}
		// The HTTPS rows: their records must pack (the server would
		// answer nothing), a service winner must listen on its port,
		// and "svcb" is judged.
		if r.UsesHTTPS() != (r.Want.SVCB != nil) {
			t.Errorf("%s: --https-rr and an expected svcb go together", r.Name)
		}
		if r.Want.Port != 0 && r.Want.Port != ServicePort {
			t.Errorf("%s: winner on port %d, where nothing listens", r.Name, r.Want.Port)
		}
		if s := r.Want.SVCB; s != nil && !slices.Contains(contract.SVCBStates, s.State) {
			t.Errorf("%s: svcb state %q", r.Name, s.State)
		}
		behaviours := []*Behaviour{r.HTTPS}
		for i := range r.Names {
			behaviours = append(behaviours, &r.Names[i].B)
		}
		for _, b := range behaviours {
			if b == nil {
				continue
			}
			for _, rec := range b.HTTPS {
				if err := rec.Check(); err != nil {
					t.Errorf("%s: %v", r.Name, err)
				}
			}
		}
	}
}

func TestJudgeHTTPS(t *testing.T) {
	svc := &contract.SVCB{State: "answered", Service: &contract.Service{Priority: 1, Target: "svc.x.", Port: ServicePort, ALPN: []string{"http/1.1"}}}
	row := Scenario{Name: "h", Args: []string{"--https-rr"}, BoundMS: 2000,
		Want: Expect{Winner: V6Good1, Port: ServicePort, SVCB: svc, FirstAttempt: netip.AddrPortFrom(V6Blackhole1, ServicePort)}}
	good := `{"state":"answered","service":{"priority":1,"target":"svc.x.","port":8090,"alpn":["http/1.1"],"ech":false}}`
	won := func(port int, svcb string) ClientResult {
		return ClientResult{OK: true, Address: "2001:db8::10", Family: "ipv6", Port: port, SVCB: json.RawMessage(svcb)}
	}
	withReport := func(r ClientResult, addr string, port int) ClientResult {
		r.Report = &struct {
			Attempts []struct {
				Address string `json:"address"`
				Port    int    `json:"port"`
			} `json:"attempts"`
		}{}
		r.Report.Attempts = append(r.Report.Attempts, struct {
			Address string `json:"address"`
			Port    int    `json:"port"`
		}{addr, port})
		return r
	}
	plain := Scenario{Name: "p", BoundMS: 2000, Want: Expect{Winner: V6Good1}}
	for _, c := range []struct {
		name string
		row  Scenario
		res  ClientResult
		want Verdict
	}{
		{"right service", row, won(8090, good), Pass},
		{"right, first attempt reported", row, withReport(won(8090, good), "2001:db8::20", 8090), Pass},
		{"wrong first attempt", row, withReport(won(8090, good), "2001:db8::20", 8080), Fail},
		{"origin's port", row, won(8080, good), Fail},
		{"no svcb", row, won(8090, ""), Fail},
		{"svcb null", row, won(8090, "null"), Fail},
		{"another state", row, won(8090, `{"state":"timeout","service":null}`), Fail},
		{"another service", row, won(8090, strings.Replace(good, `"priority":1`, `"priority":2`, 1)), Fail},
		{"ech said wrongly", row, won(8090, strings.Replace(good, `"ech":false`, `"ech":true`, 1)), Fail},
		{"no svcb without --https-rr", plain, won(8080, ""), Pass},
		{"null without --https-rr", plain, won(8080, "null"), Pass},
		{"an answer without --https-rr", plain, won(8080, good), Fail},
	} {
		if got, reason := judge(c.row, 8080, 0, &c.res); got != c.want {
			t.Errorf("%s: %v (%s), want %v", c.name, got, reason, c.want)
		}
	}
}

func TestNotApplicable(t *testing.T) {
	missing := map[string]string{"ech": "no --ech"}
	for _, r := range Scenarios() {
		why, _ := notApplicable(r, missing)
		if uses := slices.Contains(r.Args, "--ech"); uses != (why != "") {
			t.Errorf("%s: with ech missing: %q", r.Name, why)
		}
		why, _ = notApplicable(r, map[string]string{"https-rr": "unknown option"})
		if r.UsesHTTPS() != (why != "") {
			t.Errorf("%s: with https-rr missing: %q", r.Name, why)
		}
	}
	results := []RowResult{{Scenario: Scenario{Name: "a"}, Verdict: NotApplicable, Reason: "not applicable: no x", Stderr: "said"},
		{Scenario: Scenario{Name: "b"}, Verdict: NotApplicable, Reason: "not applicable: no x", Stderr: "said"}, {Scenario: Scenario{Name: "c"}}}
	lines := NotApplicableSummary("cl", results)
	if len(lines) != 1 || !strings.Contains(lines[0], "2 rows not applicable to cl") || !strings.HasSuffix(lines[0], ": a b") {
		t.Errorf("summary %q", lines)
	}
	if p, f, s := Counts(results); p != 1 || f != 0 || s != 2 {
		t.Errorf("counts %d passed %d failed %d skipped", p, f, s)
	}
	if err := (Selection{Require: ParseList("https-rr,ech")}).Validate(Scenarios()); err != nil {
		t.Error(err)
	}
	if err := (Selection{Require: ParseList("trace")}).Validate(Scenarios()); err == nil {
		t.Error("--require of an unknown feature accepted")
	}
}
