package resolvertest_test

import (
	"net/netip"
	"runtime"
	"testing"

	"github.com/miekg/dns"

	"github.com/hev2/hev2/internal/resolve"
	"github.com/hev2/hev2/tests/resolvertest"
	"github.com/hev2/hev2/tests/testdns"
)

// 2,000 connects to names whose DNS never answers, released, through the
// handles the C ABI uses (their lookups are the system resolver's
// asynchronous ones): the process stays under 300 threads, and connects to
// a hosts-file name and a healthy name made right after are not held up.
func TestConnectBurstToSilentNamesHoldsFewThreads(t *testing.T) {
	ns, srv := testNamespace(t, resolvertest.Stack{})
	srv.Set("*.silent.test", 0, testdns.Behaviour{Never: true})
	srv.Set("good.test", dns.TypeA, testdns.Behaviour{Addrs: []netip.Addr{netip.MustParseAddr("127.0.0.1")}})
	srv.Set("good.test", dns.TypeAAAA, testdns.Behaviour{})
	if err := ns.WriteEtc("hosts", resolvertest.Hosts+"127.0.0.1 hosted.test\n"); err != nil {
		t.Fatal(err)
	}
	// glibc's longest timeout: every abandoned call must still be inside
	// glibc when the connects after the burst are made, and a loaded
	// machine under -race took 12 s to get there (the child exits
	// without waiting for them).
	if err := ns.WriteEtc("resolv.conf", "nameserver 127.0.0.1\noptions timeout:30 attempts:1\n"); err != nil {
		t.Fatal(err)
	}
	const n = 2000
	var rep connectBurstReport
	inChild(t, ns, childArgs{Mode: "connectburst", Host: "silent.test", N: n, Port: 8080}, &rep)
	t.Logf("burst: %v; handed over %d; hosts-file connect %.1f ms (%s%s), DNS connect %.1f ms (%s%s); in glibc then: %d; "+
		"pool threads at most %d, process threads %d -> at most %d",
		rep.Outcomes, rep.Stats.HandedOver, rep.HostsFile.ElapsedMS, rep.HostsFile.Addr, rep.HostsFile.Err,
		rep.Healthy.ElapsedMS, rep.Healthy.Addr, rep.Healthy.Err, rep.BusyAfterHealthy,
		rep.MaxPoolThreads, rep.Baseline, rep.MaxThreads)
	if rep.Outcomes["released"] != n {
		t.Errorf("the burst ended otherwise: %v", rep.Outcomes)
	}
	for _, c := range []connectReport{rep.HostsFile, rep.Healthy} {
		// About a millisecond; the bound leaves a loaded machine room and
		// lies far below glibc's 10 s timeout.
		if c.Addr != "127.0.0.1" || c.ElapsedMS > 1000 {
			t.Errorf("a connect after the burst: %+v", c)
		}
	}
	if rep.BusyAfterHealthy == 0 {
		t.Errorf("the abandoned calls had all returned before the connects after the burst (%+v)", rep)
	}
	if rep.Stats.HandedOver == 0 || rep.MaxPoolThreads > resolve.HandOverAt()+runtime.GOMAXPROCS(0) {
		t.Errorf("%d lookups handed over, %d getaddrinfo threads at most (hand-over at %d)",
			rep.Stats.HandedOver, rep.MaxPoolThreads, resolve.HandOverAt())
	}
	if rep.MaxThreads > 300 {
		t.Errorf("the process reached %d threads", rep.MaxThreads)
	}
}
