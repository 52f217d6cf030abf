package resolve

import (
	"bytes"
	"encoding/binary"
	"errors"
	"fmt"
	"math/rand/v2"
	"net/netip"

	"golang.org/x/net/dns/dnsmessage"

	"github.com/hev2/hev2/internal/race"
)

// The HTTPS answer as the race reads it (RFC 9460), decoded leniently: a
// record that does not decode is dropped alone and counted, and the rest of
// the RRset stands, as §2.2 and §8 have a client do. Whether a record suits
// the race (its mandatory keys known, its ALPN the caller's) is not decided
// here: that is the machine's, from the record's contents.

// serviceAnswer reads the HTTPS RRset that answers qname in resp: the class
// IN HTTPS records owned by the end of qname's CNAME chain (chainEnd, as
// for addresses), in the answer's order. An error is a broken CNAME chain.
func serviceAnswer(resp *dnsReply, qname string) (*race.ServiceAnswer, error) {
	name, err := chainEnd(resp.answers, qname)
	if err != nil {
		return nil, err
	}
	ans := &race.ServiceAnswer{}
	for _, h := range resp.dropped {
		if ownedBy(h, name) {
			ans.Malformed++
		}
	}
	var aliases []string
	for _, rr := range resp.answers {
		body, ok := rr.Body.(*dnsmessage.HTTPSResource)
		if !ok || !ownedBy(rr.Header, name) {
			continue
		}
		if body.Priority == 0 {
			// AliasMode: its SvcParams, if any, are ignored (§2.4.2),
			// so they cannot make it malformed.
			aliases = append(aliases, canonicalName(body.Target.String()))
			continue
		}
		rec, err := serviceRecord(&body.SVCBResource)
		if err != nil {
			ans.Malformed++
			continue
		}
		ans.Records = append(ans.Records, rec)
	}
	if len(aliases) > 0 {
		// An RRset holding an AliasMode record is that alias, its
		// ServiceMode records ignored; of several aliases one is picked
		// at random (§2.4.2).
		ans.Alias, ans.Records = aliases[rand.IntN(len(aliases))], nil
	}
	return ans, nil
}

var (
	errKeyOrder   = errors.New("SvcParamKeys not in strictly increasing order")
	errParamValue = errors.New("malformed value")
)

// serviceRecord decodes a ServiceMode record's SvcParams: every key kept
// in Keys, the values of the keys the race knows checked and read, the
// others' left alone (an unknown key is not an error: whether it was
// mandatory is for the machine to see).
func serviceRecord(svcb *dnsmessage.SVCBResource) (race.ServiceRecord, error) {
	rec := race.ServiceRecord{
		Priority: svcb.Priority,
		Target:   canonicalName(svcb.Target.String()), // "." stays "."
	}
	for i, p := range svcb.Params {
		key := race.SvcParamKey(p.Key)
		// dnsmessage refuses this too; checked again so that the rule
		// does not rest on another package's reading.
		if i > 0 && p.Key <= svcb.Params[i-1].Key {
			return race.ServiceRecord{}, errKeyOrder
		}
		rec.Keys = append(rec.Keys, key)
		var ok bool
		v := p.Value
		switch key {
		case race.KeyMandatory:
			rec.Mandatory, ok = mandatoryKeys(v)
		case race.KeyALPN:
			rec.ALPN, ok = alpnIDs(v)
		case race.KeyNoDefaultALPN:
			rec.NoDefaultALPN, ok = true, len(v) == 0
		case race.KeyPort:
			if ok = len(v) == 2; ok {
				rec.Port = binary.BigEndian.Uint16(v)
			}
		case race.KeyIPv4Hint:
			rec.IPv4Hint, ok = hintAddrs(v, 4)
		case race.KeyECH:
			// An ECHConfigList, opaque here: the TLS stack reads it.
			rec.ECH, ok = bytes.Clone(v), true
			if rec.ECH == nil {
				rec.ECH = []byte{}
			}
		case race.KeyIPv6Hint:
			rec.IPv6Hint, ok = hintAddrs(v, 16)
		default:
			ok = true
		}
		if !ok {
			return race.ServiceRecord{}, fmt.Errorf("key%d: %w", p.Key, errParamValue)
		}
	}
	return rec, nil
}

// mandatoryKeys reads "mandatory" (§8): one or more keys of 2 bytes, never
// "mandatory" itself, none twice. They are kept in the wire's order (which
// RFC 9460 has increasing, a rule of the writer's the reader need not
// enforce to understand the list).
func mandatoryKeys(v []byte) ([]race.SvcParamKey, bool) {
	if len(v) == 0 || len(v)%2 != 0 {
		return nil, false
	}
	keys := make([]race.SvcParamKey, 0, len(v)/2)
	for ; len(v) > 0; v = v[2:] {
		k := race.SvcParamKey(binary.BigEndian.Uint16(v))
		if k == race.KeyMandatory {
			return nil, false
		}
		for _, seen := range keys {
			if seen == k {
				return nil, false
			}
		}
		keys = append(keys, k)
	}
	return keys, true
}

// alpnIDs reads "alpn" (§7.1.1): one or more alpn-ids, each a length byte
// of 1 or more and that many bytes, filling the value exactly.
func alpnIDs(v []byte) ([]string, bool) {
	if len(v) == 0 {
		return nil, false
	}
	var ids []string
	for len(v) > 0 {
		n := int(v[0])
		if n == 0 || 1+n > len(v) {
			return nil, false
		}
		ids = append(ids, string(v[1:1+n]))
		v = v[1+n:]
	}
	return ids, true
}

// hintAddrs reads "ipv4hint" or "ipv6hint" (§7.3): one or more addresses
// of size bytes. As for A and AAAA answers, an IPv4-mapped IPv6 hint is no
// IPv6 destination and is left out, a repeated address is taken once, and
// at most maxAnswerAddrs are taken.
func hintAddrs(v []byte, size int) ([]netip.Addr, bool) {
	if len(v) == 0 || len(v)%size != 0 {
		return nil, false
	}
	var addrs []netip.Addr
	for ; len(v) > 0 && len(addrs) < maxAnswerAddrs; v = v[size:] {
		a, _ := netip.AddrFromSlice(v[:size])
		if a.Is4In6() {
			continue
		}
		addrs = appendUnique(addrs, a)
	}
	return addrs, true
}
