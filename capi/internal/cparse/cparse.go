// Package cparse holds the parsers of the text a C caller hands to
// hev2_connect through hev2_options (static_hosts, nameservers,
// local_host). They live outside capi (package main, cgo) so that they can
// be fuzzed with `go test -fuzz`; capi calls them and turns their errors
// into HEV2_EOPTIONS with the same text.
//
// Strings from C never hold a NUL (they end at the first one); these
// parsers refuse one anyway, so no name they return ever contains one.
package cparse

import (
	"fmt"
	"net/netip"
	"strings"
)

// StaticHosts reads "NAME:ADDR[,ADDR...]" entries separated by ';' or white
// space (curl's --resolve without the port). A name is 1 to maxHostLen
// bytes long and holds no control character; an ADDR may be in brackets.
func StaticHosts(s string, maxHostLen int) (map[string][]netip.Addr, error) {
	hosts := map[string][]netip.Addr{}
	entries := strings.FieldsFunc(s, func(r rune) bool {
		return r == ';' || r == ' ' || r == '\t' || r == '\n' || r == '\r'
	})
	for _, e := range entries {
		name, list, ok := strings.Cut(e, ":")
		if !ok || name == "" || list == "" || len(name) > maxHostLen || hasControl(name) {
			return nil, fmt.Errorf("static_hosts entry %q is not NAME:ADDR[,ADDR...]", e)
		}
		for _, a := range strings.Split(list, ",") {
			addr, err := netip.ParseAddr(unbracket(a))
			if err != nil {
				return nil, fmt.Errorf("static_hosts entry %q: %q is not an IP address", e, a)
			}
			hosts[name] = append(hosts[name], addr)
		}
	}
	if len(hosts) == 0 {
		return nil, fmt.Errorf("static_hosts %q has no entry", s)
	}
	return hosts, nil
}

// Nameservers reads comma-separated "IP", "IP:PORT" or "[IPv6]:PORT" (a
// bare IP is port 53; port 0 is refused).
func Nameservers(s string) ([]netip.AddrPort, error) {
	var out []netip.AddrPort
	for _, f := range strings.Split(s, ",") {
		f = strings.TrimSpace(f)
		if a, err := netip.ParseAddr(f); err == nil {
			out = append(out, netip.AddrPortFrom(a, 53))
			continue
		}
		ap, err := netip.ParseAddrPort(f)
		if err != nil || ap.Port() == 0 {
			return nil, fmt.Errorf("nameserver %q is not IP, IP:PORT or [IPv6]:PORT", f)
		}
		out = append(out, ap)
	}
	return out, nil
}

// LocalHost reads the local address to bind attempts to: an IP address,
// an IPv6 one possibly in brackets.
func LocalHost(s string) (netip.Addr, error) {
	a, err := netip.ParseAddr(unbracket(s))
	if err != nil {
		return netip.Addr{}, fmt.Errorf("local_host %q is not an IP address", s)
	}
	return a, nil
}

// unbracket takes the brackets off "[addr]"; a lone "[" or "]" stays, so
// that a zone ending in "]" ("::%]") is not cut short.
func unbracket(s string) string {
	if len(s) >= 2 && s[0] == '[' && s[len(s)-1] == ']' {
		return s[1 : len(s)-1]
	}
	return s
}

// hasControl says whether s holds a NUL or another ASCII control byte,
// which no host name has.
func hasControl(s string) bool {
	for i := 0; i < len(s); i++ {
		if s[i] < 0x20 || s[i] == 0x7f {
			return true
		}
	}
	return false
}
