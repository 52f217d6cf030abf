package race

import "time"

// buildError explains a failed race. The cause is, in order: the caller's
// cancellation; the timeout that cut a wait short; the last attempt's
// error (a connection error is never replaced by a later resolution
// error); the last resolution error.
func (m *Machine) buildError(now time.Duration) *Error {
	e := &m.failure // see Machine.failure; a race fails once
	*e = Error{
		Host:     m.cfg.Host,
		Port:     m.cfg.Port,
		Expired:  m.expired,
		Canceled: m.canceled,
		Lookups:  m.Lookups(),
		Attempts: m.DecidedAttempts(),
		Elapsed:  now - m.start,
		Trace:    m.cfg.Record,
		History:  m.cfg.History,
		HTTPS:    m.HTTPS(),
	}
	switch {
	case m.canceled != nil:
		e.Outcome = OutcomeCanceled
	case m.expired != TimeoutNone:
		e.Outcome = OutcomeTimeout
	case m.lastAttemptErr != nil:
		e.Outcome = OutcomeConnect
	default:
		e.Outcome = OutcomeResolve
	}
	switch {
	case m.canceled != nil:
		e.Cause = m.canceled
	case m.expired == TimeoutOpen || m.expired == TimeoutConnect && !m.cfg.Serial:
		e.Cause = &TimeoutError{Kind: m.expired, After: m.timeoutValue(m.expired)}
	case m.lastAttemptErr != nil:
		e.Cause = m.lastAttemptErr
	case m.lastResolveErr != nil:
		e.Cause = m.lastResolveErr
	default:
		// Unreachable by construction: a race fails only after a lookup or
		// an attempt did. Keep the error well-formed regardless.
		e.Cause = &ResolveError{Host: m.cfg.Host, Code: EAI_NODATA}
	}
	return e
}

func (m *Machine) timeoutValue(k TimeoutKind) time.Duration {
	switch k {
	case TimeoutResolv:
		return m.cfg.ResolvTimeout
	case TimeoutConnect:
		return m.cfg.ConnectTimeout
	case TimeoutOpen:
		return m.cfg.OpenTimeout
	}
	return 0
}
