package core

import (
	"net"
	"net/netip"
	"os"
	"runtime"
	"strconv"
	"testing"
	"time"

	"golang.org/x/sys/unix"
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
// Goroutines of abandoned lookups may take a moment to finish, so the
// check waits for the counts to settle before failing.
func checkLeaks(t *testing.T) {
	t.Helper()
	_ = Init() // the shared poller lives for the process
	fds, gs := openFDs(t), runtime.NumGoroutine()
	t.Cleanup(func() {
		deadline := time.Now().Add(2 * time.Second)
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

// synDropListener listens on addr with a backlog of 0 and fills that
// backlog with one connection that is never accepted: the kernel then
// drops further SYNs, so connects hang exactly as with a blackholed path,
// without root.
func synDropListener(t *testing.T, ip string, port int) int {
	t.Helper()
	family, sa := unix.AF_INET, unix.Sockaddr(&unix.SockaddrInet4{Port: port, Addr: [4]byte{127, 0, 0, 1}})
	if ip == "::1" {
		family, sa = unix.AF_INET6, &unix.SockaddrInet6{Port: port, Addr: [16]byte{15: 1}}
	}
	ln, err := unix.Socket(family, unix.SOCK_STREAM|unix.SOCK_CLOEXEC, 0)
	if err != nil {
		t.Fatal(err)
	}
	if err := unix.Bind(ln, sa); err != nil {
		t.Fatal(err)
	}
	if err := unix.Listen(ln, 0); err != nil {
		t.Fatal(err)
	}
	lsa, _ := unix.Getsockname(ln)
	switch s := lsa.(type) {
	case *unix.SockaddrInet4:
		port = s.Port
	case *unix.SockaddrInet6:
		port = s.Port
	}
	filler, err := net.DialTimeout("tcp", net.JoinHostPort(ip, strconv.Itoa(port)), time.Second)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { filler.Close(); unix.Close(ln) })
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
	go func() {
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
	}()
	return ln.(*net.TCPListener)
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
