package race

import (
	"errors"
	"net/netip"
	"testing"
	"time"
)

// sink collects what the machine reports to history.
type sink struct{ got []string }

func (s *sink) RecordAttempt(network uint64, host string, addr netip.Addr, o PathOutcome, rtt time.Duration) {
	s.got = append(s.got, addr.String()+" "+o.String()+" "+rtt.String())
}

func historyConfig(first Family) (MachineConfig, *sink) {
	cfg := testConfig()
	s := &sink{}
	cfg.History = HistoryInput{Network: 1, First: first, Reason: "test"}
	cfg.HistorySink = s
	return cfg, s
}

// History puts IPv4 first: AAAA answering first now waits the Resolution
// Delay for A, as A answering first waits for AAAA without history.
func TestHistoryIPv4FirstWaitsForA(t *testing.T) {
	cfg, _ := historyConfig(IPv4)
	h := newHarness(t, cfg)
	h.start()
	if h.trace[0].Kind != TraceHistory || h.trace[0].Family != IPv4 || h.trace[0].Detail != "test" {
		t.Fatalf("first trace event %+v, want history ipv4", h.trace[0])
	}
	acts := h.step(0, answered(IPv6, v6a, v6b))
	h.wantStarted(acts)
	h.wantTimer(acts, 50)
	acts = h.step(10, answered(IPv4, v4a, v4b))
	h.wantStarted(acts, v4a)
	acts = h.step(260)
	h.wantStarted(acts, v6a) // interleaved from there: IPv6, then IPv4
	acts = h.step(510)
	h.wantStarted(acts, v4b)
}

func TestHistoryIPv4FirstAAAAOnly(t *testing.T) {
	// A never comes within the Resolution Delay: IPv6 is tried then.
	cfg, _ := historyConfig(IPv4)
	h := newHarness(t, cfg)
	h.start()
	h.step(0, answered(IPv6, v6a))
	acts := h.step(50)
	h.wantStarted(acts, v6a)
}

// A loser pending for the whole attempt delay is "lost"; one closed
// sooner says nothing; the winner reports its connect time.
func TestHistoryOutcomesReported(t *testing.T) {
	cfg, s := historyConfig(FamilyUnspec)
	h := newHarness(t, cfg)
	h.start()
	h.step(0, answered(IPv6, v6a, v6b), answered(IPv4, v4a))
	h.step(250) // v4a
	h.step(500) // v6b
	acts := h.step(520, connected(1))
	h.wantWinner(acts, 1)
	want := "[2001:db8::a lost 520ms 198.18.0.10 connected 270ms]"
	if got := fmtList(s.got); got != want {
		t.Fatalf("reported %s, want %s", got, want)
	}
	if a := h.m.Attempts(); !a[0].Lost || a[2].Lost || a[1].Lost {
		t.Fatalf("Lost flags %v %v %v, want only attempt 0", a[0].Lost, a[1].Lost, a[2].Lost)
	}
}

func TestHistoryRefusedReportedCanceledNot(t *testing.T) {
	cfg, s := historyConfig(FamilyUnspec)
	h := newHarness(t, cfg)
	h.start()
	h.step(0, answered(IPv6, v6a), answered(IPv4, v4a))
	h.step(5, refused(0))
	h.step(400, Event{Kind: EventCancel, Err: errors.New("canceled")})
	if got := fmtList(s.got); got != "[2001:db8::a refused 5ms]" {
		t.Fatalf("reported %s: want the refusal only (a canceled race's pending attempt says nothing)", got)
	}
}

func fmtList(l []string) string {
	out := "["
	for i, s := range l {
		if i > 0 {
			out += " "
		}
		out += s
	}
	return out + "]"
}
