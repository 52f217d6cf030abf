package resolve

import (
	"errors"
	"sync/atomic"
	"syscall"

	"github.com/hev2/hev2/internal/race"
)

// DefaultMaxThreads bounds the getaddrinfo calls inside the C library at
// once, in the whole process, abandoned ones included: each holds a thread
// of the pool until glibc gives up on it (its DNS timeout, 5-30 s). The
// in-flight bound of a SystemResolver (DefaultMaxInFlight) counts only
// lookups someone still waits for, so that a burst of abandoned lookups
// never holds up a healthy one; this cap keeps such bursts from piling up
// threads without end. Names that go to DNS anyway are handed over to the
// built-in client long before it (DefaultHandOverAt); the cap holds the
// rest. At the cap, a new lookup fails at once with EAI_SYSTEM and EAGAIN
// (ErrThreadCap). With the Go runtime's own threads, a process stays under
// 300 threads whatever its lookups do.
const DefaultMaxThreads = 192

var (
	busyCalls  atomic.Int64 // getaddrinfo calls submitted and not returned
	maxThreads atomic.Int64
)

func init() { maxThreads.Store(DefaultMaxThreads) }

// ErrThreadCap explains a lookup refused at the thread cap.
var ErrThreadCap = errors.New("too many getaddrinfo calls in flight, abandoned ones included (the resolver thread cap)")

// MaxThreads reports the process's cap on getaddrinfo calls in flight.
func MaxThreads() int { return int(maxThreads.Load()) }

// SetMaxThreads changes the cap (n >= 1); for tests and hosts that know
// better.
func SetMaxThreads(n int) {
	if n >= 1 {
		maxThreads.Store(int64(n))
	}
}

// BusyCalls reports the getaddrinfo calls in flight in the process,
// abandoned ones included.
func BusyCalls() int { return int(busyCalls.Load()) }

func atThreadCap() bool { return busyCalls.Load() >= maxThreads.Load() }

func threadCapError(k flightKey) error {
	return &race.ResolveError{Host: k.host, Family: k.family, Code: race.EAI_SYSTEM, Errno: syscall.EAGAIN, Err: ErrThreadCap}
}
