package engine

import (
	"bufio"
	"context"
	"errors"
	"fmt"
	"net"
	"net/netip"
	"os"
	"strings"
	"syscall"
	"testing"
	"time"

	"golang.org/x/sys/unix"
)

// sockopt reads an int socket option of a connection.
func sockopt(t *testing.T, c *net.TCPConn, level, opt int) int {
	t.Helper()
	rc, err := c.SyscallConn()
	if err != nil {
		t.Fatal(err)
	}
	var v int
	var gerr error
	if err := rc.Control(func(fd uintptr) { v, gerr = unix.GetsockoptInt(int(fd), level, opt) }); err != nil {
		t.Fatal(err)
	}
	if gerr != nil {
		t.Fatal(gerr)
	}
	return v
}

// DialContext's connection is configured as net.Dialer configures one:
// TCP_NODELAY on, keep-alive on (Go's default period unless KeepAlive
// says otherwise, then idle and interval both KeepAlive).
func TestDialContextSocketOptions(t *testing.T) {
	ln := echoListener(t, "127.0.0.1:0")
	checkLeaks(t)
	addr := net.JoinHostPort("127.0.0.1", itoa(portOf(ln)))
	for _, c := range []struct {
		d          Options
		idle, intv int
	}{
		{Options{}, 15, 15},
		{Options{KeepAlive: 7 * time.Second}, 7, 7},
	} {
		conn, err := c.d.DialContext(context.Background(), "tcp", addr)
		if err != nil {
			t.Fatal(err)
		}
		tc := conn.(*net.TCPConn)
		got := [4]int{
			sockopt(t, tc, unix.IPPROTO_TCP, unix.TCP_NODELAY),
			sockopt(t, tc, unix.SOL_SOCKET, unix.SO_KEEPALIVE),
			sockopt(t, tc, unix.IPPROTO_TCP, unix.TCP_KEEPIDLE),
			sockopt(t, tc, unix.IPPROTO_TCP, unix.TCP_KEEPINTVL),
		}
		conn.Close()
		if want := [4]int{1, 1, c.idle, c.intv}; got != want {
			t.Errorf("KeepAlive %v: nodelay, keepalive, idle, interval = %v, want %v", c.d.KeepAlive, got, want)
		}
	}
}

func TestDialContextLocalAddress(t *testing.T) {
	ln := echoListener(t, "127.0.0.1:0")
	checkLeaks(t)
	d := Options{LocalAddr: netip.MustParseAddr("127.0.0.1")}
	conn, err := d.DialContext(context.Background(), "tcp", net.JoinHostPort("127.0.0.1", itoa(portOf(ln))))
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close()
	if la := conn.LocalAddr().(*net.TCPAddr).AddrPort().Addr(); la != d.LocalAddr {
		t.Fatalf("local address %v, want %v", la, d.LocalAddr)
	}
	// A local address of the other family restricts the destinations:
	// an IPv6 literal has nothing left to try.
	_, err = d.DialContext(context.Background(), "tcp", net.JoinHostPort("::1", itoa(portOf(ln))))
	var re *ResolveError
	if !errors.As(err, &re) || re.Code != EAI_ADDRFAMILY {
		t.Fatalf("err %v, want EAI_ADDRFAMILY", err)
	}
}

// synSent counts this host's sockets in SYN_SENT towards port of ::1 or
// 127.0.0.1 (the port number alone could be another test's connect to
// another address, 192.0.2.1's say, which hangs in SYN_SENT).
func synSent(t *testing.T, port int) int {
	t.Helper()
	n := 0
	remotes := map[string]bool{fmt.Sprintf("0100007F:%04X", port): true, fmt.Sprintf("00000000000000000000000001000000:%04X", port): true}
	for _, file := range []string{"/proc/net/tcp", "/proc/net/tcp6"} {
		f, err := os.Open(file)
		if err != nil {
			t.Fatal(err)
		}
		sc := bufio.NewScanner(f)
		for sc.Scan() {
			fields := strings.Fields(sc.Text())
			// sl local_address rem_address st ...; SYN_SENT is 02.
			if len(fields) > 3 && fields[3] == "02" && remotes[fields[2]] {
				n++
			}
		}
		f.Close()
	}
	return n
}

// When DialContext returns, the losers are closed already: not a socket of
// the race is left connecting in the background.
func TestDialContextLosersClosedOnReturn(t *testing.T) {
	port := v6DropsV4Echoes(t)
	checkLeaks(t)
	d := Options{ConnectionAttemptDelay: 20 * time.Millisecond, Hosts: map[string][]netip.Addr{"dual.test": mustAddrs("127.0.0.1", "::1")}}
	conn, res, err := d.DialConn(context.Background(), "tcp", net.JoinHostPort("dual.test", itoa(port)), true)
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close()
	if n := synSent(t, port); n != 0 {
		t.Fatalf("%d sockets still in SYN_SENT after DialContext returned", n)
	}
	if len(res.Attempts) != 2 || !res.Attempts[1].Won || res.FD != -1 || res.Addr != conn.RemoteAddr().(*net.TCPAddr).AddrPort() {
		t.Fatalf("result %+v, conn to %v", res, conn.RemoteAddr())
	}
}

func TestDialContextErrors(t *testing.T) {
	port := int(closedPort(t))
	checkLeaks(t)
	var d Options
	_, err := d.DialContext(context.Background(), "tcp", net.JoinHostPort("127.0.0.1", itoa(port)))
	var oe *net.OpError
	var he *Error
	if !errors.As(err, &oe) || !errors.As(err, &he) || he.Cause != syscall.ECONNREFUSED || !errors.Is(err, syscall.ECONNREFUSED) {
		t.Fatalf("err %v, want *net.OpError around *Error with ECONNREFUSED", err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	attempts := 0
	d.Trace = func(ev TraceEvent) { attempts++ }
	if _, err := d.DialContext(ctx, "tcp", net.JoinHostPort("127.0.0.1", itoa(port))); !errors.Is(err, context.Canceled) || attempts != 0 {
		t.Fatalf("already canceled: err %v after %d trace events", err, attempts)
	}
}
