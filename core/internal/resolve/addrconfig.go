package resolve

import (
	"net"
	"os"
	"sync"
	"sync/atomic"
	"time"

	"github.com/vishvananda/netlink"
	"golang.org/x/sys/unix"

	"github.com/hev2/hev2/core/internal/race"
)

// hostFamilies knows which address families this host can reach the world
// with. It is what AI_ADDRCONFIG asks glibc to work out on every call; hev2
// works it out once and then again only when the kernel announces an address
// change (an rtnetlink subscription read through the netpoller, so no thread
// waits on it).
//
// hev2 never passes AI_ADDRCONFIG to getaddrinfo: with an explicit family it
// hides "localhost" on a loopback-only host (Ruby Bug #20048). Instead the
// system resolver skips a family only when the host has usable addresses of
// the other family and none of this one (Ruby #19144: no wasted AAAA query,
// no wait for an answer nobody can use, on an IPv4-only host).
type hostFamilies struct {
	mu      sync.Mutex
	started atomic.Bool
	retryAt time.Time // guarded by mu: when to try subscribing again
	state   atomic.Uint32
}

// addrConfigRetry spaces attempts to subscribe after one failed (e.g. no
// fd was free): until then no family is skipped.
const addrConfigRetry = time.Second

const (
	familiesKnown uint32 = 1 << iota
	familiesHaveIPv4
	familiesHaveIPv6
)

var localFamilies hostFamilies

// AddrConfigFamilies reports whether this host has a usable IPv4 and IPv6
// address (not loopback; for IPv6 not link-local either), and known=false if
// it could not tell (no netlink), in which case no family is skipped. The
// host is the network namespace of the thread that made the first lookup.
func AddrConfigFamilies() (ipv4, ipv6, known bool) {
	s := localFamilies.load()
	return s&familiesHaveIPv4 != 0, s&familiesHaveIPv6 != 0, s&familiesKnown != 0
}

func (h *hostFamilies) load() uint32 {
	if !h.started.Load() {
		h.start()
	}
	return h.state.Load()
}

// wants reports whether a lookup of family is worth making.
func (h *hostFamilies) wants(family race.Family) bool {
	s := h.load()
	if s&familiesKnown == 0 || s&(familiesHaveIPv4|familiesHaveIPv6) == 0 {
		// Unknown, or loopback-only: nothing to narrow on; names such as
		// localhost must still resolve in both families.
		return true
	}
	if family == race.IPv6 {
		return s&familiesHaveIPv6 != 0
	}
	return s&familiesHaveIPv4 != 0
}

func (h *hostFamilies) start() {
	h.mu.Lock()
	defer h.mu.Unlock()
	if h.started.Load() || time.Now().Before(h.retryAt) {
		return
	}
	sock, err := subscribeAddrChanges()
	if err != nil {
		// Without a subscription the answer would go stale: skip
		// nothing until a later attempt succeeds.
		h.state.Store(0)
		h.retryAt = time.Now().Add(addrConfigRetry)
		return
	}
	h.refresh()
	h.started.Store(true)
	go h.watch(sock)
}

// refresh reads every address of the host (one netlink dump).
func (h *hostFamilies) refresh() {
	addrs, err := netlink.AddrList(nil, netlink.FAMILY_ALL)
	if err != nil {
		h.state.Store(0)
		return
	}
	s := familiesKnown
	for _, a := range addrs {
		s |= familyBit(a.IP)
	}
	h.state.Store(s)
}

func familyBit(ip net.IP) uint32 {
	switch {
	case ip.IsLoopback():
		return 0
	case ip.To4() != nil:
		return familiesHaveIPv4
	case ip.IsLinkLocalUnicast():
		// fe80::/10 reaches no name's global address.
		return 0
	}
	return familiesHaveIPv6
}

// watch re-reads the addresses after every batch of change messages. Their
// content does not matter, only that something changed (and an overrun,
// ENOBUFS, means the same).
func (h *hostFamilies) watch(sock *os.File) {
	buf := make([]byte, 64<<10)
	for {
		_, err := sock.Read(buf)
		if err != nil && err != unix.ENOBUFS {
			// The socket is unusable: skip nothing, and subscribe
			// afresh later.
			sock.Close()
			h.mu.Lock()
			h.state.Store(0)
			h.retryAt = time.Now().Add(addrConfigRetry)
			h.started.Store(false)
			h.mu.Unlock()
			return
		}
		h.refresh()
	}
}

// subscribeAddrChanges opens a non-blocking rtnetlink socket subscribed to
// IPv4 and IPv6 address changes, wrapped so that reads park a goroutine, not
// a thread.
func subscribeAddrChanges() (*os.File, error) {
	fd, err := unix.Socket(unix.AF_NETLINK, unix.SOCK_RAW|unix.SOCK_NONBLOCK|unix.SOCK_CLOEXEC, unix.NETLINK_ROUTE)
	if err != nil {
		return nil, err
	}
	sa := &unix.SockaddrNetlink{Family: unix.AF_NETLINK, Groups: unix.RTMGRP_IPV4_IFADDR | unix.RTMGRP_IPV6_IFADDR}
	if err := unix.Bind(fd, sa); err != nil {
		unix.Close(fd)
		return nil, err
	}
	return os.NewFile(uintptr(fd), "hev2-addr-changes"), nil
}
