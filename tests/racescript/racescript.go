// Package racescript plays scripted races on the race machine under a fake
// clock: the script says what the network does and when (answers,
// refusals, connects), the runner fires the machine's timers at the times
// it armed them, and the result is the race's trace, the same events a
// real driver records. The same script always gives the same trace, which
// is what the trace writers' tests (internal/render) and the browser
// check of the pictures (make test-render) are built on.
package racescript

import (
	"errors"
	"net/netip"
	"syscall"
	"time"

	"github.com/hev2/hev2/internal/race"
	"github.com/hev2/hev2/internal/render"
)

// At is one thing the network does at a moment (milliseconds since the
// race started).
type At struct {
	MS int
	Ev race.Event
}

// Script is a named race.
type Script struct {
	Name string
	// Config changes the RFC-default configuration (timeouts, delays).
	Config func(*race.MachineConfig)
	Steps  []At
}

// Host and Port are every script's target.
const (
	Host = "race.hev2.test"
	Port = 443
)

// Config is the RFC-default machine configuration the scripts start from,
// with a sorter that prefers IPv6 (as RFC 6724 does for global addresses).
func Config() race.MachineConfig {
	return race.MachineConfig{
		Host:                    Host,
		Port:                    Port,
		Queries:                 race.AddressQueries[:],
		ResolutionDelay:         race.DefaultResolutionDelay,
		ConnectionAttemptDelay:  race.DefaultConnectionAttemptDelay,
		FirstAddressFamilyCount: race.DefaultFirstAddressFamilyCount,
		Sort: func(a []netip.Addr, nat64 []netip.Prefix) []netip.Addr {
			return race.SortRFC6724NAT64(a, func(dst netip.Addr) (netip.Addr, bool) {
				if dst.Is4() {
					return netip.MustParseAddr("198.18.0.129"), true
				}
				return netip.MustParseAddr("2001:db8::8000:0:0:1"), true
			}, nat64)
		},
	}
}

// Run plays s and returns its trace and the configuration it ran with.
func Run(s Script) ([]race.TraceEvent, race.MachineConfig) {
	cfg := Config()
	if s.Config != nil {
		s.Config(&cfg)
	}
	var trace []race.TraceEvent
	cfg.Trace = func(ev race.TraceEvent) { trace = append(trace, ev) }
	m := race.NewMachine(cfg)
	timer := time.Duration(-1)
	handle := func(acts []race.Action) {
		for _, a := range acts {
			if a.Kind == race.ActionArmTimer {
				timer = a.At
			}
		}
	}
	fire := func(until time.Duration) {
		for timer >= 0 && timer <= until && !m.Done() {
			at := timer
			timer = -1
			handle(m.Step(at))
		}
	}
	handle(m.Start(0))
	for _, st := range s.Steps {
		at := ms(st.MS)
		fire(at)
		if m.Done() {
			break
		}
		handle(m.Step(at, st.Ev))
	}
	fire(time.Duration(1<<62 - 1))
	return trace, cfg
}

// Scripts are the races every writer is tested on: the demo's fallback,
// the Resolution Delay, a failed lookup, eight attempts, total failure,
// the caller's timeouts and a cancel.
func Scripts() []Script {
	return []Script{
		{Name: "ipv6-blackhole-ipv4-wins", Steps: []At{
			{5, answered(race.IPv6, v6(0xa))},
			{6, answered(race.IPv4, v4(10))},
			{262, connected(1)},
		}},
		{Name: "a-first-resolution-delay", Steps: []At{
			{10, answered(race.IPv4, v4(10), v4(11))},
			{40, answered(race.IPv6, v6(0xa))},
			{45, failed(0, syscall.ECONNREFUSED)},
			{52, connected(1)},
		}},
		{Name: "aaaa-nodata-a-wins", Steps: []At{
			{4, lookupFailed(race.IPv6, race.EAI_NODATA)},
			{7, answered(race.IPv4, v4(10))},
			{9, connected(0)},
		}},
		{Name: "eight-attempts", Steps: []At{
			{3, answered(race.IPv6, v6(0xa), v6(0xb), v6(0xc), v6(0xd))},
			{8, answered(race.IPv4, v4(10), v4(11), v4(12), v4(13))},
			{260, failed(1, syscall.ECONNREFUSED)},
			{270, failed(2, syscall.ENETUNREACH)},
			{530, failed(3, syscall.ECONNREFUSED)},
			{790, failed(4, syscall.EHOSTUNREACH)},
			{800, connected(7)},
		}},
		// The widest labels a race of 8 attempts can have: full-length
		// IPv6 addresses and long errno names on every row.
		{Name: "eight-attempts-long-addresses", Steps: []At{
			{3, answered(race.IPv6, long6(1), long6(2), long6(3), long6(4))},
			{4, answered(race.IPv4, v4(201), v4(202), v4(203), v4(204))},
			{10, failed(0, syscall.EADDRNOTAVAIL)},
			{20, failed(1, syscall.ENETUNREACH)},
			{30, failed(2, syscall.EHOSTUNREACH)},
			{40, failed(3, syscall.ECONNREFUSED)},
			{50, failed(4, syscall.EADDRNOTAVAIL)},
			{60, failed(5, syscall.ENETUNREACH)},
			{70, failed(6, syscall.EHOSTUNREACH)},
			{80, failed(7, syscall.ETIMEDOUT)},
		}},
		{Name: "all-refused", Steps: []At{
			{2, answered(race.IPv6, v6(0xa))},
			{3, answered(race.IPv4, v4(10))},
			{4, failed(0, syscall.ECONNREFUSED)},
			{5, failed(1, syscall.ECONNREFUSED)},
		}},
		{Name: "connect-timeout", Config: func(c *race.MachineConfig) { c.ConnectTimeout = 400 * time.Millisecond }, Steps: []At{
			{2, answered(race.IPv6, v6(0xa))},
			{3, lookupFailed(race.IPv4, race.EAI_NODATA)},
		}},
		{Name: "resolv-timeout-aaaa-silent", Config: func(c *race.MachineConfig) { c.ResolvTimeout = 300 * time.Millisecond }, Steps: []At{
			{5, answered(race.IPv4, v4(10))},
			{400, connected(0)},
		}},
		{Name: "canceled", Steps: []At{
			{3, answered(race.IPv6, v6(0xa))},
			{4, answered(race.IPv4, v4(10))},
			{120, race.Event{Kind: race.EventCancel, Err: errors.New("canceled by the caller")}},
		}},
	}
}

func ms(n int) time.Duration { return time.Duration(n) * time.Millisecond }

func v6(last byte) netip.Addr {
	b := netip.MustParseAddr("2001:db8::").As16()
	b[15] = last
	return netip.AddrFrom16(b)
}

// long6 is an IPv6 address with no zero group to compress: the longest
// text an address of the race has.
func long6(n byte) netip.Addr {
	return netip.MustParseAddr("2001:db8:1234:5678:9abc:def0:4321:ab0" + string('0'+rune(n)))
}

func v4(last byte) netip.Addr { return netip.AddrFrom4([4]byte{198, 18, 0, last}) }

func answered(f race.Family, addrs ...netip.Addr) race.Event {
	return race.Event{Kind: race.EventLookupDone, Query: race.QueryFor(f), Addrs: addrs}
}

func lookupFailed(f race.Family, code int) race.Event {
	return race.Event{Kind: race.EventLookupDone, Query: race.QueryFor(f), Err: &race.ResolveError{Host: Host, Family: f, Code: code}}
}

func connected(id int) race.Event { return race.Event{Kind: race.EventAttemptDone, Attempt: id} }

func failed(id int, e syscall.Errno) race.Event {
	return race.Event{Kind: race.EventAttemptDone, Attempt: id, Err: e}
}

// Meta is the trace files' description of a script's race.
func Meta(cfg race.MachineConfig) render.Meta {
	return render.Meta{Host: cfg.Host, Port: cfg.Port, SessionID: "1",
		ResolutionDelay: cfg.ResolutionDelay, ConnectionAttemptDelay: cfg.ConnectionAttemptDelay,
		FirstAddressFamilyCount: cfg.FirstAddressFamilyCount}
}
