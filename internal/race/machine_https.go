package race

import (
	"errors"
	"math/rand/v2"
	"net/netip"
	"slices"
	"strconv"
	"strings"
	"time"
)

// The machine's Happy Eyeballs v3 part: the HTTPS query (RFC 9460) beside
// the address queries. It runs only when MachineConfig.HTTPS is set; every
// other race never enters it. Its rules, from RFC 9460 and
// draft-ietf-happy-happyeyeballs-v3:
//
//   - AliasMode is followed, at most AliasLimit times; a chain that ends
//     without ServiceMode records uses its last target's addresses.
//   - A ServiceMode target of "." is the record's owner (for a
//     port-prefixed owner, "_PORT._https.HOST", the origin HOST).
//   - A record whose mandatory keys include one the race does not know is
//     ignored; so is one whose ALPN set (alpn, plus http/1.1 unless
//     no-default-alpn) shares no protocol with the caller's list.
//   - port redirects the connection; ipv4hint/ipv6hint are tried until
//     the target's own A/AAAA answer, which replaces the untried hints.
//   - Services are tried by priority (lower first), equal priorities
//     shuffled; the origin's own A/AAAA come last.
//   - No attempt starts while the HTTPS answer is pending, for at most the
//     Resolution Delay once an address answer is in; a later answer joins
//     the race as new endpoints. With ECH, no attempt starts before it is
//     final (ECHWait), and when every service carries ECH the origin's
//     addresses are not used.

// httpsState is the machine's state of the HTTPS part (in HTTPSConfig).
type httpsState struct {
	out     HTTPSOutcome
	lookups []serviceLookup // Action.Lookup n is lookups[n-1]
	owner   string          // the owner of the RRset asked for last
	aliases int
	final   bool
	// addrsAt is when the first address answer came in (-1: none yet):
	// from then the HTTPS answer is waited for at most the Resolution
	// Delay (ECHWait with ECH).
	addrsAt  time.Duration
	noOrigin bool // every service carries ECH
	rng      *rand.Rand
}

// serviceLookup is one lookup of the HTTPS part: an HTTPS query (of the
// query name or an alias target) or a service target's addresses.
type serviceLookup struct {
	name    string
	query   QueryKind
	pending bool
}

// ServiceEndpointOrigin values: where an endpoint of the HTTPS part came
// from (endpoint.origin).
const (
	// OriginHint: a service's ipv4hint or ipv6hint.
	OriginHint Origin = OriginSynthesized + 1 + iota
	// OriginService: the A/AAAA answer of a service's target.
	OriginService
)

func (m *Machine) https() *httpsState { return &m.cfg.HTTPS.svc }

// LookupName is the name service lookup n asks about (Action.Lookup).
func (m *Machine) LookupName(n uint8) string {
	if m.cfg.HTTPS == nil || n == 0 || int(n) > len(m.cfg.HTTPS.svc.lookups) {
		return m.cfg.Host
	}
	return m.cfg.HTTPS.svc.lookups[n-1].name
}

// HTTPS is what the HTTPS query gave the race (nil when none was made).
func (m *Machine) HTTPS() *HTTPSOutcome {
	if m.cfg.HTTPS == nil {
		return nil
	}
	return &m.cfg.HTTPS.svc.out
}

func (m *Machine) startHTTPS(now time.Duration) {
	c := m.cfg.HTTPS
	s := &c.svc
	*s = httpsState{addrsAt: -1, out: HTTPSOutcome{Winner: -1}}
	seed := c.Seed
	s.rng = rand.New(rand.NewPCG(seed, seed^0x9e3779b97f4a7c15))
	s.owner = fqdn(c.Name)
	m.startServiceLookup(now, s.owner, QueryHTTPS)
}

func (m *Machine) startServiceLookup(now time.Duration, name string, q QueryKind) {
	s := m.https()
	for i := range s.lookups {
		if l := &s.lookups[i]; l.query == q && sameName(l.name, name) {
			return // asked already (two services with one target)
		}
	}
	if len(s.lookups) >= 255 {
		return // Action.Lookup numbers them in a byte
	}
	s.lookups = append(s.lookups, serviceLookup{name: name, query: q, pending: true})
	n := uint8(len(s.lookups))
	m.emit(Action{Kind: ActionStartLookup, Query: q, Lookup: n})
	m.trace(now, TraceEvent{Kind: TraceServiceLookupStarted, Query: q, Detail: name})
}

// serviceLookupDone takes the answer of service lookup n.
func (m *Machine) serviceLookupDone(now time.Duration, n uint8, ev *Event) {
	if m.cfg.HTTPS == nil || n == 0 || int(n) > len(m.https().lookups) || m.done {
		return
	}
	s := m.https()
	l := &s.lookups[n-1]
	if !l.pending {
		return
	}
	l.pending = false
	if l.query == QueryHTTPS {
		ans, _ := ev.Answer.(*ServiceAnswer)
		m.httpsAnswered(now, l.name, ans, ev.Err)
		return
	}
	f := l.query.Family()
	addrs := addrsOfFamily(ev.Addrs, f)
	err := ev.Err
	if err == nil && len(addrs) == 0 {
		err = &ResolveError{Host: strings.TrimSuffix(l.name, "."), Family: f, Code: EAI_NODATA}
	}
	if err != nil {
		m.trace(now, TraceEvent{Kind: TraceServiceLookupFailed, Query: l.query, Detail: l.name, Err: err})
		return
	}
	m.trace(now, TraceEvent{Kind: TraceServiceLookupAnswered, Query: l.query, Detail: l.name, Addrs: addrs})
	m.targetAnswered(now, l.name, f, addrs)
}

// httpsAnswered applies the answer (or failure) of the HTTPS query of
// name.
func (m *Machine) httpsAnswered(now time.Duration, name string, ans *ServiceAnswer, err error) {
	s := m.https()
	c := m.cfg.HTTPS
	if err != nil {
		m.trace(now, TraceEvent{Kind: TraceServiceLookupFailed, Query: QueryHTTPS, Detail: name, Err: err})
		state := httpsStateOf(err)
		if s.aliases > 0 && (state == HTTPSNoData || state == HTTPSNXDomain) {
			// RFC 9460 §2.4.2: an alias chain that ends without
			// ServiceMode records leads to its last target's addresses.
			m.useServices(now, []ServiceRecord{{Priority: 1, Target: name}}, name)
			return
		}
		m.httpsFinal(now, state)
		return
	}
	if ans == nil {
		ans = &ServiceAnswer{}
	}
	m.trace(now, TraceEvent{Kind: TraceServiceLookupAnswered, Query: QueryHTTPS, Detail: name, Attempt: len(ans.Records), Err: nil})
	if ans.Alias != "" && ans.Alias != "." {
		limit := c.AliasLimit
		if limit <= 0 {
			limit = DefaultAliasLimit
		}
		if s.aliases >= limit || sameName(ans.Alias, name) {
			m.httpsFinal(now, HTTPSAliasLimit)
			return
		}
		s.aliases++
		s.owner = fqdn(ans.Alias)
		m.startServiceLookup(now, s.owner, QueryHTTPS)
		return
	}
	if len(ans.Records) == 0 {
		state := HTTPSNoData
		if ans.Malformed > 0 {
			state = HTTPSMalformed
		}
		if s.aliases > 0 && state == HTTPSNoData {
			m.useServices(now, []ServiceRecord{{Priority: 1, Target: name}}, name)
			return
		}
		m.httpsFinal(now, state)
		return
	}
	m.useServices(now, ans.Records, name)
}

// httpsStateOf names how a failed HTTPS query ended.
func httpsStateOf(err error) HTTPSState {
	var te *TimeoutError
	if errors.As(err, &te) {
		return HTTPSTimeout
	}
	var timeout interface{ Timeout() bool }
	if errors.As(err, &timeout) && timeout.Timeout() {
		return HTTPSTimeout
	}
	var re *ResolveError
	if errors.As(err, &re) {
		switch re.Code {
		case EAI_NONAME:
			return HTTPSNXDomain
		case EAI_NODATA:
			return HTTPSNoData
		}
	}
	return HTTPSFailed
}

// httpsFinal ends the HTTPS query with state and no service.
func (m *Machine) httpsFinal(now time.Duration, state HTTPSState) {
	s := m.https()
	s.final = true
	s.out.State = state
	m.trace(now, TraceEvent{Kind: TraceServiceState, Detail: state.String()})
}

// useServices turns the ServiceMode records of owner's RRset into the
// race's services, applying the rules, and admits their endpoints.
func (m *Machine) useServices(now time.Duration, records []ServiceRecord, owner string) {
	s := m.https()
	c := m.cfg.HTTPS
	type candidate struct {
		rec ServiceRecord
		svc Service
	}
	var usable []candidate
	for _, r := range records {
		svc, why := m.serviceOf(r, owner)
		if why != "" {
			if m.tracing() {
				rec := &Service{Priority: r.Priority, Target: r.Target, Port: r.Port}
				m.trace(now, TraceEvent{Kind: TraceServiceSkipped, Detail: strings.TrimSuffix(r.Target, ".") + ": " + why, Service: rec})
			}
			continue
		}
		usable = append(usable, candidate{r, svc})
	}
	// Lower priority first; equal priorities shuffled (RFC 9460 §2.4.1),
	// from the race's seed.
	s.rng.Shuffle(len(usable), func(i, j int) { usable[i], usable[j] = usable[j], usable[i] })
	slices.SortStableFunc(usable, func(a, b candidate) int { return int(a.rec.Priority) - int(b.rec.Priority) })
	if len(usable) > 254 {
		usable = usable[:254] // endpoint.service numbers them in a byte
	}
	s.final = true
	s.out.State = HTTPSAnswered
	allECH := len(usable) > 0
	for _, u := range usable {
		s.out.Services = append(s.out.Services, u.svc)
		allECH = allECH && len(u.svc.ECH) > 0
	}
	m.trace(now, TraceEvent{Kind: TraceServiceState, Detail: HTTPSAnswered.String(), Attempt: len(usable)})
	for k, u := range usable {
		if m.tracing() {
			svc := &s.out.Services[k]
			m.trace(now, TraceEvent{Kind: TraceServiceAdded, Attempt: k + 1, Detail: describeService(svc), Addrs: m.hintsUsed(u.rec, svc), Service: svc})
		}
	}
	if c.ECH && allECH {
		s.noOrigin = true
		m.dropUntried(func(e *endpoint) bool { return e.service == 0 })
	}
	added := false
	for k, u := range usable {
		idx := uint8(k + 1)
		port := u.svc.Port
		if port == 0 {
			port = m.cfg.Port
		}
		if sameName(u.svc.Target, m.cfg.Host) {
			// The origin's own addresses serve this service: those
			// already in, and those to come (admitOrigin).
			for i := range m.lookups {
				if info := &m.lookups[i].info; info.Done && info.Err == nil {
					for _, a := range info.Addrs {
						added = m.admitOne(now, endpoint{addr: a, port: port, origin: OriginService, service: idx}) || added
					}
				}
			}
		} else {
			for _, q := range m.addressQueries() {
				m.startServiceLookup(now, u.svc.Target, q)
			}
		}
		for _, a := range m.hintsUsed(u.rec, &u.svc) {
			added = m.admitOne(now, endpoint{addr: a, port: port, origin: OriginHint, service: idx, hint: true}) || added
		}
	}
	if added {
		m.reorder()
	}
}

// hintsUsed are the address hints of rec the race tries for svc: those of
// the families it asks, unless the target is the origin whose answer of
// that family is in already (the hints are not needed then).
func (m *Machine) hintsUsed(rec ServiceRecord, svc *Service) []netip.Addr {
	var out []netip.Addr
	for _, q := range m.addressQueries() {
		hints := rec.IPv4Hint
		if q == QueryAAAA {
			hints = rec.IPv6Hint
		}
		if sameName(svc.Target, m.cfg.Host) && m.lookups[q.Index()].info.Done {
			continue
		}
		out = append(out, addrsOfFamily(hints, q.Family())...)
	}
	return out
}

// addressQueries are the address lookups the race makes (its family
// restriction applies to services too).
func (m *Machine) addressQueries() []QueryKind {
	if m.cfg.Queries != nil {
		return m.cfg.Queries
	}
	return AddressQueries[:]
}

// serviceOf applies the rules to one ServiceMode record; why says why it
// is not usable ("" when it is).
func (m *Machine) serviceOf(r ServiceRecord, owner string) (Service, string) {
	for _, k := range r.Mandatory {
		if k > KeyIPv6Hint {
			return Service{}, "mandatory key" + strconv.Itoa(int(k)) + " unknown"
		}
		if !slices.Contains(r.Keys, k) {
			// RFC 9460 §8: a record that lists a mandatory key it does
			// not carry is malformed.
			return Service{}, "mandatory key" + strconv.Itoa(int(k)) + " absent"
		}
	}
	alpn := slices.Clone(r.ALPN)
	if !r.NoDefaultALPN && !slices.Contains(alpn, "http/1.1") {
		alpn = append(alpn, "http/1.1")
	}
	shared := false
	for _, p := range m.cfg.HTTPS.ALPN {
		if slices.Contains(alpn, p) {
			shared = true
			break
		}
	}
	if !shared {
		return Service{}, "no protocol in common (" + strings.Join(alpn, ",") + ")"
	}
	target := r.Target
	if target == "." || target == "" {
		target = owner
		if strings.HasPrefix(owner, "_") && sameName(owner, QueryName(m.cfg.Host, m.cfg.Port)) {
			// A port-prefixed owner is no host: "." there means the
			// origin.
			target = fqdn(m.cfg.Host)
		}
	}
	return Service{Priority: r.Priority, Target: fqdn(target), Port: r.Port, ALPN: alpn, ECH: r.ECH}, ""
}

// describeService is a service's one-line account for the trace.
func describeService(s *Service) string {
	var b strings.Builder
	b.WriteString("priority ")
	b.WriteString(strconv.Itoa(int(s.Priority)))
	b.WriteString(" target ")
	b.WriteString(s.Target)
	if s.Port != 0 {
		b.WriteString(" port ")
		b.WriteString(strconv.Itoa(int(s.Port)))
	}
	b.WriteString(" alpn ")
	b.WriteString(strings.Join(s.ALPN, ","))
	if len(s.ECH) > 0 {
		b.WriteString(" ech")
	}
	return b.String()
}

// admitOrigin is the HTTPS part's view of an origin address answer: the
// origin's own endpoints (unless every service carries ECH), and the
// endpoints of the services whose target is the origin.
func (m *Machine) admitOrigin(now time.Duration, addrs []netip.Addr) {
	s := m.https()
	if s.addrsAt < 0 {
		s.addrsAt = now
	}
	added := false
	if !s.noOrigin {
		for _, a := range addrs {
			added = m.admitOne(now, endpoint{addr: a, port: m.cfg.Port, origin: OriginDNS}) || added
		}
	}
	if len(addrs) > 0 {
		f := FamilyOf(addrs[0])
		for k := range s.out.Services {
			svc := &s.out.Services[k]
			if !sameName(svc.Target, m.cfg.Host) {
				continue
			}
			added = m.replaceHints(now, uint8(k+1), svc, f, addrs) || added
		}
	}
	if added {
		m.reorder()
	}
}

// targetAnswered gives the services whose target is name their
// addresses of family f, in place of their untried hints.
func (m *Machine) targetAnswered(now time.Duration, name string, f Family, addrs []netip.Addr) {
	s := m.https()
	added := false
	for k := range s.out.Services {
		svc := &s.out.Services[k]
		if sameName(svc.Target, name) {
			added = m.replaceHints(now, uint8(k+1), svc, f, addrs) || added
		}
	}
	if added {
		m.reorder()
	}
}

// replaceHints drops service idx's untried hints of family f and admits
// addrs as its endpoints.
func (m *Machine) replaceHints(now time.Duration, idx uint8, svc *Service, f Family, addrs []netip.Addr) bool {
	m.dropUntried(func(e *endpoint) bool {
		drop := e.service == idx && e.hint && familyOfEndpoint(e) == f
		if drop {
			m.trace(now, TraceEvent{Kind: TraceEndpointRemoved, Addr: e.addrPort(), Attempt: int(idx)})
		}
		return drop
	})
	port := svc.Port
	if port == 0 {
		port = m.cfg.Port
	}
	added := false
	for _, a := range addrs {
		added = m.admitOne(now, endpoint{addr: a, port: port, origin: OriginService, service: idx}) || added
	}
	return added
}

func familyOfEndpoint(e *endpoint) Family {
	if e.from.IsValid() {
		return FamilyOf(e.from)
	}
	return FamilyOf(e.addr)
}

// dropUntried removes the untried endpoints drop selects.
func (m *Machine) dropUntried(drop func(e *endpoint) bool) {
	kept := m.endpoints[:0]
	for i := range m.endpoints {
		e := m.endpoints[i]
		if !e.tried && drop(&e) {
			m.untried--
			continue
		}
		kept = append(kept, e)
	}
	if len(kept) != len(m.endpoints) {
		m.endpoints = kept
		m.reorder()
	}
}

// httpsHolds reports whether attempts wait for the HTTPS answer at now,
// and until when (for the timer).
func (m *Machine) httpsHolds(now time.Duration) (bool, time.Duration) {
	if m.cfg.HTTPS == nil {
		return false, noTimer
	}
	s := m.https()
	if s.final {
		return false, noTimer
	}
	if s.addrsAt < 0 {
		// Nothing to try but hints, which come with the answer.
		return true, noTimer
	}
	wait := m.cfg.ResolutionDelay
	if m.cfg.HTTPS.ECH {
		if m.cfg.HTTPS.ECHWait <= 0 {
			return true, noTimer
		}
		wait = m.cfg.HTTPS.ECHWait
	}
	until := s.addrsAt + wait
	return now < until, until
}

// servicePending reports whether a lookup of the HTTPS part is pending.
func (m *Machine) servicePending() bool {
	if m.cfg.HTTPS == nil {
		return false
	}
	for i := range m.https().lookups {
		if m.https().lookups[i].pending {
			return true
		}
	}
	return false
}

// endServiceLookups cancels the pending lookups of the HTTPS part (the race
// is over, or resolution timed out with err).
func (m *Machine) endServiceLookups(now time.Duration, err error) {
	if m.cfg.HTTPS == nil {
		return
	}
	s := m.https()
	for i := range s.lookups {
		l := &s.lookups[i]
		if !l.pending {
			continue
		}
		l.pending = false
		m.emit(Action{Kind: ActionCancelLookup, Query: l.query, Lookup: uint8(i + 1)})
		m.trace(now, TraceEvent{Kind: TraceServiceLookupCanceled, Query: l.query, Detail: l.name})
	}
	if !s.final {
		state := HTTPSTimeout
		if err == nil {
			state = HTTPSPending // the race ended first: no state to give
		}
		s.final = true
		s.out.State = state
	}
}
