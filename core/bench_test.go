package core

import (
	"context"
	"net"
	"net/netip"
	"strconv"
	"testing"

	"golang.org/x/sys/unix"
)

// The benchmarks connect and close on loopback, hev2 beside Go's
// net.Dialer in the same run. `make bench-core` prints them, with syscalls
// per connect counted by strace.

func benchListener(b *testing.B, network, addr string) int {
	ln, err := net.Listen(network, addr)
	if err != nil {
		b.Fatal(err)
	}
	b.Cleanup(func() { ln.Close() })
	go func() {
		for {
			c, err := ln.Accept()
			if err != nil {
				return
			}
			c.Close()
		}
	}()
	return ln.Addr().(*net.TCPAddr).Port
}

func BenchmarkConnectLiteral(b *testing.B) {
	port := benchListener(b, "tcp4", "127.0.0.1:0")
	ctx := context.Background()
	b.Run("hev2", func(b *testing.B) {
		var d Dialer
		b.ReportAllocs()
		for b.Loop() {
			res, err := d.Connect(ctx, "127.0.0.1", uint16(port))
			if err != nil {
				b.Fatal(err)
			}
			unix.Close(res.FD)
		}
	})
	b.Run("hev2-DialContext", func(b *testing.B) {
		var d Dialer
		addr := "127.0.0.1:" + strconv.Itoa(port)
		b.ReportAllocs()
		for b.Loop() {
			c, err := d.DialContext(ctx, "tcp", addr)
			if err != nil {
				b.Fatal(err)
			}
			c.Close()
		}
	})
	b.Run("net.Dialer", func(b *testing.B) {
		var d net.Dialer
		addr := "127.0.0.1:" + strconv.Itoa(port)
		b.ReportAllocs()
		for b.Loop() {
			c, err := d.DialContext(ctx, "tcp", addr)
			if err != nil {
				b.Fatal(err)
			}
			c.Close()
		}
	})
}

// BenchmarkConnectTwoAddressName resolves a name to ::1 and 127.0.0.1
// through an in-memory resolver (hev2) and an in-memory resolver behind
// net.Dialer's own Resolver hook is not possible, so net.Dialer gets the
// same two addresses as a static dual-stack race would: it dials the IPv6
// literal first, as its fallback logic would with a working IPv6.
func BenchmarkConnectTwoAddressName(b *testing.B) {
	port := benchListener(b, "tcp", "[::]:0")
	ctx := context.Background()
	fake := ResolverFunc(func(_ context.Context, _ string, f Family) ([]netip.Addr, error) {
		if f == IPv6 {
			return []netip.Addr{netip.IPv6Loopback()}, nil
		}
		return []netip.Addr{netip.MustParseAddr("127.0.0.1")}, nil
	})
	b.Run("hev2", func(b *testing.B) {
		d := Dialer{Resolver: fake}
		b.ReportAllocs()
		for b.Loop() {
			res, err := d.Connect(ctx, "dual.bench", uint16(port))
			if err != nil {
				b.Fatal(err)
			}
			unix.Close(res.FD)
		}
	})
	b.Run("net.Dialer", func(b *testing.B) {
		var d net.Dialer
		addr := "[::1]:" + strconv.Itoa(port)
		b.ReportAllocs()
		for b.Loop() {
			c, err := d.DialContext(ctx, "tcp", addr)
			if err != nil {
				b.Fatal(err)
			}
			c.Close()
		}
	})
}
