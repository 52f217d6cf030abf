// Package bedtest tests `hev2-connect --stdio` on the test bed: the tool
// runs in the client namespace, its peers (Go servers, sshd) in the server
// namespace, and every name it connects to is a scenario name of the bed's
// DNS server. Root only (make test-capi-stdio says SKIP otherwise).
//
// The tool is $HEV2_CONNECT (default: build/hev2-connect of this tree).
package bedtest

import (
	"fmt"
	"net"
	"net/netip"
	"os"
	"path/filepath"
	"testing"

	"github.com/hev2/hev2/tests/testbed"
)

var (
	bed  *testbed.Bed
	tool string
)

// The scenario rows used here (names in tests/testbed/scenarios.go):
// v6-blackhole is the race that matters to ssh (its IPv6 SYN-ACKs are
// dropped; IPv4 wins after the attempt delay), the others fail every way.
const (
	raceName    = "v6-blackhole.hev2.test"
	refusedName = "all-refused.hev2.test"
	nxName      = "nxdomain.hev2.test"
)

func TestMain(m *testing.M) {
	if os.Geteuid() != 0 {
		fmt.Println("SKIP: bedtest needs root (network namespaces)")
		os.Exit(0)
	}
	tool = os.Getenv("HEV2_CONNECT")
	if tool == "" {
		tool = "../../../build/hev2-connect"
	}
	var err error
	if tool, err = filepath.Abs(tool); err == nil {
		_, err = os.Stat(tool)
	}
	if err != nil {
		fmt.Fprintln(os.Stderr, "bedtest: no hev2-connect (make capi, or set HEV2_CONNECT):", err)
		os.Exit(1)
	}
	// The suite's self-check proves the impairments elsewhere (make
	// test-testbed); here the rows' outcomes show them.
	bed, err = testbed.Start(testbed.Options{SkipSelfCheck: true})
	if err != nil {
		fmt.Fprintln(os.Stderr, "bedtest:", err)
		os.Exit(1)
	}
	for _, s := range testbed.Scenarios() {
		if err := s.Install(bed); err != nil {
			fmt.Fprintln(os.Stderr, "bedtest:", err)
			bed.Close()
			os.Exit(1)
		}
	}
	code := m.Run()
	bed.Close()
	os.Exit(code)
}

// listenServer listens on port of both healthy standard addresses
// (testbed.V4Good1, V6Good1) inside the server namespace and hands every
// accepted connection to conns. The raced name's winner, V4Good1, is one
// of them; its IPv6 address, V6Blackhole1, never completes a handshake.
func listenServer(t *testing.T, port int) <-chan *net.TCPConn {
	t.Helper()
	conns := make(chan *net.TCPConn, 4)
	for _, a := range []netip.Addr{testbed.V4Good1, testbed.V6Good1} {
		var ln *net.TCPListener
		err := bed.InServer(func() error {
			var err error
			ln, err = net.ListenTCP("tcp", net.TCPAddrFromAddrPort(netip.AddrPortFrom(a, uint16(port))))
			return err
		})
		if err != nil {
			t.Fatalf("listen %v port %d in the server namespace: %v", a, port, err)
		}
		t.Cleanup(func() { ln.Close() })
		go func() {
			for {
				c, err := ln.AcceptTCP()
				if err != nil {
					return
				}
				conns <- c
			}
		}()
	}
	return conns
}

// wantIPv4Winner checks that the server saw the client's IPv4 address on
// the raced name's winner: the race went past the blackholed IPv6 address.
func wantIPv4Winner(t *testing.T, c *net.TCPConn) {
	t.Helper()
	local := c.LocalAddr().(*net.TCPAddr).AddrPort().Addr().Unmap()
	remote := c.RemoteAddr().(*net.TCPAddr).AddrPort().Addr().Unmap()
	if local != testbed.V4Good1 || remote != testbed.ClientV4 {
		t.Errorf("server saw %v -> %v, want %v -> %v (IPv4 after the blackholed IPv6)",
			remote, local, testbed.ClientV4, testbed.V4Good1)
	}
}
