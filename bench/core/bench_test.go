package corebench

import (
	"context"
	"net"
	"net/netip"
	"strconv"
	"testing"

	"golang.org/x/sys/unix"

	"github.com/hev2/hev2/core"
)

// The benchmarks connect and close on loopback, hev2 beside Go's
// net.Dialer in the same run. `make bench-core` prints them, then the
// interleaved DialContext comparison (bench/dialbench: the median of
// per-round ratios, the figure to quote) and syscalls per connect counted
// by strace.

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

// benchConnect times Connect+close of the raw fd.
func benchConnect(b *testing.B, d *core.Dialer, host string, port int) {
	ctx := context.Background()
	b.ReportAllocs()
	for b.Loop() {
		res, err := d.Connect(ctx, host, uint16(port))
		if err != nil {
			b.Fatal(err)
		}
		unix.Close(res.FD)
	}
}

// benchDial times DialContext+Close of anything with that method.
func benchDial(b *testing.B, dial func(context.Context, string, string) (net.Conn, error), addr string) {
	ctx := context.Background()
	b.ReportAllocs()
	for b.Loop() {
		c, err := dial(ctx, "tcp", addr)
		if err != nil {
			b.Fatal(err)
		}
		c.Close()
	}
}

func BenchmarkConnectLiteral(b *testing.B) {
	port := benchListener(b, "tcp4", "127.0.0.1:0")
	addr := "127.0.0.1:" + strconv.Itoa(port)
	b.Run("hev2", func(b *testing.B) { benchConnect(b, &core.Dialer{}, "127.0.0.1", port) })
	b.Run("hev2-DialContext", func(b *testing.B) { benchDial(b, (&core.Dialer{}).DialContext, addr) })
	b.Run("net.Dialer", func(b *testing.B) { benchDial(b, (&net.Dialer{}).DialContext, addr) })
}

// BenchmarkDialContextLiteral6: the same pair on ::1.
func BenchmarkDialContextLiteral6(b *testing.B) {
	port := benchListener(b, "tcp6", "[::1]:0")
	addr := "[::1]:" + strconv.Itoa(port)
	b.Run("hev2-DialContext", func(b *testing.B) { benchDial(b, (&core.Dialer{}).DialContext, addr) })
	b.Run("net.Dialer", func(b *testing.B) { benchDial(b, (&net.Dialer{}).DialContext, addr) })
}

// BenchmarkConnectTwoAddressName: hev2 resolves a name to ::1 and
// 127.0.0.1 through an in-memory resolver, sorts them by RFC 6724 and wins
// on ::1. net.Dialer has no resolver hook that avoids the system's DNS, so
// it dials the IPv6 literal its own fallback logic would pick first.
func BenchmarkConnectTwoAddressName(b *testing.B) {
	port := benchListener(b, "tcp", "[::]:0")
	fake := core.ResolverFunc(func(_ context.Context, _ string, f core.Family) ([]netip.Addr, error) {
		if f == core.IPv6 {
			return []netip.Addr{netip.IPv6Loopback()}, nil
		}
		return []netip.Addr{netip.MustParseAddr("127.0.0.1")}, nil
	})
	// History is on, as a user gets it ("hev2"), beside it turned off.
	b.Run("hev2", func(b *testing.B) { benchConnect(b, &core.Dialer{Resolver: fake}, "dual.bench", port) })
	b.Run("hev2-no-history", func(b *testing.B) {
		benchConnect(b, &core.Dialer{Resolver: fake, DisableHistory: true}, "dual.bench", port)
	})
	b.Run("hev2-DialContext", func(b *testing.B) {
		benchDial(b, (&core.Dialer{Resolver: fake}).DialContext, "dual.bench:"+strconv.Itoa(port))
	})
	b.Run("net.Dialer", func(b *testing.B) {
		benchDial(b, (&net.Dialer{}).DialContext, "[::1]:"+strconv.Itoa(port))
	})
}
