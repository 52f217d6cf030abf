package resolve

import (
	"bufio"
	"fmt"
	"io"
	"net/netip"
	"os"
	"strconv"
	"strings"
	"time"
)

// resolvConf is what the built-in resolver takes from resolv.conf(5).
type resolvConf struct {
	nameservers []netip.AddrPort
	search      []string
	ndots       int
	timeout     time.Duration // per query and server
	attempts    int           // rounds over the server list
	rotate      bool
	useTCP      bool // "options use-vc"
	// unmodelled lists the options that change which answers glibc
	// gives and that this resolver does not implement (no-aaaa, inet6,
	// no-tld-query, ...): getaddrinfo and this resolver may then answer
	// differently (see the system resolver's hand-over).
	unmodelled []string
}

// glibc's defaults (resolv.h: RES_TIMEOUT, RES_DFLRETRY) and limits
// (MAXNS, RES_MAXNDOTS, RES_MAXRETRANS, RES_MAXRETRY).
const (
	maxNameservers  = 3
	defaultNdots    = 1
	defaultTimeout  = 5 * time.Second
	defaultAttempts = 2
	maxNdots        = 15
	maxTimeoutSecs  = 30
	maxAttempts     = 5
)

func defaultResolvConf() resolvConf {
	return resolvConf{ndots: defaultNdots, timeout: defaultTimeout, attempts: defaultAttempts}
}

// readResolvConf parses path. A missing file gives the defaults and no
// name server (the caller decides whether that is an error).
func readResolvConf(path string) (resolvConf, error) {
	f, err := os.Open(path)
	if os.IsNotExist(err) {
		return defaultResolvConf(), nil
	}
	if err != nil {
		return resolvConf{}, err
	}
	defer f.Close()
	return parseResolvConf(f, path)
}

// parseResolvConf reads the keywords glibc reads; like glibc it ignores
// lines it does not understand, but a malformed value of a known keyword is
// reported (with its line) rather than guessed at.
func parseResolvConf(r io.Reader, name string) (resolvConf, error) {
	rc := defaultResolvConf()
	sc := bufio.NewScanner(r)
	for line := 1; sc.Scan(); line++ {
		text := sc.Text()
		if i := strings.IndexAny(text, "#;"); i >= 0 {
			text = text[:i]
		}
		fields := strings.Fields(text)
		if len(fields) == 0 {
			continue
		}
		bad := func(format string, args ...any) error {
			return fmt.Errorf("%s:%d: %s", name, line, fmt.Sprintf(format, args...))
		}
		switch fields[0] {
		case "nameserver":
			if len(fields) < 2 {
				return rc, bad("nameserver without an address")
			}
			addr, err := netip.ParseAddr(fields[1])
			if err != nil {
				return rc, bad("nameserver %q is not an IP address", fields[1])
			}
			if len(rc.nameservers) < maxNameservers {
				rc.nameservers = append(rc.nameservers, netip.AddrPortFrom(addr, 53))
			}
		case "domain":
			// The last of "domain" and "search" wins, as in glibc.
			rc.search = fields[1:min(len(fields), 2)]
		case "search":
			rc.search = append([]string(nil), fields[1:]...)
		case "options":
			for _, opt := range fields[1:] {
				if err := rc.option(opt); err != nil {
					return rc, bad("%v", err)
				}
			}
		}
	}
	return rc, sc.Err()
}

func (rc *resolvConf) option(opt string) error {
	key, value, hasValue := strings.Cut(opt, ":")
	number := func(limit int) (int, error) {
		n, err := strconv.Atoi(value)
		if !hasValue || err != nil || n < 0 {
			return 0, fmt.Errorf("option %q needs a number", opt)
		}
		return min(n, limit), nil
	}
	var err error
	switch key {
	case "ndots":
		rc.ndots, err = number(maxNdots)
	case "timeout":
		var secs int
		secs, err = number(maxTimeoutSecs)
		rc.timeout = time.Duration(max(secs, 1)) * time.Second
	case "attempts":
		rc.attempts, err = number(maxAttempts)
		rc.attempts = max(rc.attempts, 1)
	case "rotate":
		rc.rotate = true
	case "use-vc":
		rc.useTCP = true
	case "edns0", "trust-ad", "single-request", "single-request-reopen", "no-reload", "debug":
		// How glibc asks, not what it answers.
	default:
		rc.unmodelled = append(rc.unmodelled, key)
	}
	return err
}
