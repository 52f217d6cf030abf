package contract

import (
	"strconv"
	"syscall"

	"golang.org/x/sys/unix"
)

// ErrnoName is the symbolic name of e ("ECONNREFUSED"), or "" for 0.
func ErrnoName(e syscall.Errno) string {
	if e == 0 {
		return ""
	}
	if n := unix.ErrnoName(e); n != "" {
		return n
	}
	return "errno" + strconv.Itoa(int(e))
}

// eaiNames are glibc's getaddrinfo codes by their numbers.
var eaiNames = map[int]string{
	-1: "EAI_BADFLAGS", -2: "EAI_NONAME", -3: "EAI_AGAIN", -4: "EAI_FAIL",
	-5: "EAI_NODATA", -6: "EAI_FAMILY", -7: "EAI_SOCKTYPE", -8: "EAI_SERVICE",
	-9: "EAI_ADDRFAMILY", -10: "EAI_MEMORY", -11: "EAI_SYSTEM", -12: "EAI_OVERFLOW",
}

// EAIName is the symbolic name of a glibc getaddrinfo code ("EAI_NONAME").
func EAIName(code int) string {
	if n, ok := eaiNames[code]; ok {
		return n
	}
	if code == 0 {
		return ""
	}
	return "EAI_" + strconv.Itoa(code)
}
