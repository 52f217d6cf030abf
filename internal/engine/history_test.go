package engine

import (
	"github.com/hev2/hev2/internal/history"
	"net/netip"
	"strings"
	"testing"
	"time"

	"github.com/hev2/hev2/internal/netstate"
	"golang.org/x/sys/unix"
)

// withHistory turns the process-wide history on, empty, for one test.
func withHistory(t *testing.T) {
	t.Helper()
	if !netstate.Current().Known {
		t.Fatal("netstate does not know this network: history cannot apply")
	}
	ClearHistory()
	SetHistoryEnabled(true)
	t.Cleanup(func() { SetHistoryEnabled(false); ClearHistory() })
}

// Every driver reads and feeds the same history: ::1 drops SYNs and
// 127.0.0.1 accepts; the first race pays the attempt delay and records
// IPv6's loss, every later one (whatever its driver) goes IPv4 first.
func TestHistoryAcrossDrivers(t *testing.T) {
	withHistory(t)
	port := v6DropsV4Echoes(t)
	hosts := map[string][]netip.Addr{"dual.test": mustAddrs("::1", "127.0.0.1")}
	// IPv4 first wins before the attempt delay would start ::1: a delay
	// long enough that a driver scheduled late cannot get there first.
	d := Options{ConnectionAttemptDelay: 250 * time.Millisecond, Hosts: hosts}

	first := runLibrary(t, d, nil, "dual.test", port, "")
	want := []string{"attempt-started #0 ::1", "attempt-delay", "attempt-started #1 127.0.0.1", "attempt-won #1 127.0.0.1", "attempt-closed #0 ::1", "done"}
	if first.outcome != "won 127.0.0.1" || strings.Join(first.steps, "|") != strings.Join(want, "|") {
		t.Fatalf("first race: %s\n  %s", first.outcome, strings.Join(first.steps, "\n  "))
	}
	want = []string{"history ipv4", "attempt-started #0 127.0.0.1", "attempt-delay", "attempt-won #0 127.0.0.1", "done"}
	for name, run := range map[string]func(*testing.T, Options, *steps, string, int, string) driverRun{
		"library": runLibrary, "waiter": runWaiter, "netpoller": runNetpoller,
	} {
		r := run(t, d, nil, "dual.test", port, "")
		if r.outcome != "won 127.0.0.1" || strings.Join(r.steps, "|") != strings.Join(want, "|") {
			t.Fatalf("%s, after the loss: %s\n  %s", name, r.outcome, strings.Join(r.steps, "\n  "))
		}
	}

	res, err := d.Connect(t.Context(), "dual.test", uint16(port))
	if err != nil {
		t.Fatal(err)
	}
	unix.Close(res.FD)
	if h := res.History; h.First != IPv4 || !strings.HasPrefix(h.Reason, "IPv4 first: IPv6 to dual.test lost 1 race without connecting in the last 10m0s") {
		t.Fatalf("Result.History %+v", h)
	}
	st := HistoryStatistics()
	if st.Entries != 1 || st.Reordered < 4 || st.EntryBytes != history.EntryBytes {
		t.Fatalf("stats %+v", st)
	}

	// Off for one Options, off for the process, cleared: IPv6 first again.
	off := d
	off.DisableHistory = true
	if r := runLibrary(t, off, nil, "dual.test", port, ""); r.steps[0] != "attempt-started #0 ::1" {
		t.Fatalf("DisableHistory: %v", r.steps)
	}
	SetHistoryEnabled(false)
	if r := runLibrary(t, d, nil, "dual.test", port, ""); r.steps[0] != "attempt-started #0 ::1" {
		t.Fatalf("history off: %v", r.steps)
	}
	SetHistoryEnabled(true)
	ClearHistory()
	if r := runLibrary(t, d, nil, "dual.test", port, ""); r.steps[0] != "attempt-started #0 ::1" {
		t.Fatalf("after ClearHistory: %v", r.steps)
	}
}

// A literal has nothing to order: history neither reads nor records it.
func TestHistoryIgnoresLiterals(t *testing.T) {
	withHistory(t)
	before := HistoryStatistics()
	ln := echoListener(t, "127.0.0.1:0")
	for range 3 {
		res, err := (&Options{}).Connect(t.Context(), "127.0.0.1", uint16(portOf(ln)))
		if err != nil {
			t.Fatal(err)
		}
		unix.Close(res.FD)
		if res.History.Decided() {
			t.Fatalf("literal: history decided %+v", res.History)
		}
	}
	if st := HistoryStatistics(); st.Recorded != before.Recorded || st.Entries != 0 {
		t.Fatalf("literal connects recorded: %+v", st)
	}
}

func TestHistoryLifetimeValidated(t *testing.T) {
	if err := (&Options{HistoryLifetime: -time.Second}).Validate(); err == nil {
		t.Fatal("negative HistoryLifetime accepted")
	}
}

// History adds no allocation to a connect to a name it already knows: the
// decision and the record reuse the entry (the first connect makes it).
func TestHistoryAddsNoAllocation(t *testing.T) {
	withHistory(t)
	port := quietListener(t)
	hosts := map[string][]netip.Addr{"two.test": mustAddrs("127.0.0.1", "127.0.0.2")}
	allocs := func(d Options) float64 {
		return testing.AllocsPerRun(200, func() {
			res, err := d.Connect(t.Context(), "two.test", uint16(port))
			if err != nil {
				t.Fatal(err)
			}
			unix.Close(res.FD)
		})
	}
	on := allocs(Options{Hosts: hosts})
	off := allocs(Options{Hosts: hosts, DisableHistory: true})
	if on != off {
		t.Fatalf("a connect allocates %v times with history, %v without", on, off)
	}
	if st := HistoryStatistics(); st.Entries != 1 || st.Recorded < 200 {
		t.Fatalf("history was not used: %+v", st)
	}
	t.Logf("%v allocations per connect, with history and without", on)
}

// quietListener listens on 127.0.0.1 and never accepts: connections
// complete in the kernel's queue, so that no goroutine of the test
// allocates while allocations are counted.
func quietListener(t *testing.T) int {
	t.Helper()
	fd, err := unix.Socket(unix.AF_INET, unix.SOCK_STREAM|unix.SOCK_CLOEXEC, 0)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { unix.Close(fd) })
	if err := unix.Bind(fd, &unix.SockaddrInet4{Addr: [4]byte{127, 0, 0, 1}}); err != nil {
		t.Fatal(err)
	}
	if err := unix.Listen(fd, 4096); err != nil {
		t.Fatal(err)
	}
	sa, err := unix.Getsockname(fd)
	if err != nil {
		t.Fatal(err)
	}
	return sa.(*unix.SockaddrInet4).Port
}
