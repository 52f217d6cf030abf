package resolve

import (
	"encoding/binary"
	"net/netip"
	"testing"
	"time"

	"golang.org/x/sys/unix"
)

// raMessage builds what the kernel sends for one RA option: a netlink
// header, a struct nduseroptmsg, the option as it was on the wire.
func raMessage(opt []byte) []byte {
	m := make([]byte, unix.NLMSG_HDRLEN+nduseroptHeaderLen+len(opt))
	binary.NativeEndian.PutUint32(m[0:4], uint32(len(m)))
	binary.NativeEndian.PutUint16(m[4:6], unix.RTM_NEWNDUSEROPT)
	u := m[unix.NLMSG_HDRLEN:]
	u[0] = unix.AF_INET6
	binary.NativeEndian.PutUint16(u[2:4], uint16(len(opt)))
	binary.NativeEndian.PutUint32(u[4:8], 7)
	u[8] = 134 // router advertisement
	copy(u[nduseroptHeaderLen:], opt)
	return m
}

func pref64Option(p netip.Prefix, plc uint16, lifetime time.Duration) []byte {
	o := []byte{ndOptPREF64, 2, 0, 0}
	o = binary.BigEndian.AppendUint16(o[:2], uint16(lifetime/time.Second/8)<<3|plc)
	a := p.Addr().As16()
	return append(o, a[:12]...)
}

// RFC 8781 §4: every prefix length code, the lifetime in units of 8 s,
// lifetime 0 withdrawing, unknown codes and other options ignored.
func TestRAPrefixesFromNetlink(t *testing.T) {
	now := time.Unix(1000, 0)
	defer func() { raPrefixes.list = nil }()
	for plc, bits := range []int{96, 64, 56, 48, 40, 32} {
		raPrefixes.list = nil
		p := netip.PrefixFrom(netip.MustParseAddr("2001:db8:64::"), bits).Masked()
		raMessages(raMessage(pref64Option(p, uint16(plc), 600*time.Second)), now)
		got := currentRAPrefixes(now)
		if len(got) != 1 || got[0] != p {
			t.Fatalf("PLC %d: %v, want %v", plc, got, p)
		}
		if got := currentRAPrefixes(now.Add(600 * time.Second)); len(got) != 0 {
			t.Fatalf("PLC %d: still %v after its lifetime", plc, got)
		}
	}
	raPrefixes.list = nil
	p := netip.MustParsePrefix("2001:db8:64:64::/96")
	raMessages(raMessage(pref64Option(p, 0, 600*time.Second)), now)
	raMessages(raMessage(pref64Option(p, 0, 0)), now)
	if got := currentRAPrefixes(now); len(got) != 0 {
		t.Fatalf("lifetime 0 did not withdraw: %v", got)
	}
	rdnss := []byte{25, 3, 0, 0, 0, 0, 2, 88, 0x20, 1, 0x0d, 0xb8, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0x53}
	raMessages(append(raMessage(pref64Option(p, 6, 600*time.Second)), raMessage(rdnss)...), now)
	if got := currentRAPrefixes(now); len(got) != 0 {
		t.Fatalf("PLC 6 or an RDNSS option gave %v", got)
	}
}
