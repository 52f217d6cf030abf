package netstate

import (
	"encoding/binary"
	"errors"
	"fmt"

	"golang.org/x/sys/unix"
)

// dumpBufSize holds the largest message batch the kernel sends a dump
// reader: it sizes a dump's batches by the reader's buffer, up to 32 KiB.
const dumpBufSize = 32 << 10

// errDumpInterrupted: the kernel's tables changed during a dump, whose
// answer may then mix the old state and the new.
var errDumpInterrupted = errors.New("rtnetlink: dump interrupted by a change")

// rtnl is one rtnetlink socket for the dumps of one read, connected to the
// kernel so that no other socket's message is ever queued on it.
type rtnl struct {
	fd  int
	seq uint32
	buf []byte
}

func dialRtnl() (*rtnl, error) {
	fd, err := unix.Socket(unix.AF_NETLINK, unix.SOCK_RAW|unix.SOCK_CLOEXEC, unix.NETLINK_ROUTE)
	if err != nil {
		return nil, fmt.Errorf("rtnetlink socket: %w", err)
	}
	if err := unix.Connect(fd, &unix.SockaddrNetlink{Family: unix.AF_NETLINK}); err != nil {
		unix.Close(fd)
		return nil, fmt.Errorf("rtnetlink connect: %w", err)
	}
	return &rtnl{fd: fd, buf: make([]byte, dumpBufSize)}, nil
}

func (c *rtnl) close() { unix.Close(c.fd) }

// dump asks for every object of kind typ (RTM_GETADDR, RTM_GETROUTE) of
// every family, the request carrying an all-zero family header of
// headerLen bytes (no filter), and calls each with the body of every
// answer.
func (c *rtnl) dump(typ uint16, headerLen int, each func(body []byte) error) error {
	c.seq++
	req := make([]byte, unix.NLMSG_HDRLEN+headerLen)
	binary.NativeEndian.PutUint32(req[0:4], uint32(len(req)))
	binary.NativeEndian.PutUint16(req[4:6], typ)
	binary.NativeEndian.PutUint16(req[6:8], unix.NLM_F_REQUEST|unix.NLM_F_DUMP)
	binary.NativeEndian.PutUint32(req[8:12], c.seq)
	if err := retryEINTR(func() error { _, err := unix.Write(c.fd, req); return err }); err != nil {
		return fmt.Errorf("rtnetlink request: %w", err)
	}
	interrupted := false
	for {
		var n int
		err := retryEINTR(func() (err error) { n, _, err = unix.Recvfrom(c.fd, c.buf, unix.MSG_TRUNC); return err })
		if err != nil {
			return fmt.Errorf("rtnetlink dump: %w", err)
		}
		if n > len(c.buf) {
			return fmt.Errorf("rtnetlink dump: a batch of %d bytes exceeds %d", n, len(c.buf))
		}
		done, err := eachMessage(c.buf[:n], func(h header, body []byte) (bool, error) {
			if h.seq != c.seq {
				return false, nil
			}
			if h.flags&unix.NLM_F_DUMP_INTR != 0 {
				interrupted = true
			}
			switch h.typ {
			case unix.NLMSG_DONE, unix.NLMSG_ERROR:
				// Both carry an errno: the dump's own (DONE) or the
				// request's refusal (ERROR).
				if len(body) >= 4 {
					if e := int32(binary.NativeEndian.Uint32(body)); e != 0 {
						return true, fmt.Errorf("rtnetlink dump: %w", unix.Errno(-e))
					}
				}
				return true, nil
			}
			return false, each(body)
		})
		if err != nil {
			return err
		}
		if done {
			if interrupted {
				return errDumpInterrupted
			}
			return nil
		}
	}
}

// header is what dump reads of a message's nlmsghdr.
type header struct {
	typ   uint16
	flags uint16
	seq   uint32
}

// eachMessage calls f with every netlink message in b until f reports the
// end of the dump.
func eachMessage(b []byte, f func(h header, body []byte) (end bool, err error)) (end bool, err error) {
	for len(b) >= unix.NLMSG_HDRLEN {
		n := int(binary.NativeEndian.Uint32(b[0:4]))
		if n < unix.NLMSG_HDRLEN || n > len(b) {
			return false, fmt.Errorf("rtnetlink: a message of %d bytes in %d", n, len(b))
		}
		h := header{
			typ:   binary.NativeEndian.Uint16(b[4:6]),
			flags: binary.NativeEndian.Uint16(b[6:8]),
			seq:   binary.NativeEndian.Uint32(b[8:12]),
		}
		if end, err := f(h, b[unix.NLMSG_HDRLEN:n]); end || err != nil {
			return end, err
		}
		b = b[min(align4(n), len(b)):]
	}
	return false, nil
}

// eachAttr calls f with the type and value of every attribute (struct
// rtattr) in b.
func eachAttr(b []byte, f func(typ uint16, val []byte)) error {
	for len(b) >= unix.SizeofRtAttr {
		n := int(binary.NativeEndian.Uint16(b[0:2]))
		if n < unix.SizeofRtAttr || n > len(b) {
			return fmt.Errorf("rtnetlink: an attribute of %d bytes in %d", n, len(b))
		}
		f(binary.NativeEndian.Uint16(b[2:4]), b[unix.SizeofRtAttr:n])
		b = b[min(align4(n), len(b)):]
	}
	return nil
}

// align4 is NLMSG_ALIGN, RTA_ALIGN and RTNH_ALIGN alike.
func align4(n int) int { return (n + 3) &^ 3 }

// ifname asks the kernel for the name of interface index (SIOCGIFNAME, in
// the socket's network namespace); ok is false when no interface has it.
func (c *rtnl) ifname(index int) (name string, ok bool, err error) {
	if index <= 0 {
		return "", false, nil
	}
	ifr, err := unix.NewIfreq("")
	if err != nil {
		return "", false, err
	}
	ifr.SetUint32(uint32(index))
	err = retryEINTR(func() error { return unix.IoctlIfreq(c.fd, unix.SIOCGIFNAME, ifr) })
	switch {
	case err == nil:
		return ifr.Name(), true, nil
	case errors.Is(err, unix.ENODEV):
		return "", false, nil
	}
	return "", false, fmt.Errorf("SIOCGIFNAME %d: %w", index, err)
}

func retryEINTR(f func() error) error {
	for {
		if err := f(); err != unix.EINTR {
			return err
		}
	}
}
