package render

import (
	"errors"
	"strconv"
	"syscall"
	"time"

	"golang.org/x/sys/unix"

	"github.com/hev2/hev2/internal/race"
)

// eaiNames are glibc's getaddrinfo codes by number (race.EAI_*).
var eaiNames = map[int]string{
	race.EAI_BADFLAGS: "EAI_BADFLAGS", race.EAI_NONAME: "EAI_NONAME", race.EAI_AGAIN: "EAI_AGAIN",
	race.EAI_FAIL: "EAI_FAIL", race.EAI_NODATA: "EAI_NODATA", race.EAI_FAMILY: "EAI_FAMILY",
	race.EAI_SOCKTYPE: "EAI_SOCKTYPE", race.EAI_SERVICE: "EAI_SERVICE", race.EAI_ADDRFAMILY: "EAI_ADDRFAMILY",
	race.EAI_MEMORY: "EAI_MEMORY", race.EAI_SYSTEM: "EAI_SYSTEM", race.EAI_OVERFLOW: "EAI_OVERFLOW",
}

func eaiName(code int) string {
	if n, ok := eaiNames[code]; ok {
		return n
	}
	return "EAI_" + strconv.Itoa(code)
}

func errnoName(e syscall.Errno) string {
	if n := unix.ErrnoName(e); n != "" {
		return n
	}
	return "errno " + strconv.Itoa(int(e))
}

// errCode is the short symbolic name of a lookup's or an attempt's error:
// "ECONNREFUSED", "EAI_NODATA", "connect_timeout", "bind EADDRINUSE".
func errCode(err error) string {
	if err == nil {
		return ""
	}
	var te *race.TimeoutError
	if errors.As(err, &te) {
		return te.Kind.String()
	}
	var be *race.BindError
	if errors.As(err, &be) {
		return "bind " + errnoName(be.Err)
	}
	var re *race.ResolveError
	if errors.As(err, &re) {
		if re.Code == race.EAI_SYSTEM && re.Errno != 0 {
			return eaiName(re.Code) + " " + errnoName(re.Errno)
		}
		return eaiName(re.Code)
	}
	var en syscall.Errno
	if errors.As(err, &en) {
		return errnoName(en)
	}
	return err.Error()
}

// familyName is "ipv6" or "ipv4", qlog's and the contract's spelling.
func familyName(f race.Family) string {
	if f == race.IPv4 {
		return "ipv4"
	}
	return "ipv6"
}

// recordType is the DNS record a family's lookup asks for.
func recordType(f race.Family) string {
	if f == race.IPv4 {
		return "A"
	}
	return "AAAA"
}

// msText is d in milliseconds with one decimal: "250.0 ms".
func msText(d time.Duration) string {
	return strconv.FormatFloat(float64(d)/float64(time.Millisecond), 'f', 1, 64) + " ms"
}

// msFloat is d in milliseconds, rounded to the microsecond so that the
// same race always prints the same digits.
func msFloat(d time.Duration) float64 {
	return float64(d.Round(time.Microsecond)/time.Microsecond) / 1000
}

// msUint is d in whole milliseconds (qlog's uint32 durations), rounded.
func msUint(d time.Duration) int64 {
	if d < 0 {
		return 0
	}
	return int64((d + time.Millisecond/2) / time.Millisecond)
}
