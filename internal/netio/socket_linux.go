package netio

import (
	"net"
	"net/netip"
	"time"

	"golang.org/x/sys/unix"

	"github.com/hev2/hev2/internal/race"
)

// sockaddrOf converts an address for the kernel. A zone (fe80::1%eth0) is
// looked up as an interface name or number.
func sockaddrOf(ap netip.AddrPort) (unix.Sockaddr, int, error) {
	a := ap.Addr()
	if a.Is4() || a.Is4In6() {
		return &unix.SockaddrInet4{Port: int(ap.Port()), Addr: a.Unmap().As4()}, unix.AF_INET, nil
	}
	sa := &unix.SockaddrInet6{Port: int(ap.Port()), Addr: a.As16()}
	if z := a.Zone(); z != "" {
		ifi, err := net.InterfaceByName(z)
		if err != nil {
			return nil, 0, err
		}
		sa.ZoneId = uint32(ifi.Index)
	}
	return sa, unix.AF_INET6, nil
}

// startConnect opens a non-blocking socket and starts connecting it: two
// raw syscalls (three with a local address to bind). connected is true when
// the kernel completed the handshake at once.
func startConnect(dst netip.AddrPort, local netip.AddrPort) (fd int, connected bool, err error) {
	family, scope := unix.AF_INET6, uint32(0)
	if a := dst.Addr(); a.Is4() || a.Is4In6() {
		family = unix.AF_INET
	} else if a.Zone() != "" {
		ifi, err := net.InterfaceByName(a.Zone())
		if err != nil {
			return -1, false, err
		}
		scope = uint32(ifi.Index)
	}
	fd, err = rawSocket(family)
	if err != nil {
		return -1, false, err
	}
	if local.Addr().IsValid() || local.Port() != 0 {
		if err := bindLocal(fd, family, local); err != nil {
			rawClose(fd)
			return -1, false, err
		}
	}
	switch e := rawConnect(fd, dst, scope); e {
	case 0:
		return fd, true, nil
	case unix.EINPROGRESS, unix.EINTR:
		// A connect interrupted by a signal goes on in the background
		// (connect(2)): wait for it like any other connect in progress.
		return fd, false, nil
	default:
		rawClose(fd)
		return -1, false, e
	}
}

func bindLocal(fd, family int, local netip.AddrPort) error {
	var sa unix.Sockaddr
	if family == unix.AF_INET {
		sa4 := &unix.SockaddrInet4{Port: int(local.Port())}
		if local.Addr().IsValid() { // a local port alone binds the wildcard address
			sa4.Addr = local.Addr().Unmap().As4()
		}
		sa = sa4
	} else {
		sa6 := &unix.SockaddrInet6{Port: int(local.Port())}
		if local.Addr().IsValid() {
			sa6.Addr = local.Addr().As16()
		}
		sa = sa6
	}
	if err := unix.Bind(fd, sa); err != nil {
		errno, _ := err.(unix.Errno)
		return &race.BindError{Local: local, Err: errno}
	}
	return nil
}

// readyResult is the outcome of a connect that poll(2) or epoll reported
// with revents (epoll's bits are poll's): writable and nothing else means
// connected, without a getsockopt. A TCP socket is never writable while
// its connect is in progress (tcp_poll reports nothing in SYN-SENT), and a
// failed connect sets POLLERR (and POLLHUP once closed); only then is
// SO_ERROR read.
func readyResult(fd int, revents int16) error {
	if revents == unix.POLLOUT {
		return nil
	}
	return rawSOError(fd)
}

// closeFD closes a socket of the race.
func closeFD(fd int) { rawClose(fd) }

// kernelSource asks the kernel which source address it would use for dst,
// by connecting a UDP socket (no packet is sent).
func kernelSource(dst netip.Addr) (netip.Addr, bool) {
	sa, family, err := sockaddrOf(netip.AddrPortFrom(dst, 9))
	if err != nil {
		return netip.Addr{}, false
	}
	fd, err := unix.Socket(family, unix.SOCK_DGRAM|unix.SOCK_CLOEXEC, 0)
	if err != nil {
		return netip.Addr{}, false
	}
	defer unix.Close(fd)
	if err := unix.Connect(fd, sa); err != nil {
		return netip.Addr{}, false
	}
	lsa, err := unix.Getsockname(fd)
	if err != nil {
		return netip.Addr{}, false
	}
	switch s := lsa.(type) {
	case *unix.SockaddrInet4:
		return netip.AddrFrom4(s.Addr), true
	case *unix.SockaddrInet6:
		return netip.AddrFrom16(s.Addr), true
	}
	return netip.Addr{}, false
}

// SocketOptions are set on the winner, and nothing else: each costs a
// syscall.
type SocketOptions struct {
	NoDelay   bool          // TCP_NODELAY
	KeepAlive time.Duration // > 0: SO_KEEPALIVE with this idle time
	Blocking  bool          // clear O_NONBLOCK
}

func applySocketOptions(fd int, d *SocketOptions) error {
	if d.NoDelay {
		if err := rawSetsockoptInt(fd, unix.IPPROTO_TCP, unix.TCP_NODELAY, 1); err != nil {
			return err
		}
	}
	if d.KeepAlive > 0 {
		secs := int((d.KeepAlive + time.Second - 1) / time.Second)
		if err := rawSetsockoptInt(fd, unix.SOL_SOCKET, unix.SO_KEEPALIVE, 1); err != nil {
			return err
		}
		if err := rawSetsockoptInt(fd, unix.IPPROTO_TCP, unix.TCP_KEEPIDLE, secs); err != nil {
			return err
		}
		if err := rawSetsockoptInt(fd, unix.IPPROTO_TCP, unix.TCP_KEEPINTVL, secs); err != nil {
			return err
		}
	}
	if d.Blocking {
		if err := rawSetBlocking(fd); err != nil {
			return err
		}
	}
	return nil
}
