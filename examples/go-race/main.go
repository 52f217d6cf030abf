// Command go-race shows a Happy Eyeballs race on loopback through the Go
// API: a name mapped (statically, no DNS) to ::1, whose SYNs are dropped,
// and 127.0.0.1, which accepts. The timeline shows IPv6 tried first (RFC
// 6724), IPv4 started after the Connection Attempt Delay, and IPv4 winning.
package main

import (
	"context"
	"fmt"
	"net"
	"net/netip"
	"os"
	"time"

	"github.com/hev2/hev2/core"
	"golang.org/x/sys/unix"
)

func main() {
	port, cleanup, err := dualStackTarget()
	if err != nil {
		fmt.Fprintln(os.Stderr, "go-race:", err)
		os.Exit(1)
	}
	defer cleanup()

	d := core.Dialer{
		Hosts: map[string][]netip.Addr{
			"dual.example": {netip.MustParseAddr("127.0.0.1"), netip.MustParseAddr("::1")},
		},
		Trace: printEvent,
	}
	fmt.Printf("connecting to dual.example:%d (::1 drops SYNs, 127.0.0.1 accepts)\n", port)
	res, err := d.Connect(context.Background(), "dual.example", port)
	if err != nil {
		fmt.Println("failed:", err)
		os.Exit(1)
	}
	unix.Close(res.FD)
	fmt.Printf("connected to %v (%v) in %.1f ms\n", res.Addr, res.Family(), ms(res.Elapsed))
}

func printEvent(ev core.TraceEvent) {
	line := fmt.Sprintf("%8.2f ms  %-17s", ms(ev.At), ev.Kind)
	switch {
	case ev.Addr.IsValid():
		line += " " + ev.Addr.String()
	case ev.Family != core.FamilyUnspec:
		line += " " + ev.Family.QueryType()
	}
	if len(ev.Addrs) > 0 {
		line += fmt.Sprint(" ", ev.Addrs)
	}
	if ev.Until > 0 {
		line += fmt.Sprintf(" until %.2f ms", ms(ev.Until))
	}
	if ev.Err != nil {
		line += " (" + ev.Err.Error() + ")"
	}
	fmt.Println(line)
}

func ms(d time.Duration) float64 { return float64(d) / float64(time.Millisecond) }

// dualStackTarget listens on 127.0.0.1 and on ::1 with the same port; the
// ::1 listener has a backlog of 0 filled by one connection it never
// accepts, so the kernel drops further SYNs to it: a broken IPv6 path
// without root.
func dualStackTarget() (uint16, func(), error) {
	ln4, err := net.Listen("tcp4", "127.0.0.1:0")
	if err != nil {
		return 0, nil, err
	}
	port := ln4.Addr().(*net.TCPAddr).Port
	go func() {
		for {
			c, err := ln4.Accept()
			if err != nil {
				return
			}
			c.Close()
		}
	}()
	fd, err := unix.Socket(unix.AF_INET6, unix.SOCK_STREAM|unix.SOCK_CLOEXEC, 0)
	if err != nil {
		return 0, nil, err
	}
	if err := unix.Bind(fd, &unix.SockaddrInet6{Port: port, Addr: [16]byte{15: 1}}); err != nil {
		return 0, nil, fmt.Errorf("bind [::1]:%d (is IPv6 loopback configured?): %w", port, err)
	}
	if err := unix.Listen(fd, 0); err != nil {
		return 0, nil, err
	}
	filler, err := net.DialTimeout("tcp6", fmt.Sprintf("[::1]:%d", port), time.Second)
	if err != nil {
		return 0, nil, err
	}
	return uint16(port), func() { filler.Close(); unix.Close(fd); ln4.Close() }, nil
}
