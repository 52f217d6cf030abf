// Command gonet is a scenario-client peer: Go's own net.Dialer (its Happy
// Eyeballs with the default 300 ms fallback delay) behind the shared
// contract, for the timing table beside hev2.
//
// Mapping: --open-timeout is net.Dialer.Timeout (it bounds resolution and
// connection together); --no-fast-fallback is FallbackDelay < 0; --family
// picks "tcp4"/"tcp6"; --resolver builtin forces Go's own DNS client.
// net.Dialer has no resolution-only or connect-only timeout, so
// --resolv-timeout and --connect-timeout are usage errors (exit 2), and so
// are --https-rr, --alpn and --ech: it asks no HTTPS record.
package main

import (
	"context"
	"errors"
	"fmt"
	"net"
	"net/netip"
	"os"
	"strconv"
	"syscall"
	"time"

	"github.com/hev2/hev2/tests/testbed/contract"
)

func main() { os.Exit(run()) }

func run() int {
	o, err := contract.Parse("gonet", os.Args[1:], os.Stderr)
	if err != nil {
		fmt.Fprintln(os.Stderr, "gonet:", err)
		return contract.ExitUsage
	}
	if o.TraceFiles.Any() {
		fmt.Fprintln(os.Stderr, "gonet: net.Dialer keeps no trace of its race: no --svg, --qlog or --chrome-trace")
		return contract.ExitUsage
	}
	if o.HTTPSFlags() {
		fmt.Fprintln(os.Stderr, "gonet: net.Dialer cannot ask HTTPS records: no --https-rr, --alpn or --ech")
		return contract.ExitUsage
	}
	if o.ResolvTimeout > 0 || o.ConnectTimeout > 0 {
		fmt.Fprintln(os.Stderr, "gonet: net.Dialer has no --resolv-timeout or --connect-timeout")
		return contract.ExitUsage
	}
	d := net.Dialer{Timeout: o.OpenTimeout}
	if o.NoFastFallback {
		d.FallbackDelay = -1
	}
	if o.Resolver == "builtin" {
		d.Resolver = &net.Resolver{PreferGo: true}
	}
	network := "tcp"
	if o.Family != 0 {
		network += strconv.Itoa(o.Family)
	}
	// net.Dialer keeps no history: --no-history changes nothing, and
	// --repeat shows every connect starting from zero.
	var first contract.Output
	runs := make([]contract.Run, 0, o.Repeat)
	for i := range o.Repeat {
		out := dialOnce(&d, network, o)
		if i == 0 {
			first = out
		}
		runs = append(runs, out.AsRun())
	}
	if o.Repeat > 1 {
		first = contract.Repeated(first, runs)
	}
	return first.Print()
}

func dialOnce(d *net.Dialer, network string, o contract.Options) contract.Output {
	start := time.Now()
	c, err := d.DialContext(context.Background(), network, net.JoinHostPort(o.Host, strconv.Itoa(int(o.Port))))
	elapsed := time.Since(start)
	if err != nil {
		return contract.Failure(o.Port, describe(err, o.OpenTimeout > 0), elapsed)
	}
	defer c.Close()
	winner, _ := netip.ParseAddrPort(c.RemoteAddr().String())
	return contract.Success(winner, elapsed)
}

func describe(err error, openTimeout bool) contract.Error {
	e := contract.Error{Message: err.Error()}
	var dnsErr *net.DNSError
	var errno syscall.Errno
	var ne net.Error
	switch {
	case errors.As(err, &dnsErr):
		switch {
		case dnsErr.IsNotFound:
			e.EAI = "EAI_NONAME"
		case dnsErr.IsTimeout || dnsErr.IsTemporary:
			e.EAI = "EAI_AGAIN"
		default:
			e.EAI = "EAI_FAIL"
		}
	case errors.As(err, &errno):
		e.Errno = contract.ErrnoName(errno)
	}
	if errors.As(err, &ne) && ne.Timeout() {
		e.Errno = "ETIMEDOUT"
		if openTimeout {
			e.Timeout = "open_timeout"
		}
	}
	return e
}
