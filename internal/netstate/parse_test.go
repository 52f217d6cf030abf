package netstate_test

import (
	"encoding/binary"
	"net/netip"
	"reflect"
	"testing"

	"golang.org/x/sys/unix"

	"github.com/hev2/hev2/internal/netstate"
)

// rtattr is one attribute as the kernel writes it: length, type, value,
// padding to four bytes.
func rtattr(typ uint16, val []byte) []byte {
	b := make([]byte, (unix.SizeofRtAttr+len(val)+3)&^3)
	binary.NativeEndian.PutUint16(b[0:2], uint16(unix.SizeofRtAttr+len(val)))
	binary.NativeEndian.PutUint16(b[2:4], typ)
	copy(b[unix.SizeofRtAttr:], val)
	return b
}

func u32(v uint32) []byte { return binary.NativeEndian.AppendUint32(nil, v) }

func ipBytes(s string) []byte { return netip.MustParseAddr(s).AsSlice() }

// rtmsg is an RTM_NEWROUTE body: struct rtmsg, then attributes.
func rtmsg(family, dstLen, table, typ uint8, flags uint32, attrs ...[]byte) []byte {
	b := []byte{family, dstLen, 0, 0, table, unix.RTPROT_STATIC, unix.RT_SCOPE_UNIVERSE, typ}
	b = binary.NativeEndian.AppendUint32(b, flags)
	for _, a := range attrs {
		b = append(b, a...)
	}
	return b
}

// rtnexthop is one entry of RTA_MULTIPATH.
func rtnexthop(ifindex uint32, attrs ...[]byte) []byte {
	b := make([]byte, unix.SizeofRtNexthop)
	binary.NativeEndian.PutUint32(b[4:8], ifindex)
	for _, a := range attrs {
		b = append(b, a...)
	}
	binary.NativeEndian.PutUint16(b[0:2], uint16(len(b)))
	return b
}

func TestParseRoute(t *testing.T) {
	// A table past 255: rtm_table says RT_TABLE_COMPAT, RTA_TABLE the table.
	body := rtmsg(unix.AF_INET, 24, unix.RT_TABLE_COMPAT, unix.RTN_UNICAST, 0,
		rtattr(unix.RTA_TABLE, u32(1000)),
		rtattr(unix.RTA_DST, ipBytes("198.18.0.0")),
		rtattr(unix.RTA_PRIORITY, u32(100)),
		rtattr(unix.RTA_GATEWAY, ipBytes("198.18.0.1")),
		rtattr(unix.RTA_OIF, u32(2)))
	r, ok, err := netstate.ParseRoute(body)
	want := netstate.Route{Family: unix.AF_INET, Type: unix.RTN_UNICAST, Table: 1000,
		Dst: netip.MustParsePrefix("198.18.0.0/24"), Gateway: netip.MustParseAddr("198.18.0.1"), Ifindex: 2}
	if !ok || err != nil || !reflect.DeepEqual(r, want) {
		t.Errorf("a route via a gateway: %+v %v %v, want %+v", r, ok, err, want)
	}

	// An IPv6 default route over two routers: no RTA_DST, RTA_MULTIPATH.
	multipath := rtnexthop(2, rtattr(unix.RTA_GATEWAY, ipBytes("fe80::1")))
	multipath = append(multipath, rtnexthop(3, rtattr(unix.RTA_GATEWAY, ipBytes("fe80::2")))...)
	body = rtmsg(unix.AF_INET6, 0, unix.RT_TABLE_MAIN, unix.RTN_UNICAST, 0,
		rtattr(unix.RTA_TABLE, u32(unix.RT_TABLE_MAIN)),
		rtattr(unix.RTA_MULTIPATH, multipath))
	r, ok, err = netstate.ParseRoute(body)
	want = netstate.Route{Family: unix.AF_INET6, Type: unix.RTN_UNICAST, Table: unix.RT_TABLE_MAIN,
		Nexthops: []netstate.Nexthop{
			{Gateway: netip.MustParseAddr("fe80::1"), Ifindex: 2},
			{Gateway: netip.MustParseAddr("fe80::2"), Ifindex: 3},
		}}
	if !ok || err != nil || !reflect.DeepEqual(r, want) {
		t.Errorf("a multipath default route: %+v %v %v, want %+v", r, ok, err, want)
	}
}

func TestParseRouteSkipsWhatIsNoIPRoute(t *testing.T) {
	for name, body := range map[string][]byte{
		"a cached clone": rtmsg(unix.AF_INET6, 128, unix.RT_TABLE_MAIN, unix.RTN_UNICAST, unix.RTM_F_CLONED,
			rtattr(unix.RTA_DST, ipBytes("2001:db8::1"))),
		"an MPLS label route": rtmsg(unix.AF_MPLS, 20, unix.RT_TABLE_MAIN, unix.RTN_UNICAST, 0,
			rtattr(unix.RTA_DST, u32(100<<12|1<<8)), rtattr(unix.RTA_OIF, u32(2))),
	} {
		if _, ok, err := netstate.ParseRoute(body); ok || err != nil {
			t.Errorf("%s: ok %v, err %v", name, ok, err)
		}
	}
}

func TestParseRouteRefusesMalformed(t *testing.T) {
	overlong := rtattr(unix.RTA_OIF, u32(2))
	binary.NativeEndian.PutUint16(overlong[0:2], 64)
	shortHop := rtnexthop(2)[:unix.SizeofRtNexthop-2]
	for name, body := range map[string][]byte{
		"no rtmsg":                  {unix.AF_INET, 0, 0},
		"an attribute past the end": rtmsg(unix.AF_INET, 0, unix.RT_TABLE_MAIN, unix.RTN_UNICAST, 0, overlong),
		"a truncated next hop": rtmsg(unix.AF_INET, 0, unix.RT_TABLE_MAIN, unix.RTN_UNICAST, 0,
			rtattr(unix.RTA_MULTIPATH, shortHop)),
	} {
		if _, ok, err := netstate.ParseRoute(body); ok || err == nil {
			t.Errorf("%s: ok %v, err %v", name, ok, err)
		}
	}
}

// ifaddrmsg is an RTM_NEWADDR body: struct ifaddrmsg, then attributes.
func ifaddrmsg(family, prefixLen uint8, attrs ...[]byte) []byte {
	b := []byte{family, prefixLen, 0, unix.RT_SCOPE_UNIVERSE, 2, 0, 0, 0}
	for _, a := range attrs {
		b = append(b, a...)
	}
	return b
}

func TestParseAddr(t *testing.T) {
	cases := []struct {
		name string
		body []byte
		want netip.Addr
	}{
		{"IPv6: IFA_ADDRESS only",
			ifaddrmsg(unix.AF_INET6, 64, rtattr(unix.IFA_ADDRESS, ipBytes("2001:db8::2"))),
			netip.MustParseAddr("2001:db8::2")},
		{"point-to-point: IFA_ADDRESS is the peer",
			ifaddrmsg(unix.AF_INET, 32, rtattr(unix.IFA_ADDRESS, ipBytes("10.1.1.2")),
				rtattr(unix.IFA_LOCAL, ipBytes("10.1.1.1")), rtattr(unix.IFA_LABEL, []byte("d1\x00"))),
			netip.MustParseAddr("10.1.1.1")},
		{"not an IP family",
			ifaddrmsg(unix.AF_PHONET, 0, rtattr(unix.IFA_LOCAL, []byte{0x40})),
			netip.Addr{}},
	}
	for _, c := range cases {
		if got, err := netstate.ParseAddr(c.body); got != c.want || err != nil {
			t.Errorf("%s: %v %v, want %v", c.name, got, err, c.want)
		}
	}
	if _, err := netstate.ParseAddr([]byte{unix.AF_INET}); err == nil {
		t.Error("a truncated ifaddrmsg parsed")
	}
}
