// Package loopbacktest hands tests loopback ports that nothing else can
// take while the test runs.
//
// `go test ./...` runs packages in parallel processes, so a port that a
// test picked, then released (a listener opened and closed to make a
// "refused" port) or picked on one family only (127.0.0.1:0, then used on
// ::1 as well), can be bound by another package's test in between. The
// sockets here stay bound (without SO_REUSEADDR, so no other bind of the
// same address and port succeeds) until the test's cleanup; a socket that
// is bound but not listening answers a SYN with RST on Linux, for both
// families, so it is also how a refused port is made.
package loopbacktest

import (
	"errors"
	"testing"

	"golang.org/x/sys/unix"
)

// bothFamiliesTries bounds BothFamilies' search: the kernel's ephemeral
// range is tens of thousands of ports, so a port taken on ::1 but free on
// 127.0.0.1 a hundred times in a row means something is wrong.
const bothFamiliesTries = 100

// Bind returns a TCP socket bound to ip ("127.0.0.1" or "::1") and port
// (0: one the kernel chooses), not listening, and the port it is bound
// to. The test's cleanup closes it.
func Bind(t testing.TB, ip string, port int) (fd, boundPort int) {
	t.Helper()
	fd, boundPort, err := bind(ip, port)
	if err != nil {
		t.Fatalf("loopbacktest: bind %s port %d: %v", ip, port, err)
	}
	t.Cleanup(func() { unix.Close(fd) })
	return fd, boundPort
}

// Refusing returns a port of ip on which every connect is refused (RST):
// a socket bound there, never listening, held until the test's cleanup.
func Refusing(t testing.TB, ip string) int {
	t.Helper()
	_, port := Bind(t, ip, 0)
	return port
}

// BothFamilies returns one port bound on 127.0.0.1 and on ::1, with the
// two sockets (not listening: connects to either are refused until the
// test listens on it). The port is chosen on 127.0.0.1 by the kernel; if
// ::1 has it taken, the whole choice is made again. The test's cleanup
// closes both sockets.
func BothFamilies(t testing.TB) (port, v4, v6 int) {
	t.Helper()
	for range bothFamiliesTries {
		v4, port, err := bind("127.0.0.1", 0)
		if err != nil {
			t.Fatalf("loopbacktest: bind 127.0.0.1: %v", err)
		}
		v6, _, err := bind("::1", port)
		if errors.Is(err, unix.EADDRINUSE) {
			unix.Close(v4)
			continue
		}
		if err != nil {
			unix.Close(v4)
			t.Fatalf("loopbacktest: bind [::1]:%d: %v", port, err)
		}
		t.Cleanup(func() { unix.Close(v4); unix.Close(v6) })
		return port, v4, v6
	}
	t.Fatalf("loopbacktest: no port free on both 127.0.0.1 and ::1 in %d tries", bothFamiliesTries)
	return 0, -1, -1
}

// bind makes the socket of Bind without registering its cleanup.
func bind(ip string, port int) (fd, boundPort int, err error) {
	family, sa := unix.AF_INET, unix.Sockaddr(&unix.SockaddrInet4{Port: port, Addr: [4]byte{127, 0, 0, 1}})
	switch ip {
	case "127.0.0.1":
	case "::1":
		family, sa = unix.AF_INET6, &unix.SockaddrInet6{Port: port, Addr: [16]byte{15: 1}}
	default:
		return -1, 0, errors.New("not a loopback address of this package: " + ip)
	}
	fd, err = unix.Socket(family, unix.SOCK_STREAM|unix.SOCK_CLOEXEC, 0)
	if err != nil {
		return -1, 0, err
	}
	if err := unix.Bind(fd, sa); err != nil {
		unix.Close(fd)
		return -1, 0, err
	}
	lsa, err := unix.Getsockname(fd)
	if err != nil {
		unix.Close(fd)
		return -1, 0, err
	}
	switch s := lsa.(type) {
	case *unix.SockaddrInet4:
		boundPort = s.Port
	case *unix.SockaddrInet6:
		boundPort = s.Port
	}
	return fd, boundPort, nil
}
