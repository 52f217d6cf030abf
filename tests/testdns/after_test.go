package testdns

import (
	"net/netip"
	"testing"
	"time"

	"github.com/miekg/dns"
)

// TestAfterName: an AAAA gated on the same race's HTTPS answer is written
// only after it (however long the HTTPS answer takes), the n-th after
// the n-th; Delay counts from the gate.
func TestAfterName(t *testing.T) {
	srv, err := ServeLoopback()
	if err != nil {
		t.Fatal(err)
	}
	defer srv.Close()
	v6 := netip.MustParseAddr("2001:db8::10")
	srv.Set("_8080._https.x.test", dns.TypeHTTPS, Behaviour{Delay: 150 * time.Millisecond,
		HTTPS: []HTTPSRecord{{Priority: 1, Target: "."}}})
	srv.Set("x.test", dns.TypeAAAA, Behaviour{Addrs: []netip.Addr{v6}, AfterName: "_8080._https.x.test.", AfterType: dns.TypeHTTPS})
	srv.Set("y.test", dns.TypeAAAA, Answer(v6))
	srv.Set("z.test", dns.TypeHTTPS, Behaviour{Delay: 100 * time.Millisecond, AfterName: "y.test", AfterType: dns.TypeAAAA,
		HTTPS: []HTTPSRecord{{Priority: 1, Target: "."}}})

	c := new(dns.Client)
	ask := func(name string, qtype uint16, done chan<- time.Time) {
		m := new(dns.Msg)
		m.SetQuestion(dns.Fqdn(name), qtype)
		if _, _, err := c.Exchange(m, srv.Addr.String()); err != nil {
			t.Error(err)
		}
		done <- time.Now()
	}
	for round := range 2 {
		aaaa, https := make(chan time.Time, 1), make(chan time.Time, 1)
		start := time.Now()
		go ask("x.test", dns.TypeAAAA, aaaa)
		time.Sleep(20 * time.Millisecond)
		go ask("_8080._https.x.test", dns.TypeHTTPS, https)
		// The HTTPS answer is written 170 ms in, and the AAAA only
		// after it (the client's receipts are not ordered finer).
		if got := (<-aaaa).Sub(start); got < 165*time.Millisecond {
			t.Errorf("round %d: the gated AAAA came %v in, before the HTTPS answer (170 ms) it waits for", round, got)
		}
		<-https
	}
	// The gate first, then Delay.
	start := time.Now()
	first, second := make(chan time.Time, 1), make(chan time.Time, 1)
	go ask("z.test", dns.TypeHTTPS, second)
	time.Sleep(50 * time.Millisecond)
	go ask("y.test", dns.TypeAAAA, first)
	tY, tZ := <-first, <-second
	if got := tZ.Sub(tY); got < 90*time.Millisecond {
		t.Errorf("HTTPS answered %v after the AAAA it follows, want its 100 ms delay from there (started %v ago)", got, time.Since(start))
	}
}
