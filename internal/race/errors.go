package race

import (
	"fmt"
	"net/netip"
	"strconv"
	"strings"
	"syscall"
	"time"
)

// TimeoutKind says which of the caller's timeouts fired.
type TimeoutKind uint8

const (
	TimeoutNone TimeoutKind = iota
	TimeoutResolv
	TimeoutConnect
	TimeoutOpen
)

func (k TimeoutKind) String() string {
	switch k {
	case TimeoutResolv:
		return "resolv_timeout"
	case TimeoutConnect:
		return "connect_timeout"
	case TimeoutOpen:
		return "open_timeout"
	}
	return "none"
}

// TimeoutError is a caller's timeout that fired. It matches
// errors.Is(err, syscall.ETIMEDOUT), like Ruby's "user specified timeout".
type TimeoutError struct {
	Kind  TimeoutKind
	After time.Duration
}

func (e *TimeoutError) Error() string {
	return fmt.Sprintf("%s (%v) expired", e.Kind, e.After)
}
func (e *TimeoutError) Timeout() bool        { return true }
func (e *TimeoutError) Temporary() bool      { return true }
func (e *TimeoutError) Is(target error) bool { return target == syscall.ETIMEDOUT }

// OutcomeKind is what ended a failed race. The first that applies wins: the
// caller's cancellation; one of the caller's timeouts (Error.Expired says
// which: a race that ran out of time failed because of it, whatever its
// last attempt said); an attempt's error (every address was tried); a
// lookup's error (no address to try).
type OutcomeKind uint8

const (
	OutcomeConnect  OutcomeKind = iota + 1 // every attempt failed
	OutcomeResolve                         // resolution gave no address
	OutcomeTimeout                         // a caller's timeout ended it
	OutcomeCanceled                        // the caller canceled
)

func (k OutcomeKind) String() string {
	switch k {
	case OutcomeConnect:
		return "connect"
	case OutcomeResolve:
		return "resolve"
	case OutcomeTimeout:
		return "timeout"
	case OutcomeCanceled:
		return "canceled"
	}
	return "unknown"
}

// BindError is a failure to bind the local address before connecting.
type BindError struct {
	Local netip.AddrPort
	Err   syscall.Errno
}

func (e *BindError) Error() string { return "bind " + e.Local.String() + ": " + e.Err.Error() }
func (e *BindError) Unwrap() error { return e.Err }

// Error is a failed race. Cause is the best single explanation; the other
// fields keep every part. errors.Is and errors.As see the cause and every
// part (errors.Is(err, syscall.ECONNREFUSED) is true if any attempt was
// refused; check Cause for the headline).
type Error struct {
	Host string
	Port uint16
	// Outcome classifies the failure, once for every front end (the C ABI's
	// status, the bindings' exception classes).
	Outcome OutcomeKind
	// Cause, the first that applies (buildError, machine_error.go): the
	// caller's cancellation (Canceled); the open_timeout, or with fast
	// fallback the connect_timeout, that ended the race (*TimeoutError);
	// the last attempt's error (a connection error is never replaced by a
	// later resolution error; a serial connect_timeout is one); the last
	// resolution error (a resolv_timeout is one).
	Cause    error
	Expired  TimeoutKind // which timeout fired, if any
	Canceled error       // the context's error when the caller canceled
	Lookups  [2]LookupInfo
	Attempts []AttemptInfo
	Elapsed  time.Duration
	// Trace is every step of the race, kept only when it was asked for
	// (MachineConfig.Record; core's Dialer.Record): nil otherwise.
	Trace *Trace
	// History is what the network's history decided for this race.
	History HistoryInput
	// HTTPS is what the HTTPS query gave the race, nil when none was made.
	HTTPS *HTTPSOutcome
}

// Report is the failed race's establishment report, built now from Trace
// (ErrNoTrace when the race was not recorded).
func (e *Error) Report() (Report, error) { return e.Trace.Report() }

func (e *Error) Error() string {
	var b strings.Builder
	b.WriteString("hev2: connect ")
	b.WriteString(hostPort(e.Host, e.Port))
	b.WriteString(": ")
	b.WriteString(e.Cause.Error())
	var parts []string
	for _, l := range e.Lookups {
		if l.Err != nil && l.Err != e.Cause {
			parts = append(parts, l.Err.Error())
		}
	}
	if len(e.Attempts) > 1 || len(e.Attempts) == 1 && e.Attempts[0].Err != e.Cause {
		for _, a := range e.Attempts {
			if a.Err != nil {
				parts = append(parts, a.Addr.String()+": "+a.Err.Error())
			}
		}
	}
	if len(parts) > 0 {
		b.WriteString(" (")
		b.WriteString(strings.Join(parts, "; "))
		b.WriteString(")")
	}
	return b.String()
}

// Unwrap returns the cause first, then every lookup and attempt error.
func (e *Error) Unwrap() []error {
	errs := []error{e.Cause}
	for _, l := range e.Lookups {
		if l.Err != nil {
			errs = append(errs, l.Err)
		}
	}
	for _, a := range e.Attempts {
		if a.Err != nil {
			errs = append(errs, a.Err)
		}
	}
	return errs
}

// Timeout reports whether one of the caller's timeouts ended the race.
func (e *Error) Timeout() bool { return e.Expired != TimeoutNone }

func hostPort(host string, port uint16) string {
	if strings.IndexByte(host, ':') >= 0 {
		return "[" + host + "]:" + strconv.Itoa(int(port))
	}
	return host + ":" + strconv.Itoa(int(port))
}
