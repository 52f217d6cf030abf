package loopbacktest

import (
	"errors"
	"net"
	"strconv"
	"syscall"
	"testing"
	"time"
)

// What the package rests on: on Linux a socket bound and not listening
// refuses connects (RST, not a silent drop) and keeps its port from every
// other bind, for both families.
func TestBoundNotListeningRefusesAndHoldsThePort(t *testing.T) {
	port, _, _ := BothFamilies(t)
	for _, ip := range []string{"127.0.0.1", "::1"} {
		addr := net.JoinHostPort(ip, strconv.Itoa(port))
		if c, err := net.DialTimeout("tcp", addr, 5*time.Second); !errors.Is(err, syscall.ECONNREFUSED) {
			if c != nil {
				c.Close()
			}
			t.Errorf("connect to %s: %v, want ECONNREFUSED", addr, err)
		}
		// net.Listen sets SO_REUSEADDR, as most listeners of other tests do.
		if ln, err := net.Listen("tcp", addr); !errors.Is(err, syscall.EADDRINUSE) {
			if ln != nil {
				ln.Close()
			}
			t.Errorf("listen on %s: %v, want EADDRINUSE", addr, err)
		}
	}
	refused := net.JoinHostPort("::1", strconv.Itoa(Refusing(t, "::1")))
	if _, err := net.DialTimeout("tcp", refused, 5*time.Second); !errors.Is(err, syscall.ECONNREFUSED) {
		t.Errorf("connect to %s: %v, want ECONNREFUSED", refused, err)
	}
}
