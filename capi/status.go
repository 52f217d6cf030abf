package main

/*
#include "internal.h"
*/
import "C"

import (
	"errors"
	"fmt"
	"os"
	"runtime/debug"
	"syscall"

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

// codeOf maps a synchronous error to its status.
func codeOf(err error) int {
	var se *statusError
	if errors.As(err, &se) {
		return se.code
	}
	if errors.Is(err, core.ErrInvalidOptions) {
		return statusOptions
	}
	return statusInternal
}

// guard turns a panic into HEV2_EINTERNAL: a Go panic must never unwind
// into the host. Every export defers it.
func guard(rc *C.int) {
	if p := recover(); p != nil {
		fmt.Fprintf(os.Stderr, "hev2: internal error (please report): %v\n%s", p, debug.Stack())
		*rc = C.int(statusInternal)
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

// outcomeOf classifies Connect's error. A cancel wins over everything else:
// after hev2_cancel the outcome is HEV2_ECANCELED unless it was known before.
func outcomeOf(err error, canceled bool) outcome {
	if err == nil {
		return outcome{status: statusOK}
	}
	var o outcome
	var ce *core.Error
	cause := err
	if errors.As(err, &ce) {
		cause = ce.Cause
		o.timeout = ce.Expired
	}
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
		o.errno = int(syscall.ETIMEDOUT)
		o.timeout = te.Kind
	}
	switch {
	case canceled || (ce != nil && ce.Canceled != nil):
		o.status = statusCancelled
		if o.errno == 0 {
			o.errno = int(syscall.ECANCELED)
		}
	case o.timeout != core.TimeoutNone:
		o.status = statusTimeout
		o.errno = int(syscall.ETIMEDOUT)
	case re != nil:
		o.status = statusResolve
	case errors.Is(err, core.ErrInvalidOptions):
		o.status = statusOptions
	case ce != nil:
		o.status = statusConnect
	default:
		o.status = statusInternal
	}
	return o
}
