package testbed

import (
	"bytes"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"runtime"
	"strconv"
	"strings"
	"sync/atomic"
	"syscall"

	"github.com/vishvananda/netns"
)

// Namespace names are hev2-<pid>-<n>-c / -s: the pid tells a later run
// whether the owner is still alive, n keeps two beds of one process apart.
var (
	bedCounter  atomic.Uint32
	bedNameExpr = regexp.MustCompile(`^hev2-(\d+)-\d+-[csn]$`)
)

func newNamePrefix() string {
	return fmt.Sprintf("hev2-%d-%d", os.Getpid(), bedCounter.Add(1))
}

// removeStaleNamespaces deletes hev2-* namespaces (and their /etc/netns
// files) whose owning process no longer exists: the leftovers of a crashed
// run. Beds of live processes (another test running now) are left alone.
func removeStaleNamespaces() error {
	out, err := exec.Command("ip", "netns", "list").Output()
	if err != nil {
		return fmt.Errorf("testbed: ip netns list: %w", err)
	}
	for _, line := range strings.Split(string(out), "\n") {
		fields := strings.Fields(line)
		if len(fields) == 0 {
			continue
		}
		name := fields[0]
		m := bedNameExpr.FindStringSubmatch(name)
		if m == nil {
			continue
		}
		pid, _ := strconv.Atoi(m[1])
		if processAlive(pid) {
			continue // a live run's bed (ours included: Close removes it)
		}
		deleteNamespace(name)
	}
	return nil
}

func processAlive(pid int) bool {
	err := syscall.Kill(pid, 0)
	return err == nil || err == syscall.EPERM
}

// deleteNamespace removes a namespace and its /etc/netns directory; deleting
// the server namespace also deletes the veth pairs, whose peers die with it.
func deleteNamespace(name string) {
	_ = exec.Command("ip", "netns", "delete", name).Run()
	_ = os.RemoveAll(filepath.Join("/etc/netns", name))
}

// ipBatch runs iproute2 commands (one per line, without the leading "ip")
// inside namespace ns in one process.
func ipBatch(ns string, lines []string) error {
	cmd := exec.Command("ip", "-n", ns, "-batch", "-")
	cmd.Stdin = strings.NewReader(strings.Join(lines, "\n") + "\n")
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	if err := cmd.Run(); err != nil {
		return fmt.Errorf("testbed: ip -n %s -batch: %v: %s", ns, err, strings.TrimSpace(stderr.String()))
	}
	return nil
}

func run(argv ...string) error {
	out, err := exec.Command(argv[0], argv[1:]...).CombinedOutput()
	if err != nil {
		return fmt.Errorf("testbed: %s: %v: %s", strings.Join(argv, " "), err, strings.TrimSpace(string(out)))
	}
	return nil
}

// inNamespace runs fn on a dedicated OS thread switched into ns. Sockets
// created by fn stay in ns for their whole life, wherever they are used
// later. If the thread cannot be switched back it is never unlocked, so the
// Go runtime throws it away instead of reusing it in the wrong namespace.
func inNamespace(ns netns.NsHandle, fn func() error) error {
	errc := make(chan error, 1)
	go func() {
		runtime.LockOSThread()
		orig, err := netns.Get()
		if err != nil {
			errc <- fmt.Errorf("testbed: current netns: %w", err)
			return
		}
		defer orig.Close()
		if err := netns.Set(ns); err != nil {
			errc <- fmt.Errorf("testbed: setns: %w", err)
			return
		}
		ferr := fn()
		if err := netns.Set(orig); err != nil {
			errc <- fmt.Errorf("testbed: setns back: %w", err)
			return // thread stays locked and dies with this goroutine
		}
		runtime.UnlockOSThread()
		errc <- ferr
	}()
	return <-errc
}
