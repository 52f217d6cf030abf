package core_test

import (
	"context"
	"errors"
	"net"
	"net/netip"
	"strconv"
	"sync/atomic"
	"syscall"
	"testing"

	"github.com/hev2/hev2/core"
)

// core is the Go API over the engine (internal/engine, whose tests play
// the races); these tests show that each entry reaches it with the
// Dialer's options.

func listen(t *testing.T) (port uint16) {
	t.Helper()
	ln, err := net.Listen("tcp4", "127.0.0.1:0")
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
			c.Close()
		}
	}()
	return uint16(ln.Addr().(*net.TCPAddr).Port)
}

func TestConnectAndDialContextReachTheEngine(t *testing.T) {
	port := listen(t)
	d := &core.Dialer{Record: true}
	res, err := d.Connect(context.Background(), "127.0.0.1", port)
	if err != nil {
		t.Fatal(err)
	}
	syscall.Close(res.FD)
	if res.Addr != netip.AddrPortFrom(netip.MustParseAddr("127.0.0.1"), port) || len(res.Trace.Events) == 0 {
		t.Fatalf("Connect: winner %v, %d recorded events; want 127.0.0.1:%d and a trace (Record)", res.Addr, len(res.Trace.Events), port)
	}
	c, err := d.DialContext(context.Background(), "tcp", net.JoinHostPort("127.0.0.1", strconv.Itoa(int(port))))
	if err != nil {
		t.Fatal(err)
	}
	c.Close()
}

func TestValidateRefusesWithAnInputError(t *testing.T) {
	d := &core.Dialer{OpenTimeout: 1, ConnectTimeout: 1}
	err := d.Validate()
	var ie *core.InputError
	if !errors.As(err, &ie) || ie.Kind != core.InputOption || ie.Field != "open_timeout" || !errors.Is(err, core.ErrInvalidOptions) {
		t.Fatalf("Validate: %v, want an InputError for open_timeout", err)
	}
	if _, err := d.Connect(context.Background(), "127.0.0.1", 1); !errors.As(err, &ie) {
		t.Fatalf("Connect with invalid options: %v, want the InputError", err)
	}
}

// A Dialer without a Resolver asks DefaultResolver, read at each connect.
func TestDefaultResolverAnswersForANilResolver(t *testing.T) {
	port := listen(t)
	var asked atomic.Int32
	saved := core.DefaultResolver
	core.DefaultResolver = core.ResolverFunc(func(_ context.Context, host string, f core.Family) ([]netip.Addr, error) {
		asked.Add(1)
		if f == core.IPv4 && host == "default.test" {
			return []netip.Addr{netip.MustParseAddr("127.0.0.1")}, nil
		}
		return nil, &core.ResolveError{Host: host, Family: f, Code: core.EAI_NODATA}
	})
	t.Cleanup(func() { core.DefaultResolver = saved })
	res, err := (&core.Dialer{DisableHistory: true, DisableNAT64: true}).Connect(context.Background(), "default.test", port)
	if err != nil {
		t.Fatal(err)
	}
	syscall.Close(res.FD)
	if asked.Load() == 0 {
		t.Fatal("DefaultResolver was not asked")
	}
}
