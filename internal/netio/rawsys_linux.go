package netio

import (
	"net/netip"
	"unsafe"

	"golang.org/x/sys/unix"
)

// The system calls on a connect's path that never block (socket, connect
// on a non-blocking socket, getsockopt, getpeername, epoll_ctl, the
// winner's setsockopt and fcntl, close, a poll with a zero timeout) are
// made as raw system calls: no entersyscall/exitsyscall around them. A
// loopback connect does the whole handshake inside connect(2), ~20 us;
// made as an ordinary system call, that is long enough for Go's sysmon to
// take the P away from the caller's thread and hand it to another thread,
// and the caller then pays for a futex wake-up and a P hand-off on its way
// back. Calls that may block (a poll with a timeout) stay ordinary system
// calls, so that the Go runtime can run other goroutines meanwhile.

func rawSocket(family int) (int, error) {
	fd, _, e := unix.RawSyscall(unix.SYS_SOCKET, uintptr(family), unix.SOCK_STREAM|unix.SOCK_NONBLOCK|unix.SOCK_CLOEXEC, unix.IPPROTO_TCP)
	if e != 0 {
		return -1, e
	}
	return int(fd), nil
}

// rawConnect starts connecting fd to dst (scope: the IPv6 zone's interface
// index, 0 for none); 0 when connected. An Errno, not an error: the caller
// tells EINPROGRESS apart on every connect, and comparing interfaces costs
// a boxing and a runtime call there.
func rawConnect(fd int, dst netip.AddrPort, scope uint32) unix.Errno {
	a := dst.Addr()
	var e unix.Errno
	if a.Is4() || a.Is4In6() {
		sa := unix.RawSockaddrInet4{Family: unix.AF_INET, Addr: a.Unmap().As4()}
		putPort(&sa.Port, dst.Port())
		_, _, e = unix.RawSyscall(unix.SYS_CONNECT, uintptr(fd), uintptr(unsafe.Pointer(&sa)), unsafe.Sizeof(sa))
	} else {
		sa := unix.RawSockaddrInet6{Family: unix.AF_INET6, Addr: a.As16(), Scope_id: scope}
		putPort(&sa.Port, dst.Port())
		_, _, e = unix.RawSyscall(unix.SYS_CONNECT, uintptr(fd), uintptr(unsafe.Pointer(&sa)), unsafe.Sizeof(sa))
	}
	return e
}

// putPort stores port in network byte order.
func putPort(p *uint16, port uint16) {
	b := (*[2]byte)(unsafe.Pointer(p))
	b[0], b[1] = byte(port>>8), byte(port)
}

// rawSOError reads SO_ERROR: the outcome of a finished connect.
func rawSOError(fd int) error {
	var v int32
	l := uint32(unsafe.Sizeof(v))
	_, _, e := unix.RawSyscall6(unix.SYS_GETSOCKOPT, uintptr(fd), unix.SOL_SOCKET, unix.SO_ERROR, uintptr(unsafe.Pointer(&v)), uintptr(unsafe.Pointer(&l)), 0)
	if e != 0 {
		return e
	}
	if v != 0 {
		return unix.Errno(v)
	}
	return nil
}

// rawClose closes fd. EINTR is not retried: on Linux the descriptor is gone
// after close returns, whatever it says, and retrying could close one that
// another thread just opened.
func rawClose(fd int) {
	unix.RawSyscall(unix.SYS_CLOSE, uintptr(fd), 0, 0)
}

// rawConnected reports whether fd's connect has completed, by asking for
// its peer: getpeername(2) succeeds once the handshake is done and fails
// (ENOTCONN) while it is in progress or after it failed, which a poll then
// tells apart. For one socket it is the cheaper question: no poll table,
// no wait queue, and a length of 0 copies no address out (bench-capi's
// call-by-call rows compare it with a zero-timeout poll).
func rawConnected(fd int) bool {
	var sa unix.RawSockaddrAny
	var l uint32 // 0: the kernel writes the address's length only
	_, _, e := unix.RawSyscall(unix.SYS_GETPEERNAME, uintptr(fd), uintptr(unsafe.Pointer(&sa)), uintptr(unsafe.Pointer(&l)))
	return e == 0
}

// rawSetsockoptInt sets an int socket option (the winner's TCP_NODELAY,
// keep-alive).
func rawSetsockoptInt(fd, level, opt, value int) error {
	v := int32(value)
	_, _, e := unix.RawSyscall6(unix.SYS_SETSOCKOPT, uintptr(fd), uintptr(level), uintptr(opt), uintptr(unsafe.Pointer(&v)), unsafe.Sizeof(v), 0)
	if e != 0 {
		return e
	}
	return nil
}

// rawSetBlocking makes fd blocking: F_SETFL with no flag, one system call,
// not F_GETFL then F_SETFL: the library made the socket, with O_NONBLOCK
// the only status flag F_SETFL can change.
func rawSetBlocking(fd int) error {
	_, _, e := unix.RawSyscall(unix.SYS_FCNTL, uintptr(fd), unix.F_SETFL, 0)
	if e != 0 {
		return e
	}
	return nil
}

// rawEpollAdd registers fd with the shared poller's epoll instance
// (epoll_ctl never blocks).
func rawEpollAdd(epfd, fd int, ev *unix.EpollEvent) error {
	_, _, e := unix.RawSyscall6(unix.SYS_EPOLL_CTL, uintptr(epfd), unix.EPOLL_CTL_ADD, uintptr(fd), uintptr(unsafe.Pointer(ev)), 0, 0)
	if e != 0 {
		return e
	}
	return nil
}

// rawPollNow reports which of fds are ready without waiting.
func rawPollNow(fds []unix.PollFd) (int, error) {
	var zero unix.Timespec
	n, _, e := unix.RawSyscall6(unix.SYS_PPOLL, uintptr(unsafe.Pointer(&fds[0])), uintptr(len(fds)), uintptr(unsafe.Pointer(&zero)), 0, 0, 0)
	if e != 0 {
		return 0, e
	}
	return int(n), nil
}
