package racescript

import (
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/hev2/hev2/internal/race"
)

// The establishment report of every scripted race (the races the pictures
// and trace files are tested on) is exact: who won and why, each phase,
// each lookup and attempt, in whole milliseconds of the fake clock.
func TestReportOfEveryScript(t *testing.T) {
	want := map[string][4]string{
		"ipv6-blackhole-ipv4-wins": {
			"connected ipv4 #1 first-to-connect; timeout none; 262",
			"resolving 0-6; resolution delay -; connecting 5-262",
			"ipv6 answered 0-5; ipv4 answered 0-6",
			"lost 5-262; connected 255-262",
		},
		"a-first-resolution-delay": {
			"connected ipv4 #1 other-family-failed; timeout none; 52",
			"resolving 0-40; resolution delay 10-40; connecting 40-52",
			"ipv6 answered 0-40; ipv4 answered 0-10",
			"failed(connection refused) 40-45; connected 45-52",
		},
		"aaaa-nodata-a-wins": {
			"connected ipv4 #0 only-family-resolved; timeout none; 9",
			"resolving 0-7; resolution delay -; connecting 7-9",
			"ipv6 failed 0-4; ipv4 answered 0-7",
			"connected 7-9",
		},
		"eight-attempts": {
			"connected ipv4 #7 first-to-connect; timeout none; 800",
			"resolving 0-8; resolution delay -; connecting 3-800",
			"ipv6 answered 0-3; ipv4 answered 0-8",
			"lost 3-800; failed(connection refused) 253-260; failed(network is unreachable) 260-270; " +
				"failed(connection refused) 270-530; failed(no route to host) 520-790; lost 530-800; lost 780-800; connected 790-800",
		},
		"eight-attempts-long-addresses": {
			"failed connect; timeout none; 80",
			"resolving 0-4; resolution delay -; connecting 3-80",
			"ipv6 answered 0-3; ipv4 answered 0-4",
			"failed(cannot assign requested address) 3-10; failed(network is unreachable) 10-20; " +
				"failed(no route to host) 20-30; failed(connection refused) 30-40; " +
				"failed(cannot assign requested address) 40-50; failed(network is unreachable) 50-60; " +
				"failed(no route to host) 60-70; failed(connection timed out) 70-80",
		},
		"all-refused": {
			"failed connect; timeout none; 5",
			"resolving 0-3; resolution delay -; connecting 2-5",
			"ipv6 answered 0-2; ipv4 answered 0-3",
			"failed(connection refused) 2-4; failed(connection refused) 4-5",
		},
		"connect-timeout": {
			"failed timeout; timeout connect_timeout; 402",
			"resolving 0-3; resolution delay -; connecting 2-402",
			"ipv6 answered 0-2; ipv4 failed 0-3",
			"timed-out 2-402",
		},
		"resolv-timeout-aaaa-silent": {
			"connected ipv4 #0 only-family-resolved; timeout resolv_timeout; 400",
			"resolving 0-300; resolution delay 5-55 expired; connecting 55-400",
			"ipv6 timed-out 0-300; ipv4 answered 0-5",
			"connected 55-400",
		},
		"canceled": {
			"failed canceled; timeout none; 120",
			"resolving 0-4; resolution delay -; connecting 3-120",
			"ipv6 answered 0-3; ipv4 answered 0-4",
			"canceled 3-120",
		},
	}
	for _, s := range Scripts() {
		trace, _ := Run(s)
		rep, err := race.NewReport(trace)
		if err != nil {
			t.Errorf("%s: %v", s.Name, err)
			continue
		}
		w, ok := want[s.Name]
		if !ok {
			t.Errorf("%s: no expected report (add one here): %q", s.Name, describe(rep))
			continue
		}
		if got := describe(rep); got != w {
			t.Errorf("%s: report\n got %q\nwant %q", s.Name, got, w)
		}
	}
}

// describe spells a report as four lines: outcome, phases, lookups, attempts.
func describe(r race.Report) [4]string {
	msec := func(d time.Duration) string { return fmt.Sprint(d.Milliseconds()) }
	span := func(p race.Phase) string {
		if !p.Happened {
			return "-"
		}
		return msec(p.Start) + "-" + msec(p.End)
	}
	var out [4]string
	if r.Connected {
		out[0] = fmt.Sprintf("connected %v #%d %v", r.Family, r.Winner, r.Reason)
	} else {
		out[0] = fmt.Sprintf("failed %v", r.Failure)
	}
	out[0] += fmt.Sprintf("; timeout %v; %s", r.Timeout, msec(r.Elapsed))
	rd := span(r.ResolutionDelay)
	if r.ResolutionDelayExpired {
		rd += " expired"
	}
	out[1] = fmt.Sprintf("resolving %s; resolution delay %s; connecting %s", span(r.Resolving), rd, span(r.Connecting))
	var parts []string
	for _, l := range r.Lookups {
		parts = append(parts, fmt.Sprintf("%v %v %s-%s", l.Family, l.State, msec(l.Start), msec(l.End)))
	}
	out[2] = strings.Join(parts, "; ")
	parts = parts[:0]
	for _, a := range r.Attempts {
		o := a.Outcome.String()
		if a.Outcome == race.AttemptFailed {
			o += "(" + a.Err.Error() + ")"
		}
		parts = append(parts, fmt.Sprintf("%s %s-%s", o, msec(a.Start), msec(a.End)))
	}
	out[3] = strings.Join(parts, "; ")
	return out
}
