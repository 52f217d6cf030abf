package contract

import (
	"errors"
	"syscall"

	"github.com/hev2/hev2/core"
)

// Report is the contract's optional "report" field: the race's
// establishment report (core.Report; hev2_report in C), as hev2-connect
// --json and hev2-dial print it. Names are core's; times are ms since the
// race's start; "" or null where nothing applies.
type Report struct {
	Connected bool    `json:"connected"`
	Winner    int     `json:"winner"` // attempt index, -1 if none
	Family    string  `json:"family"` // "ipv6", "ipv4", "" if none
	Reason    string  `json:"reason"` // core.WinReason's name
	Timeout   string  `json:"timeout"`
	ElapsedMS float64 `json:"elapsed_ms"`
	Phases    struct {
		Resolving       *ReportPhase `json:"resolving"`
		ResolutionDelay *ReportPhase `json:"resolution_delay"`
		Connecting      *ReportPhase `json:"connecting"`
	} `json:"phases"`
	ResolutionDelayExpired bool            `json:"resolution_delay_expired"`
	Lookups                [2]ReportLookup `json:"lookups"` // AAAA, A
	Attempts               []ReportAttempt `json:"attempts"`
}

// ReportPhase is one span of the race (null when it did not happen).
type ReportPhase struct {
	StartMS float64 `json:"start_ms"`
	EndMS   float64 `json:"end_ms"`
	MS      float64 `json:"ms"`
}

// ReportLookup is one family's lookup.
type ReportLookup struct {
	Family    string  `json:"family"`
	State     string  `json:"state"` // core.LookupState's name
	StartMS   float64 `json:"start_ms"`
	EndMS     float64 `json:"end_ms"`
	MS        float64 `json:"ms"`
	Addresses int     `json:"addresses"`
	EAI       string  `json:"eai"`
	Errno     string  `json:"errno"`
}

// ReportAttempt is one connection attempt.
type ReportAttempt struct {
	Address    string  `json:"address"`
	Family     string  `json:"family"`
	Port       int     `json:"port"`
	Outcome    string  `json:"outcome"` // core.AttemptOutcome's name
	Errno      string  `json:"errno"`
	BindFailed bool    `json:"bind_failed"`
	StartMS    float64 `json:"start_ms"`
	EndMS      float64 `json:"end_ms"`
	MS         float64 `json:"ms"`
	// SynthesizedFrom is the IPv4 address Address stands for (NAT64), "".
	SynthesizedFrom string `json:"synthesized_from"`
}

// FromReport turns core's report into the contract's field.
func FromReport(r core.Report) *Report {
	out := &Report{Connected: r.Connected, Winner: r.Winner, Reason: r.Reason.String(),
		ElapsedMS: Millis(r.Elapsed), ResolutionDelayExpired: r.ResolutionDelayExpired,
		Attempts: make([]ReportAttempt, 0, len(r.Attempts))}
	if r.Connected {
		out.Family = r.Family.String()
	}
	if r.Timeout != core.TimeoutNone {
		out.Timeout = r.Timeout.String()
	}
	out.Phases.Resolving = phase(r.Resolving)
	out.Phases.ResolutionDelay = phase(r.ResolutionDelay)
	out.Phases.Connecting = phase(r.Connecting)
	for i, l := range r.Lookups {
		rl := ReportLookup{Family: l.Family.String(), State: l.State.String(), StartMS: Millis(l.Start),
			EndMS: Millis(l.End), MS: Millis(l.Duration()), Addresses: len(l.Addrs)}
		var re *core.ResolveError
		if errors.As(l.Err, &re) {
			rl.EAI, rl.Errno = EAIName(re.Code), ErrnoName(re.Errno)
		}
		out.Lookups[i] = rl
	}
	for _, a := range r.Attempts {
		ra := ReportAttempt{Address: a.Addr.Addr().String(), Family: a.Family.String(), Port: int(a.Addr.Port()),
			Outcome: a.Outcome.String(), StartMS: Millis(a.Start), EndMS: Millis(a.End), MS: Millis(a.Duration())}
		var be *core.BindError
		ra.BindFailed = errors.As(a.Err, &be)
		if a.SynthesizedFrom.IsValid() {
			ra.SynthesizedFrom = a.SynthesizedFrom.String()
		}
		var en syscall.Errno
		switch {
		case a.Outcome == core.AttemptTimedOut:
			ra.Errno = ErrnoName(syscall.ETIMEDOUT)
		case errors.As(a.Err, &en):
			ra.Errno = ErrnoName(en)
		}
		out.Attempts = append(out.Attempts, ra)
	}
	return out
}

func phase(p core.Phase) *ReportPhase {
	if !p.Happened {
		return nil
	}
	return &ReportPhase{StartMS: Millis(p.Start), EndMS: Millis(p.End), MS: Millis(p.End - p.Start)}
}
