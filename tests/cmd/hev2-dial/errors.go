package main

import (
	"errors"
	"syscall"

	"github.com/hev2/hev2/core"
	"github.com/hev2/hev2/tests/testbed/contract"
)

// describe maps a failed race onto the contract's error object: the timeout
// that fired, else the primary cause's errno or getaddrinfo code.
func describe(err error) contract.Error {
	e := contract.Error{Message: err.Error()}
	cause := err
	var ce *core.Error
	if errors.As(err, &ce) {
		cause = ce.Cause
		if ce.Expired != core.TimeoutNone {
			e.Timeout = ce.Expired.String()
		}
	}
	var re *core.ResolveError
	var errno syscall.Errno
	switch {
	case errors.As(cause, &re):
		e.EAI = contract.EAIName(re.Code)
		e.Errno = contract.ErrnoName(re.Errno)
	case errors.As(cause, &errno):
		e.Errno = contract.ErrnoName(errno)
	case errors.Is(cause, syscall.ETIMEDOUT):
		// A caller's timeout (core.TimeoutError), as Ruby's Socket.tcp and
		// the C tool report it.
		e.Errno = "ETIMEDOUT"
	}
	return e
}
