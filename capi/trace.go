package main

/*
#include "internal.h"
*/
import "C"

import (
	"bytes"
	"errors"
	"os"
	"strconv"
	"syscall"

	"golang.org/x/sys/unix"

	"github.com/hev2/hev2/core"
)

// hev2go_write_trace writes a done, recorded handle's race as a trace file
// (the shim has checked format, path and fd). The file is rendered whole
// in memory first, so a handle that cannot be rendered leaves no half
// file behind.
//
//export hev2go_write_trace
func hev2go_write_trace(id C.hev2_conn, format C.int, fd C.int, path *C.char, n C.size_t) (rc C.int) {
	defer guard(&rc)
	c, rc := doneConn(id)
	if c == nil {
		return rc
	}
	defer c.unref()
	c.mu.Lock()
	if c.released {
		c.mu.Unlock()
		return unknownHandle(id)
	}
	events := c.events
	recorded := c.opts.recordEvents
	meta := c.opts.dialer.TraceMeta(c.host, c.port)
	c.mu.Unlock()
	meta.SessionID = strconv.FormatUint(c.id, 10)
	if !recorded || len(events) == 0 {
		return refuse(statusInval, "handle %d recorded no events (connect with hev2_options.record_events = 1)", uint64(id))
	}
	var buf bytes.Buffer
	if err := core.WriteTrace(&buf, core.TraceFormat(format), events, meta); err != nil {
		return refuse(statusInval, "%s", err.Error())
	}
	if path != nil {
		name := C.GoStringN(path, C.int(n))
		// os.OpenFile opens close-on-exec; 0644 less the umask.
		f, err := os.OpenFile(name, os.O_WRONLY|os.O_CREATE|os.O_TRUNC, 0o644)
		if err != nil {
			return refuseErrno(statusSystem, causeErrno(err), "open %s", name)
		}
		_, werr := f.Write(buf.Bytes())
		cerr := f.Close()
		if err := errors.Join(werr, cerr); err != nil {
			return refuseErrno(statusSystem, causeErrno(err), "write %s", name)
		}
		return C.HEV2_OK
	}
	if err := writeAll(int(fd), buf.Bytes()); err != nil {
		return refuseErrno(statusSystem, causeErrno(err), "write to fd %d", int(fd))
	}
	return C.HEV2_OK
}

// writeAll writes b to the caller's fd, all of it: it retries EINTR and
// waits for a non-blocking fd to take more.
func writeAll(fd int, b []byte) error {
	for len(b) > 0 {
		n, err := unix.Write(fd, b)
		switch {
		case err == syscall.EINTR:
			continue
		case err == syscall.EAGAIN:
			p := []unix.PollFd{{Fd: int32(fd), Events: unix.POLLOUT}}
			if _, err := unix.Poll(p, -1); err != nil && err != syscall.EINTR {
				return err
			}
			continue
		case err != nil:
			return err
		}
		b = b[n:]
	}
	return nil
}
