package race

import (
	"fmt"
	"syscall"
)

// getaddrinfo status codes, numbered as glibc numbers them so that the C ABI
// can hand them to hosts unchanged (Ruby's Socket::ResolutionError#error_code,
// Python's socket.gaierror.errno).
const (
	EAI_BADFLAGS   = -1
	EAI_NONAME     = -2
	EAI_AGAIN      = -3
	EAI_FAIL       = -4
	EAI_NODATA     = -5
	EAI_FAMILY     = -6
	EAI_SOCKTYPE   = -7
	EAI_SERVICE    = -8
	EAI_ADDRFAMILY = -9
	EAI_MEMORY     = -10
	EAI_SYSTEM     = -11
	EAI_OVERFLOW   = -12
)

// eaiMessages are glibc's gai_strerror texts, kept here so that pure-Go
// resolvers print the messages users already know.
var eaiMessages = map[int]string{
	EAI_BADFLAGS:   "Bad value for ai_flags",
	EAI_NONAME:     "Name or service not known",
	EAI_AGAIN:      "Temporary failure in name resolution",
	EAI_FAIL:       "Non-recoverable failure in name resolution",
	EAI_NODATA:     "No address associated with hostname",
	EAI_FAMILY:     "ai_family not supported",
	EAI_SOCKTYPE:   "ai_socktype not supported",
	EAI_SERVICE:    "Servname not supported for ai_socktype",
	EAI_ADDRFAMILY: "Address family for hostname not supported",
	EAI_MEMORY:     "Memory allocation failure",
	EAI_SYSTEM:     "System error",
	EAI_OVERFLOW:   "Result too large for supplied buffer",
}

// EAIMessage returns gai_strerror's text for code.
func EAIMessage(code int) string {
	if m, ok := eaiMessages[code]; ok {
		return m
	}
	return fmt.Sprintf("Unknown getaddrinfo error %d", code)
}

// ResolveError is one family's failed lookup.
type ResolveError struct {
	Host   string
	Family Family
	// Code is the getaddrinfo status (EAI_*).
	Code int
	// Errno is the errno captured on the thread that made the call, set only
	// when Code is EAI_SYSTEM (Ruby Bug #20198: it used to be lost).
	Errno syscall.Errno
	// Err is the underlying error, if any (a DNS library error, a timeout).
	Err error
}

func (e *ResolveError) Error() string {
	msg := EAIMessage(e.Code)
	if e.Code == EAI_SYSTEM && e.Errno != 0 {
		msg += ": " + e.Errno.Error()
	} else if e.Err != nil && e.Code != EAI_NONAME && e.Code != EAI_NODATA {
		msg += " (" + e.Err.Error() + ")"
	}
	return fmt.Sprintf("getaddrinfo(%s %s): %s", e.Family.QueryType(), e.Host, msg)
}

// Unwrap exposes the captured errno (errors.Is(err, syscall.EMFILE)) and the
// underlying error.
func (e *ResolveError) Unwrap() []error {
	var errs []error
	if e.Errno != 0 {
		errs = append(errs, e.Errno)
	}
	if e.Err != nil {
		errs = append(errs, e.Err)
	}
	return errs
}

// Temporary reports whether retrying later might succeed.
func (e *ResolveError) Temporary() bool { return e.Code == EAI_AGAIN }
