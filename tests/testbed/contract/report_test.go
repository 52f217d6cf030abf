package contract

import (
	"encoding/json"
	"net/netip"
	"reflect"
	"sort"
	"syscall"
	"testing"
	"time"

	"github.com/hev2/hev2/core"
)

// The "report" field has the keys hev2-connect --json prints (checked
// there by tests/c/test_cli.sh against the same lists) and core's names.
func TestReportField(t *testing.T) {
	ms := func(n int) time.Duration { return time.Duration(n) * time.Millisecond }
	v6 := netip.MustParseAddrPort("[2001:db8::a]:443")
	v4 := netip.MustParseAddrPort("198.18.0.10:443")
	rep := core.Report{
		Connected: true, Winner: 1, Family: core.IPv4, Reason: core.ReasonFirstToConnect, Elapsed: ms(270),
		Resolving:  core.Phase{Happened: true, End: ms(10)},
		Connecting: core.Phase{Happened: true, Start: ms(10), End: ms(270)},
		Lookups: [2]core.LookupReport{
			{Family: core.IPv6, State: core.LookupAnswered, End: ms(10), Addrs: []netip.Addr{v6.Addr()}},
			{Family: core.IPv4, State: core.LookupFailed, End: ms(4), Err: &core.ResolveError{Code: core.EAI_SYSTEM, Errno: syscall.EMFILE}},
		},
		Attempts: []core.AttemptReport{
			{Addr: v6, Family: core.IPv6, Start: ms(10), End: ms(270), Outcome: core.AttemptLost},
			{Addr: v4, Family: core.IPv4, Start: ms(260), End: ms(270), Outcome: core.AttemptConnected},
		},
	}
	b, err := json.Marshal(Output{OK: true, Report: FromReport(rep)})
	if err != nil {
		t.Fatal(err)
	}
	var got struct {
		Report map[string]any `json:"report"`
	}
	if err := json.Unmarshal(b, &got); err != nil {
		t.Fatal(err)
	}
	r := got.Report
	wantKeys(t, r, "attempts", "connected", "elapsed_ms", "family", "lookups", "phases", "reason", "resolution_delay_expired", "timeout", "winner")
	wantKeys(t, r["phases"].(map[string]any), "connecting", "resolution_delay", "resolving")
	l := r["lookups"].([]any)
	wantKeys(t, l[1].(map[string]any), "addresses", "eai", "end_ms", "errno", "family", "ms", "start_ms", "state")
	a := r["attempts"].([]any)
	wantKeys(t, a[0].(map[string]any), "address", "bind_failed", "end_ms", "errno", "family", "ms", "outcome", "port", "start_ms", "synthesized_from")

	if r["reason"] != "first-to-connect" || r["family"] != "ipv4" || r["winner"] != 1.0 || r["timeout"] != "" ||
		r["phases"].(map[string]any)["resolution_delay"] != nil {
		t.Errorf("report %v", r)
	}
	if lk := l[1].(map[string]any); lk["state"] != "failed" || lk["eai"] != "EAI_SYSTEM" || lk["errno"] != "EMFILE" || lk["ms"] != 4.0 {
		t.Errorf("lookup %v", lk)
	}
	if at := a[0].(map[string]any); at["outcome"] != "lost" || at["address"] != "2001:db8::a" || at["ms"] != 260.0 || at["errno"] != "" {
		t.Errorf("attempt %v", at)
	}
}

func wantKeys(t *testing.T, m map[string]any, want ...string) {
	t.Helper()
	var got []string
	for k := range m {
		got = append(got, k)
	}
	sort.Strings(got)
	if !reflect.DeepEqual(got, want) {
		t.Errorf("keys %v, want %v", got, want)
	}
}
