package engine

import (
	"context"
	"io"
	"net"
	"net/netip"
	"strconv"
	"sync"
	"testing"
	"time"

	"golang.org/x/sys/unix"

	"github.com/hev2/hev2/internal/race"
	"github.com/hev2/hev2/internal/render"
	"github.com/hev2/hev2/tests/loopbacktest"
)

// httpsResolver answers A with 127.0.0.1 and HTTPS with records, and
// remembers the HTTPS names it was asked.
type httpsResolver struct {
	records []race.ServiceRecord
	mu      sync.Mutex
	asked   []string
}

func (r *httpsResolver) LookupFamily(_ context.Context, host string, f Family) ([]netip.Addr, error) {
	if f == IPv4 {
		return []netip.Addr{netip.MustParseAddr("127.0.0.1")}, nil
	}
	return nil, &ResolveError{Host: host, Family: f, Code: EAI_NODATA}
}

func (r *httpsResolver) LookupHTTPS(_ context.Context, name string) (*race.ServiceAnswer, error) {
	r.mu.Lock()
	r.asked = append(r.asked, name)
	r.mu.Unlock()
	return &race.ServiceAnswer{Records: r.records}, nil
}

// Through each driver, a service's port redirects the connection away from
// the origin's (refusing) port, and the outcome names the service.
func TestHTTPSRecordRedirectsThePortThroughEveryDriver(t *testing.T) {
	checkLeaks(t)
	ln := echoListener(t, "127.0.0.1:0")
	servicePort := uint16(portOf(ln))
	originPort := uint16(loopbacktest.Refusing(t, "127.0.0.1"))
	res := &httpsResolver{records: []race.ServiceRecord{{Priority: 1, Target: ".", Port: servicePort, ALPN: []string{"h2"}}}}
	d := Options{Resolver: res, HTTPSRR: true, DisableHistory: true, DisableNAT64: true}
	want := netip.AddrPortFrom(netip.MustParseAddr("127.0.0.1"), servicePort)
	check := func(driver string, r *Result, err error) {
		t.Helper()
		if err != nil {
			t.Fatalf("%s: %v", driver, err)
		}
		s := r.HTTPS.WinnerService()
		if r.Addr != want || s == nil || s.Port != servicePort || r.HTTPS.State != race.HTTPSAnswered {
			t.Fatalf("%s: won %v with service %+v (state %v), want %v through the service", driver, r.Addr, s, r.HTTPS.State, want)
		}
	}

	recorded := d
	recorded.Record = true
	r, err := recorded.Connect(context.Background(), "svc.test", originPort)
	if err == nil {
		unix.Close(r.FD)
	}
	check("library", r, err)
	// The HTTPS part's steps keep the trace a report and every file is
	// built from.
	if _, err := r.Report(); err != nil {
		t.Fatalf("report of an HTTPS race: %v", err)
	}
	for _, f := range []func(io.Writer, []TraceEvent, render.Meta) error{render.WriteSVG, render.WriteQlog, render.WriteChromeTrace} {
		if err := f(io.Discard, r.Trace.Events, d.TraceMeta("svc.test", originPort)); err != nil {
			t.Fatalf("trace file of an HTTPS race: %v", err)
		}
	}

	w, err := d.StartWaiter("svc.test", originPort, nil)
	if err != nil {
		t.Fatal(err)
	}
	w.Wait(time.Time{})
	r, err = w.Result()
	if err == nil {
		unix.Close(r.FD)
	}
	check("waiter", r, err)

	c, r, err := d.DialConn(context.Background(), "tcp", net.JoinHostPort("svc.test", strconv.Itoa(int(originPort))), true)
	if err == nil {
		c.Close()
	}
	check("netpoller", r, err)

	wantName := "_" + strconv.Itoa(int(originPort)) + "._https.svc.test."
	res.mu.Lock()
	defer res.mu.Unlock()
	for _, n := range res.asked {
		if n != wantName {
			t.Fatalf("HTTPS queries %v, want %s (RFC 9460 §9.1)", res.asked, wantName)
		}
	}
}

// No HTTPS query without the option, nor for a literal or a Hosts entry.
func TestHTTPSQueryOnlyWhenAskedAndForNames(t *testing.T) {
	ln := echoListener(t, "127.0.0.1:0")
	port := uint16(portOf(ln))
	res := &httpsResolver{}
	for _, c := range []struct {
		d    Options
		host string
	}{
		{Options{Resolver: res}, "svc.test"},
		{Options{Resolver: res, HTTPSRR: true}, "127.0.0.1"},
		{Options{Resolver: res, HTTPSRR: true, Hosts: map[string][]netip.Addr{"static.test": {netip.MustParseAddr("127.0.0.1")}}}, "static.test"},
	} {
		r, err := c.d.Connect(context.Background(), c.host, port)
		if err != nil {
			t.Fatal(err)
		}
		unix.Close(r.FD)
		if r.HTTPS != nil {
			t.Fatalf("%s (https_rr %v): an HTTPS outcome %+v", c.host, c.d.HTTPSRR, r.HTTPS)
		}
	}
	if len(res.asked) != 0 {
		t.Fatalf("HTTPS queries %v, want none", res.asked)
	}
}

func TestALPNRule(t *testing.T) {
	for _, alpn := range [][]string{{""}, {"h2,h3"}, {string(make([]byte, 256))}} {
		d := Options{ALPN: alpn}
		if err := d.Validate(); err == nil {
			t.Errorf("ALPN %q accepted", alpn)
		}
	}
	if err := (&Options{ALPN: []string{"h2", "http/1.1"}}).Validate(); err != nil {
		t.Fatal(err)
	}
}
