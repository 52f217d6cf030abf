package testbed

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net"
	"net/netip"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"time"

	"github.com/miekg/dns"
)

// blackholeProbe is how long a connect to a blackholed address must hang
// for the blackhole to count as real (the kernel's first SYN retransmit is
// at 1 s, so a hang past it proves the SYN-ACK is really gone).
const blackholeProbe = 1200 * time.Millisecond

// atOnce is the most an unimpaired step may take in the self-check: far
// below the blackhole's hang, far above a loaded 2-core machine's noise.
const atOnce = 500 * time.Millisecond

// SelfCheck verifies every impairment from the client namespace with plain
// serial connects, and the DNS path through `ip netns exec` + getaddrinfo.
// It fails loudly, naming each address that does not behave.
func (b *Bed) SelfCheck(ctx context.Context) error {
	addrs := b.Addrs()
	var (
		mu       sync.Mutex
		failures []string
		wg       sync.WaitGroup
	)
	for a, imp := range addrs {
		wg.Add(1)
		go func() {
			defer wg.Done()
			if err := b.checkAddr(a, imp); err != nil {
				mu.Lock()
				failures = append(failures, err.Error())
				mu.Unlock()
			}
		}()
	}
	wg.Add(1)
	go func() {
		defer wg.Done()
		if err := b.checkDNS(ctx); err != nil {
			mu.Lock()
			failures = append(failures, err.Error())
			mu.Unlock()
		}
	}()
	wg.Wait()
	if len(failures) > 0 {
		return fmt.Errorf("testbed: self-check failed:\n  %s", strings.Join(failures, "\n  "))
	}
	return nil
}

// ProbeConnect makes one plain connect from the client namespace to a and
// reports how long it took and how it ended.
func (b *Bed) ProbeConnect(a netip.Addr, port uint16, limit time.Duration) (time.Duration, error) {
	var took time.Duration
	var cerr error
	err := b.InClient(func() error {
		d := net.Dialer{Timeout: limit}
		start := time.Now()
		c, err := d.Dial("tcp", net.JoinHostPort(a.String(), strconv.Itoa(int(port))))
		took = time.Since(start)
		if c != nil {
			c.Close()
		}
		cerr = err
		return nil
	})
	if err != nil {
		return 0, err
	}
	return took, cerr
}

// probeHold connects to a and reports how long the server keeps the
// connection open before closing it, counted from before the connect: the
// server's hold starts when it accepts, which may be well before this
// goroutine runs again after the connect on a loaded machine (a hold
// counted from then looked short, and failed the self-check).
func (b *Bed) probeHold(a netip.Addr, limit time.Duration) (time.Duration, error) {
	var held time.Duration
	var herr error
	err := b.InClient(func() error {
		start := time.Now()
		c, err := net.DialTimeout("tcp", net.JoinHostPort(a.String(), strconv.Itoa(int(b.Port))), limit)
		if err != nil {
			herr = err
			return nil
		}
		defer c.Close()
		c.SetReadDeadline(time.Now().Add(limit))
		_, err = c.Read(make([]byte, 1))
		held = time.Since(start)
		if !errors.Is(err, io.EOF) {
			herr = fmt.Errorf("want EOF, got %v", err)
		}
		return nil
	})
	if err != nil {
		return 0, err
	}
	return held, herr
}

func (b *Bed) checkAddr(a netip.Addr, imp Impairment) error {
	fail := func(format string, args ...any) error {
		return fmt.Errorf("%v (%v): %s", a, imp, fmt.Sprintf(format, args...))
	}
	limit := time.Second
	if imp.Kind == KindBlackhole {
		limit = blackholeProbe
	} else if imp.Kind == KindPathDelay {
		limit = imp.Delay + time.Second
	}
	took, err := b.ProbeConnect(a, b.Port, limit)
	switch imp.Kind {
	case KindHealthy:
		if err != nil {
			return fail("connect failed: %v", err)
		}
		if took > atOnce {
			return fail("connect took %v, want it at once", took)
		}
	case KindSlowAccept:
		if err != nil {
			return fail("connect failed: %v", err)
		}
		if took > atOnce {
			return fail("connect took %v, want it at once", took)
		}
		held, err := b.probeHold(a, imp.Delay+time.Second)
		if err != nil || held < imp.Delay*9/10 {
			return fail("the server closed after %v (%v), want it to hold the connection %v", held, err, imp.Delay)
		}
	case KindRefuse:
		if !errors.Is(err, syscall.ECONNREFUSED) {
			return fail("want ECONNREFUSED, got %v after %v", err, took)
		}
		if took > atOnce {
			return fail("refusal took %v, want it at once", took)
		}
	case KindBlackhole:
		var ne net.Error
		if err == nil || !errors.As(err, &ne) || !ne.Timeout() {
			return fail("want a connect that hangs past %v, got %v after %v", limit, err, took)
		}
	case KindPathDelay:
		if err != nil {
			return fail("connect failed: %v", err)
		}
		if took < imp.Delay*9/10 || took > imp.Delay+atOnce {
			return fail("connect took %v, want about %v", took, imp.Delay)
		}
	}
	return nil
}

// checkDNS resolves a name through getaddrinfo inside the client namespace,
// which proves the bind-mounted resolv.conf, the link and the server.
func (b *Bed) checkDNS(ctx context.Context) error {
	const name = "selfcheck.hev2.test"
	b.DNS.SetHost(name, Answer(V6Good1), Answer(V4Good1))
	defer b.DNS.Remove(name)
	ctx, cancel := context.WithTimeout(ctx, 5*time.Second)
	defer cancel()
	res, err := b.Exec(ctx, "getent", "ahosts", name)
	if err != nil {
		return fmt.Errorf("DNS: %v", err)
	}
	if res.ExitCode != 0 {
		return fmt.Errorf("DNS: getent ahosts %s exited %d: %s", name, res.ExitCode, res.Stderr)
	}
	for _, want := range []netip.Addr{V6Good1, V4Good1} {
		if !strings.Contains(res.Stdout, want.String()+" ") {
			return fmt.Errorf("DNS: getent ahosts %s gave %q, missing %v", name, res.Stdout, want)
		}
	}
	seen := map[uint16]bool{}
	for _, q := range b.DNS.Queries(name) {
		seen[q.Type] = true
	}
	if !seen[dns.TypeA] || !seen[dns.TypeAAAA] {
		return fmt.Errorf("DNS: the server saw no A and AAAA queries for %s", name)
	}
	return nil
}
