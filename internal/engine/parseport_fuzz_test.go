package engine

import (
	"errors"
	"strconv"
	"strings"
	"testing"
)

// FuzzParsePort: a port is a decimal 1..65535 or a service name of
// /etc/services (looked up for "tcp", never through DNS). `make fuzz` runs
// it longer (mk/fuzz.mk).
func FuzzParsePort(f *testing.F) {
	for _, s := range []string{
		"443", "1", "65535", "0", "65536", "-1", "+80", "0080", " 80", "80 ", "http", "HTTPS",
		"ssh", "no-such-service", "", "http\x00", "\x00", strings.Repeat("9", 70), "1e3", "0x50",
	} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		port, err := ParsePort(s)
		if err != nil {
			if port != 0 || !errors.Is(err, ErrInvalidOptions) {
				t.Fatalf("%q: %d, %v (want 0 and ErrInvalidOptions)", s, port, err)
			}
			if n, nerr := strconv.ParseUint(s, 10, 16); nerr == nil && n != 0 {
				t.Fatalf("%q: decimal port %d refused: %v", s, n, err)
			}
			return
		}
		if port == 0 {
			t.Fatalf("%q: port 0 accepted", s)
		}
		if strings.IndexByte(s, 0) >= 0 || len(s) > 64 && strings.TrimLeft(s, "0123456789") != "" {
			t.Fatalf("%q: accepted as %d", s, port)
		}
		if n, nerr := strconv.ParseUint(s, 10, 16); nerr == nil && uint16(n) != port {
			t.Fatalf("%q: %d, its number is %d", s, port, n)
		}
		// Round trip: the port's number reads back as the same port.
		if again, err := ParsePort(strconv.Itoa(int(port))); err != nil || again != port {
			t.Fatalf("%q: %d read back as %d %v", s, port, again, err)
		}
	})
}
