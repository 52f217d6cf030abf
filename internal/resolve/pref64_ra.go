package resolve

import (
	"encoding/binary"
	"net/netip"
	"os"
	"sync"
	"time"

	"golang.org/x/sys/unix"

	"github.com/hev2/hev2/internal/race"
)

// NAT64 prefixes from router advertisements (RFC 8781 PREF64 option).
// Linux passes the option to user space (since 5.8) as an RTM_NEWNDUSEROPT
// message on rtnetlink group RTNLGRP_ND_USEROPT, which any process may
// join; it keeps no state of it, so a process learns only the RAs sent
// after it subscribed (routers repeat them every few minutes). A prefix
// learnt that way is preferred to ipv4only.arpa's (it comes from the
// router itself, and costs no query) while its lifetime lasts; lifetime 0
// withdraws it. A network change forgets it like a discovered prefix,
// except when it came within raGrace of the change: an RA and the routes
// it installs arrive together, in either order.

const (
	ndOptPREF64        = 38
	rtnlgrpNDUserOpt   = 20
	raGrace            = 2 * time.Second
	nduseroptHeaderLen = 16 // struct nduseroptmsg
)

type raPrefix struct {
	prefix   netip.Prefix
	ifindex  int32
	received time.Time
	expires  time.Time
}

var raPrefixes struct {
	mu   sync.Mutex
	list []raPrefix
}

// startRAWatch subscribes to the kernel's router-advertisement options in
// the calling thread's network namespace; without it (no netlink) only
// ipv4only.arpa discovers.
func startRAWatch() {
	fd, err := unix.Socket(unix.AF_NETLINK, unix.SOCK_RAW|unix.SOCK_NONBLOCK|unix.SOCK_CLOEXEC, unix.NETLINK_ROUTE)
	if err != nil {
		return
	}
	if err := unix.Bind(fd, &unix.SockaddrNetlink{Family: unix.AF_NETLINK, Groups: 1 << (rtnlgrpNDUserOpt - 1)}); err != nil {
		unix.Close(fd)
		return
	}
	sock := os.NewFile(uintptr(fd), "hev2-ra-options")
	go watchRA(sock)
}

func watchRA(sock *os.File) {
	buf := make([]byte, 16<<10)
	for {
		n, err := sock.Read(buf)
		if err != nil && err != unix.ENOBUFS {
			sock.Close()
			return
		}
		if n > 0 {
			raMessages(buf[:n], time.Now())
		}
	}
}

// raMessages takes the PREF64 options out of a batch of netlink messages.
func raMessages(b []byte, now time.Time) {
	for len(b) >= unix.NLMSG_HDRLEN {
		l := int(binary.NativeEndian.Uint32(b[0:4]))
		typ := binary.NativeEndian.Uint16(b[4:6])
		if l < unix.NLMSG_HDRLEN || l > len(b) {
			return
		}
		if typ == unix.RTM_NEWNDUSEROPT {
			raUserOpt(b[unix.NLMSG_HDRLEN:l], now)
		}
		b = b[min(len(b), (l+3)&^3):]
	}
}

// raUserOpt reads one nduseroptmsg: an ICMPv6 router advertisement's
// options, as they were on the wire.
func raUserOpt(m []byte, now time.Time) {
	if len(m) < nduseroptHeaderLen || m[0] != unix.AF_INET6 || m[8] != 134 {
		return
	}
	optsLen := int(binary.NativeEndian.Uint16(m[2:4]))
	ifindex := int32(binary.NativeEndian.Uint32(m[4:8]))
	opts := m[nduseroptHeaderLen:]
	if optsLen > len(opts) {
		return
	}
	opts = opts[:optsLen]
	for len(opts) >= 8 {
		n := int(opts[1]) * 8
		if n == 0 || n > len(opts) {
			return
		}
		if opts[0] == ndOptPREF64 {
			if p, life, ok := parsePREF64(opts[:n]); ok {
				rememberRAPrefix(p, life, ifindex, now)
			}
		}
		opts = opts[n:]
	}
}

// parsePREF64 decodes RFC 8781 §4: scaled lifetime (13 bits, units of 8
// s) and prefix length code (3 bits), then the prefix's first 96 bits.
func parsePREF64(o []byte) (netip.Prefix, time.Duration, bool) {
	if len(o) != 16 {
		return netip.Prefix{}, 0, false
	}
	v := binary.BigEndian.Uint16(o[2:4])
	plcBits := [...]int{96, 64, 56, 48, 40, 32} // RFC 8781 §4, PLC 0-5
	if int(v&7) >= len(plcBits) {
		return netip.Prefix{}, 0, false
	}
	var a [16]byte
	copy(a[:12], o[4:16])
	p, err := netip.AddrFrom16(a).Prefix(plcBits[v&7])
	if err != nil || !race.ValidPrefix64(p) {
		return netip.Prefix{}, 0, false
	}
	return p, time.Duration(v>>3) * 8 * time.Second, true
}

func rememberRAPrefix(p netip.Prefix, life time.Duration, ifindex int32, now time.Time) {
	raPrefixes.mu.Lock()
	defer raPrefixes.mu.Unlock()
	list := raPrefixes.list[:0]
	for _, e := range raPrefixes.list {
		if e.prefix != p || e.ifindex != ifindex {
			list = append(list, e)
		}
	}
	if life > 0 {
		list = append(list, raPrefix{prefix: p, ifindex: ifindex, received: now, expires: now.Add(life)})
	}
	raPrefixes.list = list
}

// currentRAPrefixes are the router-advertised prefixes still valid.
func currentRAPrefixes(now time.Time) []netip.Prefix {
	raPrefixes.mu.Lock()
	defer raPrefixes.mu.Unlock()
	var out []netip.Prefix
	for _, e := range raPrefixes.list {
		if now.Before(e.expires) {
			out = append(out, e.prefix)
		}
	}
	return out
}

// forgetRAPrefixes drops what was learnt before a network change (see
// raGrace).
func forgetRAPrefixes(now time.Time) {
	raPrefixes.mu.Lock()
	defer raPrefixes.mu.Unlock()
	list := raPrefixes.list[:0]
	for _, e := range raPrefixes.list {
		if now.Sub(e.received) < raGrace {
			list = append(list, e)
		}
	}
	raPrefixes.list = list
}
