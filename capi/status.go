package main

/*
#include "internal.h"
*/
import "C"

import (
	"context"
	"errors"
	"fmt"
	"os"
	"runtime/debug"
	"syscall"
	"unsafe"

	"github.com/hev2/hev2/core"
)

// Status codes of hev2.h, as Go ints.
const (
	statusOK        = int(C.HEV2_OK)
	statusInval     = int(C.HEV2_EINVAL)
	statusHost      = int(C.HEV2_EHOST)
	statusPort      = int(C.HEV2_EPORT)
	statusOptions   = int(C.HEV2_EOPTIONS)
	statusHandle    = int(C.HEV2_EHANDLE)
	statusAgain     = int(C.HEV2_EAGAIN)
	statusCapacity  = int(C.HEV2_ECAPACITY)
	statusNotSup    = int(C.HEV2_ENOTSUP)
	statusSystem    = int(C.HEV2_ESYSTEM)
	statusInternal  = int(C.HEV2_EINTERNAL)
	statusConnect   = int(C.HEV2_ECONNECT)
	statusResolve   = int(C.HEV2_ERESOLVE)
	statusTimeout   = int(C.HEV2_ETIMEOUT)
	statusCancelled = int(C.HEV2_ECANCELED)
)

// statusError carries a status code with a readable reason (kept for
// hev2_errmsg when it is the outcome of a handle).
type statusError struct {
	code int
	msg  string
}

func (e *statusError) Error() string { return e.msg }

func fail(code int, format string, args ...any) error {
	return &statusError{code: code, msg: fmt.Sprintf(format, args...)}
}

// refuse hands the detail of a failed call to the shim, which publishes it
// as the calling thread's hev2_last_error under the public function's name
// (an export runs on its caller's thread), and returns the status.
func refuse(code int, format string, args ...any) C.int {
	return refuseErrno(code, 0, format, args...)
}

// refuseErrno is refuse for HEV2_ESYSTEM: errno is the cause, which the
// shim also leaves in the caller's errno and hev2_last_errno.
func refuseErrno(code int, errno syscall.Errno, format string, args ...any) C.int {
	b := []byte(fmt.Sprintf(format, args...))
	var p *C.char
	if len(b) > 0 {
		p = (*C.char)(unsafe.Pointer(&b[0]))
	}
	C.hev2c_error_detail(C.int(code), C.int(errno), p, C.size_t(len(b)))
	return C.int(code)
}

// refuseErr refuses with a synchronous error's status and text.
func refuseErr(err error) C.int {
	return refuse(codeOf(err), "%s", err.Error())
}

// causeErrno is the errno behind a failed system call or engine.Init
// (EMFILE...); EIO if the error carries none.
func causeErrno(err error) syscall.Errno {
	var en syscall.Errno
	if errors.As(err, &en) {
		return en
	}
	return syscall.EIO
}

// codeOf maps a synchronous error to its status: core's input kinds to
// HEV2_EHOST, HEV2_EPORT and HEV2_EOPTIONS.
func codeOf(err error) int {
	var se *statusError
	if errors.As(err, &se) {
		return se.code
	}
	var ie *core.InputError
	if errors.As(err, &ie) {
		switch ie.Kind {
		case core.InputHost:
			return statusHost
		case core.InputPort:
			return statusPort
		}
		return statusOptions
	}
	return statusInternal
}

// isInputError reports whether err is core refusing a connection's input.
func isInputError(err error) bool {
	var ie *core.InputError
	return err != nil && errors.As(err, &ie)
}

// guard turns a panic into HEV2_EINTERNAL: a Go panic must never unwind
// into the host. Every export defers it.
func guard(rc *C.int) {
	if p := recover(); p != nil {
		fmt.Fprintf(os.Stderr, "hev2: internal error (please report): %v\n%s", p, debug.Stack())
		*rc = refuse(statusInternal, "internal error (please report): %v", p)
	}
}

// outcome is what a finished race means for the C caller: the status, the
// primary errno and getaddrinfo code, and which timeout fired.
type outcome struct {
	status  int
	errno   int
	eai     int
	timeout core.TimeoutKind
}

// causeDetails fills o's getaddrinfo code, errno and timeout kind from a
// race's cause.
func causeDetails(cause error, o *outcome) {
	if errno, ok := cause.(syscall.Errno); ok {
		// The common failure (a refusal, an unreachable network): no
		// reflection, and nothing allocated for errors.As's targets.
		o.errno = int(errno)
		return
	}
	causeDetailsWrapped(cause, o)
}

// causeDetailsWrapped is causeDetails for any other cause, wrapped or not.
func causeDetailsWrapped(cause error, o *outcome) {
	var re *core.ResolveError
	var errno syscall.Errno
	var te *core.TimeoutError
	switch {
	case errors.As(cause, &re):
		o.eai = re.Code
		o.errno = int(re.Errno)
	case errors.As(cause, &errno):
		o.errno = int(errno)
	}
	if errors.As(cause, &te) {
		o.timeout = te.Kind
	}
}

// outcomeOf turns a race's end into the C caller's outcome. The
// classification is core's (Error.Outcome); this adds only the C ABI's
// cancel contract: after hev2_cancel the outcome is HEV2_ECANCELED unless
// the race was decided first (canceled: a cancel reached the handle and no
// connection was handed over).
func outcomeOf(err error, canceled bool) outcome {
	if err == nil {
		if canceled {
			// A win that raced hev2_cancel: publish closed the socket, so
			// no fd goes with it and the outcome is the cancel's.
			return outcome{status: statusCancelled, errno: int(syscall.ECANCELED)}
		}
		return outcome{status: statusOK}
	}
	var o outcome
	ce, ok := err.(*core.Error) // what every race returns: no reflection
	if !ok {
		// Declared here, not above: the pointer errors.As is given
		// escapes, and the allocation is made where it is declared.
		var wrapped *core.Error
		ok = errors.As(err, &wrapped)
		ce = wrapped
	}
	if !ok {
		// Not a race's failure: a bug caught (input errors are refused
		// by hev2_connect, never an outcome).
		o.status = statusInternal
		if canceled {
			o.status, o.errno = statusCancelled, int(syscall.ECANCELED)
		}
		return o
	}
	o.timeout = ce.Expired
	// hev2_cancel's cause is none of the kinds below: skipped, errors.As
	// would walk it with reflection three times on every cancel.
	if ce.Cause != context.Canceled {
		causeDetails(ce.Cause, &o)
	}
	kind := ce.Outcome
	if canceled {
		kind = core.OutcomeCanceled
	}
	switch kind {
	case core.OutcomeCanceled:
		o.status = statusCancelled
		if o.errno == 0 {
			o.errno = int(syscall.ECANCELED)
		}
	case core.OutcomeTimeout:
		o.status = statusTimeout
		o.errno = int(syscall.ETIMEDOUT)
	case core.OutcomeResolve:
		o.status = statusResolve
	case core.OutcomeConnect:
		o.status = statusConnect
	default:
		o.status = statusInternal
	}
	return o
}
