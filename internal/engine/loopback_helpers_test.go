package engine

import (
	"context"
	"net"
	"net/netip"
	"os"
	"runtime"
	"strconv"
	"testing"
	"time"

	"golang.org/x/sys/unix"

	"github.com/hev2/hev2/tests/loopbacktest"
)

// openFDs counts this process's open descriptors.
func openFDs(t *testing.T) int {
	t.Helper()
	ents, err := os.ReadDir("/proc/self/fd")
	if err != nil {
		t.Fatal(err)
	}
	return len(ents)
}

// checkLeaks fails the test if it leaves descriptors or goroutines behind.
// Goroutines of abandoned lookups may take a moment to finish (more on a
// loaded machine), so the check waits for the counts to settle, up to 10
// s, before failing.
func checkLeaks(t *testing.T) {
	t.Helper()
	_ = Init() // the shared poller lives for the process
	fds, gs := openFDs(t), runtime.NumGoroutine()
	t.Cleanup(func() {
		deadline := time.Now().Add(10 * time.Second)
		for {
			nf, ng := openFDs(t), runtime.NumGoroutine()
			if nf <= fds && ng <= gs {
				return
			}
			if time.Now().After(deadline) {
				buf := make([]byte, 1<<16)
				buf = buf[:runtime.Stack(buf, true)]
				t.Fatalf("leak: fds %d -> %d, goroutines %d -> %d\n%s", fds, nf, gs, ng, buf)
			}
			time.Sleep(10 * time.Millisecond)
		}
	})
}

// synDropListener listens on ip (127.0.0.1 or ::1) on a port the kernel
// chooses, dropping SYNs (dropSYNsOn), and returns the port.
func synDropListener(t *testing.T, ip string) int {
	t.Helper()
	fd, port := loopbacktest.Bind(t, ip, 0)
	dropSYNsOn(t, fd, ip, port)
	return port
}

// dropSYNsOn listens on the bound socket fd (ip, port) with a backlog of
// 0 and fills that backlog with one connection that is never accepted:
// the kernel then drops further SYNs, so connects hang exactly as with a
// blackholed path, without root.
func dropSYNsOn(t *testing.T, fd int, ip string, port int) {
	t.Helper()
	if err := unix.Listen(fd, 0); err != nil {
		t.Fatal(err)
	}
	filler, err := net.DialTimeout("tcp", net.JoinHostPort(ip, strconv.Itoa(port)), 5*time.Second)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { filler.Close() })
}

// v6DropsV4Echoes returns a port on which ::1 drops SYNs and 127.0.0.1
// echoes: the two families' halves of one port, held together
// (loopbacktest.BothFamilies) so that no other test's listener is reached
// on either.
func v6DropsV4Echoes(t *testing.T) int {
	t.Helper()
	port, v4, v6 := loopbacktest.BothFamilies(t)
	dropSYNsOn(t, v6, "::1", port)
	echoOn(t, v4)
	return port
}

// v6RefusesV4Echoes returns a port on which ::1 refuses (bound, not
// listening) and 127.0.0.1 echoes.
func v6RefusesV4Echoes(t *testing.T) int {
	t.Helper()
	port, v4, _ := loopbacktest.BothFamilies(t)
	echoOn(t, v4)
	return port
}

// bothDrop returns a port on which ::1 and 127.0.0.1 both drop SYNs.
func bothDrop(t *testing.T) int {
	t.Helper()
	port, v4, v6 := loopbacktest.BothFamilies(t)
	dropSYNsOn(t, v4, "127.0.0.1", port)
	dropSYNsOn(t, v6, "::1", port)
	return port
}

// echoListener accepts connections on addr and echoes what it reads.
func echoListener(t *testing.T, addr string) *net.TCPListener {
	t.Helper()
	ln, err := net.Listen("tcp", addr)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { ln.Close() })
	go echo(ln)
	return ln.(*net.TCPListener)
}

// echoOn listens on the bound socket fd (loopbacktest.Bind or
// BothFamilies) and echoes, as echoListener does. The listener works on a
// copy of fd; fd itself stays open until the test's cleanup, and so does
// the listening socket.
func echoOn(t *testing.T, fd int) {
	t.Helper()
	if err := unix.Listen(fd, 128); err != nil {
		t.Fatal(err)
	}
	// os.NewFile's file closes its fd when collected: it gets a copy.
	dup, err := unix.FcntlInt(uintptr(fd), unix.F_DUPFD_CLOEXEC, 0)
	if err != nil {
		t.Fatal(err)
	}
	f := os.NewFile(uintptr(dup), "echo")
	ln, err := net.FileListener(f)
	f.Close()
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { ln.Close() })
	go echo(ln)
}

// closedPort is a port of 127.0.0.1 whose connects are refused: bound
// and never listening, so that no other test (of this package or another
// run in parallel) can start listening there meanwhile, as it could on a
// port whose listener was closed.
func closedPort(t *testing.T) uint16 {
	t.Helper()
	return uint16(loopbacktest.Refusing(t, "127.0.0.1"))
}

// echo serves ln until it is closed.
func echo(ln net.Listener) {
	for {
		c, err := ln.Accept()
		if err != nil {
			return
		}
		go func() {
			defer c.Close()
			buf := make([]byte, 64)
			n, _ := c.Read(buf)
			c.Write(buf[:n])
		}()
	}
}

func portOf(ln *net.TCPListener) int { return ln.Addr().(*net.TCPAddr).Port }

// roundTrip proves fd is a working connection to an echo server.
func roundTrip(t *testing.T, fd int) {
	t.Helper()
	if _, err := unix.Write(fd, []byte("ping")); err != nil {
		t.Fatal(err)
	}
	pfd := []unix.PollFd{{Fd: int32(fd), Events: unix.POLLIN}}
	if _, err := unix.Poll(pfd, 2000); err != nil {
		t.Fatal(err)
	}
	buf := make([]byte, 8)
	n, err := unix.Read(fd, buf)
	if err != nil || string(buf[:n]) != "ping" {
		t.Fatalf("echo: %q %v", buf[:n], err)
	}
}

func mustAddrs(s ...string) []netip.Addr {
	out := make([]netip.Addr, len(s))
	for i, x := range s {
		out[i] = netip.MustParseAddr(x)
	}
	return out
}

// resolverFunc is core.ResolverFunc: a function as a Resolver.
type resolverFunc func(ctx context.Context, host string, family Family) ([]netip.Addr, error)

func (f resolverFunc) LookupFamily(ctx context.Context, host string, family Family) ([]netip.Addr, error) {
	return f(ctx, host, family)
}

// DialContext is core.Dialer.DialContext, for the tests of the race it
// plays through Go's netpoller.
func (o *Options) DialContext(ctx context.Context, network, address string) (net.Conn, error) {
	c, _, err := o.DialConn(ctx, network, address, false)
	if err != nil {
		return nil, err
	}
	return c, nil
}
