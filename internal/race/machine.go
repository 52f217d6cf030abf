package race

import (
	"net/netip"
	"time"
)

// Machine is one Happy Eyeballs race as a sans-I/O state machine: it takes
// events stamped with "now" (a monotonic offset chosen by the driver) and
// answers with the actions the driver must perform. It never reads a clock,
// never sleeps and never touches a socket, so the whole of RFC 8305 can be
// tested deterministically, and the driver stays thin.
//
// Every Step handles all the events it is given and then everything that is
// due at "now" (timers included), so two things that happen at once cost
// one turn, not two (the lesson of Ruby's Feature #20646).
type Machine struct {
	cfg   MachineConfig
	start time.Duration

	lookups [NumQueryKinds]lookupState // by QueryKind.Index
	// endpoints holds every distinct destination known so far; order is
	// endpoints in RFC 6724 order, interleaved by family, recomputed when
	// destinations arrive so that late ones join in their sorted position.
	endpoints []endpoint
	order     []int
	// What each attempt did (infos) and what the machine tracks of it
	// (attempts), side by side by attempt id. infos is its own slice so
	// that a decided race's Error and Result can use it as it is.
	infos    []AttemptInfo
	attempts []attemptState
	// Counts of endpoints not yet tried and attempts in flight; int32
	// side by side (a race has at most a few hundred addresses), so that
	// the machine stays within its allocation size class.
	untried  int32
	inflight int32

	lastStart   time.Duration
	rdUntil     time.Duration
	connectAt   time.Duration
	timerAt     time.Duration // last armed timer, noTimer if none
	delayTraced time.Duration // the attempt delay last reported to the trace

	// The flags side by side, so that they share one word: the machine
	// is allocated per connect and its size class is part of the cost.
	failedNow    bool // an attempt failed this turn: start the next at once
	rdActive     bool // A answered first; waiting for AAAA until rdUntil
	connectArmed bool // every address has been tried: connectAt bounds the wait
	done         bool
	won          bool
	expired      TimeoutKind

	lastAttemptErr error
	lastResolveErr error
	canceled       error

	// nat is the NAT64 state, only when cfg.NAT64 != nil (a pointer, so
	// that every other race carries one word of it).
	nat *nat64State

	acts []Action

	// Room for a small race (one or two addresses, the common case) in the
	// machine itself, so that the slices above need no allocation of their
	// own: the drivers embed the machine in their own per-race object, and
	// a connect then costs a few allocations instead of a dozen. A bigger
	// race grows out of them as any slice does.
	endpointBuf [2]endpoint
	orderBuf    [2]int
	infoBuf     [2]AttemptInfo
	attemptBuf  [2]attemptState
	actBuf      [4]Action
	literal     [1]netip.Addr // cfg.Literal as cfg.Static's one address

	// failure is the Error of a failed race, in the machine's own memory,
	// its Attempts the machine's infos (which never change once the race
	// is decided): a cancel or a failure then allocates nothing, which
	// matters most where it is most common, many pending races cancelled
	// at once (each allocation there is garbage for a collector that scans
	// every pending race). The Error keeps the race's memory alive while
	// it is held, and goes with it when a driver recycles the race (whose
	// callers vouch that nothing holds its outcome any more).
	failure Error
}

type lookupState struct {
	info    LookupInfo
	query   QueryKind // zero until started
	pending bool
}

type attemptState struct {
	open     bool
	deadline time.Duration // serial mode: this attempt's connect_timeout
}

const noTimer time.Duration = -1

// NewMachine returns a race that has not started yet.
func NewMachine(cfg MachineConfig) *Machine {
	m := new(Machine)
	m.Init(cfg)
	return m
}

// Init makes m a race that has not started yet, for a driver that embeds
// the machine in its own per-race object. m must not be copied afterwards
// (its slices start out in its own arrays).
func (m *Machine) Init(cfg MachineConfig) {
	*m = Machine{cfg: cfg, timerAt: noTimer}
	if cfg.Literal.IsValid() {
		m.literal[0] = cfg.Literal
		m.cfg.Static = m.literal[:]
	}
	m.endpoints = m.endpointBuf[:0]
	m.order = m.orderBuf[:0]
	m.infos = m.infoBuf[:0]
	m.attempts = m.attemptBuf[:0]
	m.acts = m.actBuf[:0]
}

// Start begins the race at now: it asks for the lookups (AAAA first), or,
// with a static address list, for the first attempt.
func (m *Machine) Start(now time.Duration) []Action {
	m.start = now
	m.acts = m.acts[:0]
	if h := &m.cfg.History; h.Decided() {
		m.trace(now, TraceEvent{Kind: TraceHistory, Family: h.First, Until: m.cfg.ConnectionAttemptDelay, Detail: h.Reason})
	}
	if m.cfg.NAT64 != nil {
		m.startNAT64(now)
	}
	if m.cfg.Static != nil {
		m.admit(now, m.cfg.Static, OriginStatic)
	} else {
		if m.cfg.HTTPS != nil {
			m.startHTTPS(now)
		}
		for _, q := range m.cfg.Queries {
			l := &m.lookups[q.Index()]
			l.query, l.pending = q, true
			l.info = LookupInfo{Family: q.Family(), Started: true}
			m.emit(Action{Kind: ActionStartLookup, Query: q})
			m.trace(now, TraceEvent{Kind: TraceLookupStarted, Family: q.Family()})
		}
	}
	m.evaluate(now)
	return m.acts
}

// Step feeds the events that are ready at now and returns the actions to
// perform. The returned slice is reused by the next call.
func (m *Machine) Step(now time.Duration, events ...Event) []Action {
	m.acts = m.acts[:0]
	for i := range events {
		m.apply(now, &events[i])
	}
	m.evaluate(now)
	return m.acts
}

// Recorded is the trace the race keeps (MachineConfig.Record; nil if none).
func (m *Machine) Recorded() *Trace { return m.cfg.Record }

// Host is the name (or literal) the race connects to.
func (m *Machine) Host() string { return m.cfg.Host }

// Done reports whether the race is over.
func (m *Machine) Done() bool { return m.done }

// Lookups returns what each family's lookup did (AAAA, then A), as
// Result.Lookups and the C ABI count them.
func (m *Machine) Lookups() [2]LookupInfo {
	return [2]LookupInfo{m.lookups[QueryAAAA.Index()].info, m.lookups[QueryA.Index()].info}
}

// History is what history decided for the race (its input).
func (m *Machine) History() HistoryInput { return m.cfg.History }

// Attempts returns what each attempt did, in the order they started.
func (m *Machine) Attempts() []AttemptInfo {
	return m.AppendAttempts(make([]AttemptInfo, 0, len(m.attempts)))
}

// DecidedAttempts is what each attempt of a decided race did, in the
// machine's own memory (no copy): it never changes once the race is
// decided, and it is valid as long as the machine's memory is (a driver
// that reuses the machine for another race must copy it: AppendAttempts).
func (m *Machine) DecidedAttempts() []AttemptInfo {
	return m.infos[:len(m.infos):len(m.infos)] // an append by the holder copies
}

// AppendAttempts appends what each attempt did to dst (a driver's own
// buffer, so that a result costs no allocation of its own).
func (m *Machine) AppendAttempts(dst []AttemptInfo) []AttemptInfo {
	return append(dst, m.infos...)
}

func (m *Machine) apply(now time.Duration, ev *Event) {
	switch ev.Kind {
	case EventLookupDone:
		if ev.Lookup > 0 {
			m.serviceLookupDone(now, ev.Lookup, ev)
			return
		}
		m.lookupDone(now, ev.Query, ev.Addrs, ev.Err)
	case EventAttemptDone:
		m.attemptDone(now, ev.Attempt, ev.Err)
	case EventPrefix64:
		prefixes, _ := ev.Answer.([]netip.Prefix)
		m.prefixDone(now, prefixes, ev.Err)
	case EventCancel:
		if !m.done {
			m.canceled = ev.Err
			m.trace(now, TraceEvent{Kind: TraceCanceled, Err: ev.Err})
			m.fail(now)
		}
	}
}

func (m *Machine) lookupDone(now time.Duration, q QueryKind, addrs []netip.Addr, err error) {
	if !q.Valid() {
		return // names no lookup of the race
	}
	l := &m.lookups[q.Index()]
	if !l.pending || m.done {
		return // canceled or timed out earlier: the answer is no longer wanted
	}
	l.pending = false
	// The family of q's addresses: what the answer is filtered to, and
	// what the trace, the reports and the C ABI know the lookup by.
	f := q.Family()
	l.info.Done = true
	l.info.Elapsed = now - m.start
	addrs = addrsOfFamily(addrs, f)
	if err == nil && len(addrs) == 0 {
		err = &ResolveError{Host: m.cfg.Host, Family: f, Code: EAI_NODATA}
	}
	if err != nil {
		l.info.Err = err
		m.lastResolveErr = err
		m.trace(now, TraceEvent{Kind: TraceLookupFailed, Family: f, Err: err})
	} else {
		l.info.Addrs = addrs
		m.trace(now, TraceEvent{Kind: TraceLookupAnswered, Family: f, Addrs: addrs})
		if m.cfg.HTTPS != nil {
			m.admitOrigin(now, addrs)
		} else {
			m.admit(now, addrs, OriginDNS)
		}
	}
	switch first := m.firstFamily(); {
	case f == first:
		m.rdActive = false
	case err == nil && m.lookups[QueryFor(first).Index()].pending && !m.cfg.Serial && len(m.attempts) == 0:
		// RFC 8305 §3: A answered first; give AAAA a moment (or, when
		// history puts IPv4 first, AAAA answered first: give A one).
		m.rdActive = true
		m.rdUntil = now + m.cfg.ResolutionDelay
		m.trace(now, TraceEvent{Kind: TraceResolutionDelay, Until: m.rdUntil - m.start})
	}
}

func (m *Machine) attemptDone(now time.Duration, id int, err error) {
	if id < 0 || id >= len(m.attempts) || !m.attempts[id].open {
		return // already closed by the machine: the driver closes the socket
	}
	if err == nil {
		m.win(now, id)
		return
	}
	m.attempts[id].open = false
	a := &m.infos[id]
	a.End = now - m.start
	a.Err = err
	m.inflight--
	m.lastAttemptErr = err
	m.failedNow = true
	m.trace(now, TraceEvent{Kind: TraceAttemptFailed, Attempt: id, Addr: a.Addr, Err: err})
}

func (m *Machine) evaluate(now time.Duration) {
	if m.done {
		return
	}
	if m.checkTimeouts(now) {
		return
	}
	if m.rdActive && now >= m.rdUntil {
		m.rdActive = false
	}
	if m.holdingV6() && now >= m.nat.heldV6Until {
		m.releaseHeldV6()
	}
	m.maybeStartAttempt(now)
	if m.inflight == 0 && m.untried == 0 && !m.lookupPending() && !m.prefixWaiting() && !m.holdingV6() {
		m.fail(now)
		return
	}
	m.armTimer(now)
}

// checkTimeouts applies the caller's timeouts; it reports whether the race
// ended.
func (m *Machine) checkTimeouts(now time.Duration) bool {
	if t := m.cfg.OpenTimeout; t > 0 && now >= m.start+t {
		m.expire(now, TimeoutOpen)
		return true
	}
	if t := m.cfg.ResolvTimeout; t > 0 && m.resolving() && now >= m.start+t {
		// Resolution is over: what was found races on; what was not is
		// abandoned. The race ends here only if nothing is left to try.
		m.expired = TimeoutResolv
		terr := &TimeoutError{Kind: TimeoutResolv, After: t}
		m.trace(now, TraceEvent{Kind: TraceTimeout, Timeout: TimeoutResolv})
		for i := range m.lookups {
			if l := &m.lookups[i]; l.pending {
				l.pending = false
				l.info.Err = terr
				m.lastResolveErr = terr
				m.emit(Action{Kind: ActionCancelLookup, Query: l.query})
				m.trace(now, TraceEvent{Kind: TraceLookupCanceled, Family: l.info.Family})
			}
		}
		m.rdActive = false
		m.endServiceLookups(now, terr)
		if m.prefixWaiting() {
			// Discovery is part of resolution: stop waiting for it.
			m.emit(Action{Kind: ActionCancelPrefix64})
			m.prefixDone(now, nil, terr)
		}
	}
	if t := m.cfg.ConnectTimeout; t > 0 && m.cfg.Serial {
		for id := range m.attempts {
			a := &m.attempts[id]
			if a.open && now >= a.deadline {
				// Ruby's serial Socket.tcp: a timed-out attempt is one
				// more failure, and the next address is tried.
				m.expired = TimeoutConnect
				m.trace(now, TraceEvent{Kind: TraceTimeout, Timeout: TimeoutConnect})
				terr := &TimeoutError{Kind: TimeoutConnect, After: t}
				m.closeAttempt(now, id, terr)
				m.trace(now, TraceEvent{Kind: TraceAttemptFailed, Attempt: id, Addr: m.infos[id].Addr, Err: terr})
				m.failedNow = true
			}
		}
	}
	if m.connectArmed && !m.cfg.Serial && m.untried == 0 && m.inflight > 0 && now >= m.connectAt {
		m.expire(now, TimeoutConnect)
		return true
	}
	return false
}

func (m *Machine) maybeStartAttempt(now time.Duration) {
	failed := m.failedNow
	m.failedNow = false
	if m.untried == 0 || m.rdActive {
		return
	}
	if hold, _ := m.httpsHolds(now); hold {
		return
	}
	if m.cfg.Serial {
		if m.lookupPending() || m.prefixWaiting() || m.inflight > 0 {
			return
		}
	} else if m.inflight > 0 && !failed && now < m.lastStart+m.cfg.ConnectionAttemptDelay {
		return
	}
	m.startAttempt(now)
}

func (m *Machine) startAttempt(now time.Duration) {
	var e *endpoint
	for _, i := range m.order {
		if !m.endpoints[i].tried {
			e = &m.endpoints[i]
			break
		}
	}
	e.tried = true
	m.untried--
	id := len(m.attempts)
	ap := e.addrPort()
	a := attemptState{open: true}
	if m.cfg.Serial && m.cfg.ConnectTimeout > 0 {
		a.deadline = now + m.cfg.ConnectTimeout
	}
	m.infos = append(m.infos, AttemptInfo{Addr: ap, Start: now - m.start, SynthesizedFrom: e.from})
	m.attempts = append(m.attempts, a)
	m.inflight++
	m.lastStart = now
	if m.untried == 0 && m.cfg.ConnectTimeout > 0 {
		// connect_timeout counts from the moment the last known address
		// was tried; it is re-armed if more addresses arrive later.
		m.connectArmed = true
		m.connectAt = now + m.cfg.ConnectTimeout
	}
	m.emit(Action{Kind: ActionStartAttempt, Attempt: id, Addr: ap})
	m.trace(now, TraceEvent{Kind: TraceAttemptStarted, Attempt: id, Addr: ap, From: e.from, Origin: e.origin, ServiceNum: e.service})
}

func (m *Machine) win(now time.Duration, id int) {
	m.attempts[id].open = false
	a := &m.infos[id]
	a.Won = true
	a.End = now - m.start
	m.inflight--
	m.won = true
	if m.cfg.HTTPS != nil {
		m.https().out.Winner = m.serviceOfAttempt(a.Addr) - 1
	}
	m.trace(now, TraceEvent{Kind: TraceAttemptWon, Attempt: id, Addr: a.Addr, From: a.SynthesizedFrom})
	m.finish(now)
	m.emit(Action{Kind: ActionDone, Attempt: id})
	m.trace(now, TraceEvent{Kind: TraceDone})
}

func (m *Machine) expire(now time.Duration, kind TimeoutKind) {
	m.expired = kind
	m.trace(now, TraceEvent{Kind: TraceTimeout, Timeout: kind})
	m.fail(now)
}

func (m *Machine) fail(now time.Duration) {
	m.finish(now)
	err := m.buildError(now)
	m.emit(Action{Kind: ActionDone, Attempt: -1, Err: err})
	m.trace(now, TraceEvent{Kind: TraceDone, Err: err})
}

// finish closes every attempt still open, abandons pending lookups and
// disarms the timer: nothing of the race outlives it.
func (m *Machine) finish(now time.Duration) {
	m.done = true
	for id := range m.attempts {
		if m.attempts[id].open {
			m.closeAttempt(now, id, nil)
			if a := &m.infos[id]; m.won && a.End-a.Start >= m.cfg.ConnectionAttemptDelay {
				a.Lost = true
			}
			m.trace(now, TraceEvent{Kind: TraceAttemptClosed, Attempt: id, Addr: m.infos[id].Addr})
		}
	}
	for i := range m.lookups {
		if l := &m.lookups[i]; l.pending {
			l.pending = false
			m.emit(Action{Kind: ActionCancelLookup, Query: l.query})
			m.trace(now, TraceEvent{Kind: TraceLookupCanceled, Family: l.info.Family})
		}
	}
	if m.prefixWaiting() {
		m.nat.wait = false
		m.emit(Action{Kind: ActionCancelPrefix64})
	}
	m.endServiceLookups(now, nil)
	if m.timerAt != noTimer {
		m.timerAt = noTimer
		m.emit(Action{Kind: ActionArmTimer, At: noTimer})
	}
	m.reportHistory()
}

func (m *Machine) closeAttempt(now time.Duration, id int, err error) {
	m.attempts[id].open = false
	a := &m.infos[id]
	a.End = now - m.start
	a.Err = err
	m.inflight--
	if err != nil {
		m.lastAttemptErr = err
	}
	m.emit(Action{Kind: ActionCloseAttempt, Attempt: id, Addr: a.Addr})
}

func (m *Machine) lookupPending() bool {
	for i := range m.lookups {
		if m.lookups[i].pending {
			return true
		}
	}
	return m.servicePending()
}

// resolving: a lookup is pending, or a name's race awaits NAT64 discovery
// (part of its resolution; a literal's wait is bounded by discovery's own
// timeout, as a literal has no resolv_timeout).
func (m *Machine) resolving() bool {
	return m.lookupPending() || m.prefixWaiting() && m.cfg.Static == nil
}

// armTimer asks for a wake-up at the earliest moment something becomes due.
func (m *Machine) armTimer(now time.Duration) {
	next := noTimer
	consider := func(at time.Duration) {
		if next == noTimer || at < next {
			next = at
		}
	}
	if t := m.cfg.OpenTimeout; t > 0 {
		consider(m.start + t)
	}
	if t := m.cfg.ResolvTimeout; t > 0 && m.resolving() {
		consider(m.start + t)
	}
	if m.rdActive {
		consider(m.rdUntil)
	}
	if hold, until := m.httpsHolds(now); hold && until != noTimer {
		consider(until)
	}
	if m.holdingV6() {
		consider(m.nat.heldV6Until)
	}
	if !m.cfg.Serial && !m.rdActive && m.untried > 0 && m.inflight > 0 {
		at := m.lastStart + m.cfg.ConnectionAttemptDelay
		consider(at)
		if at != m.delayTraced {
			m.delayTraced = at
			m.trace(now, TraceEvent{Kind: TraceAttemptDelay, Until: at - m.start})
		}
	}
	if m.connectArmed && !m.cfg.Serial && m.untried == 0 && m.inflight > 0 {
		consider(m.connectAt)
	}
	if m.cfg.Serial {
		for id := range m.attempts {
			if a := &m.attempts[id]; a.open && a.deadline > 0 {
				consider(a.deadline)
			}
		}
	}
	// A deadline already reached is re-armed too, so that the driver
	// wakes again rather than wait on a timer that has fired.
	if next != m.timerAt || next != noTimer && next <= now {
		m.timerAt = next
		m.emit(Action{Kind: ActionArmTimer, At: next})
	}
}

func (m *Machine) emit(a Action) { m.acts = append(m.acts, a) }

// tracing reports whether the race's steps are traced or recorded (what
// an event costs to build is paid only then).
func (m *Machine) tracing() bool { return m.cfg.Trace != nil || m.cfg.Record != nil }

func (m *Machine) trace(now time.Duration, ev TraceEvent) {
	if !m.tracing() {
		return
	}
	ev.At = now - m.start
	if m.cfg.Record != nil {
		m.cfg.Record.Events = append(m.cfg.Record.Events, ev)
	}
	if m.cfg.Trace != nil {
		m.cfg.Trace(ev)
	}
}
