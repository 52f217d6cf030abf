package resolvertest

import (
	"os"
	"strconv"
	"strings"
)

// OSThreads is the number of OS threads of this process (-1 if
// /proc/self/status cannot be read): getaddrinfo runs on threads of its own,
// which Go's runtime counters do not show.
func OSThreads() int {
	b, err := os.ReadFile("/proc/self/status")
	if err != nil {
		return -1
	}
	for _, line := range strings.Split(string(b), "\n") {
		if v, ok := strings.CutPrefix(line, "Threads:"); ok {
			n, _ := strconv.Atoi(strings.TrimSpace(v))
			return n
		}
	}
	return -1
}
