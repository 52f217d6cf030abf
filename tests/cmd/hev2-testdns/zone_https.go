package main

import (
	"bytes"
	"encoding/base64"
	"encoding/json"
	"errors"
	"fmt"
	"net"
	"net/netip"
	"slices"
	"sort"
	"strconv"
	"strings"

	"github.com/miekg/dns"

	"github.com/hev2/hev2/tests/testdns"
)

// httpsRecord is one record of an HTTPS entry (see the command's doc): an
// object written as RFC 9460's presentation form reads, its SvcParams under
// their own names.
type httpsRecord struct {
	testdns.HTTPSRecord
}

// svcParamNames are the SvcParamKeys written by name (RFC 9460 §14.3.2);
// any other key is written keyNNNNN.
var svcParamNames = map[string]dns.SVCBKey{
	"mandatory":       dns.SVCB_MANDATORY,
	"alpn":            dns.SVCB_ALPN,
	"no-default-alpn": dns.SVCB_NO_DEFAULT_ALPN,
	"port":            dns.SVCB_PORT,
	"ipv4hint":        dns.SVCB_IPV4HINT,
	"ech":             dns.SVCB_ECHCONFIG,
	"ipv6hint":        dns.SVCB_IPV6HINT,
}

// svcParamKey reads a key's name: one of svcParamNames, or keyNNNNN for a
// key that has none of them.
func svcParamKey(name string) (dns.SVCBKey, error) {
	if k, ok := svcParamNames[name]; ok {
		return k, nil
	}
	if digits, ok := strings.CutPrefix(name, "key"); ok {
		n, err := strconv.ParseUint(digits, 10, 16)
		if err == nil && n > uint64(dns.SVCB_IPV6HINT) {
			return dns.SVCBKey(n), nil
		}
		if err == nil {
			return 0, fmt.Errorf("%s has a name: %q", name, dns.SVCBKey(n).String())
		}
	}
	return 0, fmt.Errorf("unknown SvcParamKey %q (mandatory, alpn, no-default-alpn, port, ipv4hint, ech, ipv6hint or keyNNNNN)", name)
}

func (r *httpsRecord) UnmarshalJSON(text []byte) error {
	var fields map[string]json.RawMessage
	if err := json.Unmarshal(text, &fields); err != nil {
		return err
	}
	if fields == nil {
		return errors.New("an HTTPS record is an object")
	}
	for _, whole := range []string{"malformed", "rdata"} {
		if raw, ok := fields[whole]; ok {
			if len(fields) != 1 {
				return fmt.Errorf("%q is a record of its own: no other field beside it", whole)
			}
			return r.raw(whole, raw)
		}
	}
	raw, ok := fields["priority"]
	if !ok {
		return errors.New(`an HTTPS record needs its "priority" (0: AliasMode)`)
	}
	if err := json.Unmarshal(raw, &r.Priority); err != nil {
		return fmt.Errorf("priority: %w", err)
	}
	r.Target = "."
	if raw, ok := fields["target"]; ok {
		if err := json.Unmarshal(raw, &r.Target); err != nil {
			return fmt.Errorf("target: %w", err)
		}
		if _, ok := dns.IsDomainName(r.Target); !ok {
			return fmt.Errorf("target %q is not a domain name", r.Target)
		}
	}
	names := make([]string, 0, len(fields))
	for name := range fields {
		if name != "priority" && name != "target" {
			names = append(names, name)
		}
	}
	sort.Strings(names) // the same error first on every run
	for _, name := range names {
		p, err := svcParam(name, fields[name])
		if err != nil {
			return err
		}
		r.Params = append(r.Params, p)
	}
	return r.Check()
}

// raw reads a record given whole: {"malformed": KIND} or {"rdata": BASE64}.
func (r *httpsRecord) raw(whole string, value json.RawMessage) error {
	var s string
	if err := json.Unmarshal(value, &s); err != nil {
		return fmt.Errorf("%s: %w", whole, err)
	}
	if whole == "malformed" {
		rec, err := testdns.MalformedHTTPS(s)
		r.HTTPSRecord = rec
		return err
	}
	rdata, err := base64.StdEncoding.DecodeString(s)
	if err != nil {
		return fmt.Errorf("rdata: %w", err)
	}
	if rdata == nil {
		rdata = []byte{} // an empty RDATA, not none
	}
	r.HTTPSRecord = testdns.HTTPSRecord{RData: rdata}
	return nil
}

// errOneOrMore refuses an empty list where RFC 9460 wants one or more
// values: the record would be malformed, and a malformed record is asked
// for by name ({"malformed": KIND}), never made by accident.
var errOneOrMore = errors.New("one or more values (a malformed record is {\"malformed\": KIND})")

// svcParam reads one SvcParam given by name.
func svcParam(name string, raw json.RawMessage) (dns.SVCBKeyValue, error) {
	key, err := svcParamKey(name)
	if err != nil {
		return nil, err
	}
	fail := func(err error) (dns.SVCBKeyValue, error) { return nil, fmt.Errorf("%s: %w", name, err) }
	strict := func(v any) error {
		d := json.NewDecoder(bytes.NewReader(raw))
		d.DisallowUnknownFields()
		return d.Decode(v)
	}
	switch key {
	case dns.SVCB_MANDATORY:
		var keys []string
		if err := strict(&keys); err != nil {
			return fail(err)
		}
		if len(keys) == 0 {
			return fail(errOneOrMore)
		}
		p := &dns.SVCBMandatory{}
		for _, k := range keys {
			code, err := svcParamKey(k)
			if err != nil {
				return fail(err)
			}
			if code == dns.SVCB_MANDATORY || slices.Contains(p.Code, code) {
				return fail(fmt.Errorf("lists %s twice or itself (a malformed record is {\"malformed\": KIND})", k))
			}
			p.Code = append(p.Code, code)
		}
		return p, nil
	case dns.SVCB_ALPN:
		p := &dns.SVCBAlpn{}
		if err := strict(&p.Alpn); err != nil {
			return fail(err)
		}
		if len(p.Alpn) == 0 {
			return fail(errOneOrMore)
		}
		return p, nil
	case dns.SVCB_NO_DEFAULT_ALPN:
		var set bool
		if err := strict(&set); err != nil || !set {
			return fail(errors.New("is true, or left out"))
		}
		return &dns.SVCBNoDefaultAlpn{}, nil
	case dns.SVCB_PORT:
		p := &dns.SVCBPort{}
		if err := strict(&p.Port); err != nil {
			return fail(err)
		}
		return p, nil
	case dns.SVCB_IPV4HINT, dns.SVCB_IPV6HINT:
		var addrs []string
		if err := strict(&addrs); err != nil {
			return fail(err)
		}
		if len(addrs) == 0 {
			return fail(errOneOrMore)
		}
		var hints []net.IP
		for _, s := range addrs {
			a, err := netip.ParseAddr(s)
			if err != nil {
				return fail(err)
			}
			if a.Is4() != (key == dns.SVCB_IPV4HINT) || a.Is4In6() || a.Zone() != "" {
				return fail(fmt.Errorf("%s is not an address of its family", s))
			}
			hints = append(hints, a.AsSlice())
		}
		if key == dns.SVCB_IPV4HINT {
			return &dns.SVCBIPv4Hint{Hint: hints}, nil
		}
		return &dns.SVCBIPv6Hint{Hint: hints}, nil
	case dns.SVCB_ECHCONFIG:
		var s string
		if err := strict(&s); err != nil {
			return fail(err)
		}
		ech, err := base64.StdEncoding.DecodeString(s)
		if err != nil {
			return fail(err)
		}
		return &dns.SVCBECHConfig{ECH: ech}, nil
	}
	// A key of no name here: its value is the string's bytes.
	var s string
	if err := strict(&s); err != nil {
		return fail(err)
	}
	return &dns.SVCBLocal{KeyCode: key, Data: []byte(s)}, nil
}
