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

// NamedThreads counts this process's threads whose name is name
// (/proc/self/task/*/comm); -1 if the directory cannot be read.
func NamedThreads(name string) int {
	tasks, err := os.ReadDir("/proc/self/task")
	if err != nil {
		return -1
	}
	n := 0
	for _, task := range tasks {
		comm, err := os.ReadFile("/proc/self/task/" + task.Name() + "/comm")
		if err == nil && strings.TrimSpace(string(comm)) == name {
			n++
		}
	}
	return n
}
