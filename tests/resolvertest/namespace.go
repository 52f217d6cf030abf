// Package resolvertest holds what the resolver tests and benchmarks share:
// helpers to put sockets and processes into the project's own network
// namespaces, each with a test DNS server (package testdns) on its loopback.
//
// It must not import core: core's own tests may use it.
package resolvertest

import (
	"fmt"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"strings"
	"sync/atomic"

	"golang.org/x/sys/unix"

	"github.com/hev2/hev2/tests/testdns"
)

// Namespace is a network namespace of the project's own, with its own
// /etc/netns/<name>/resolv.conf, hosts and nsswitch.conf (which `ip netns exec` puts in
// place of the host's), so getaddrinfo inside it only ever asks a test DNS
// server.
type Namespace struct {
	Name string
}

// Stack says which addresses a namespace gets besides loopback, on a dummy
// interface (one end of a veth pair whose both ends stay in the
// namespace; the kernel has no dummy interfaces): 198.18.0.2/24 and 2001:db8::2/64 (test ranges).
type Stack struct {
	IPv4, IPv6 bool
}

var nsSerial atomic.Int64

// ResolvConf is the resolv.conf every namespace starts with: a DNS server
// on its own loopback, one try of one second.
const ResolvConf = "nameserver 127.0.0.1\noptions timeout:1 attempts:1\n"

// Hosts is the hosts file every namespace starts with.
const Hosts = "127.0.0.1 localhost\n::1 localhost ip6-localhost\n"

// NSSwitch is the nsswitch.conf every namespace starts with: the host's
// own may name other sources (a desktop's nss-mdns answers EAI_SYSTEM
// lookups with errno EINVAL), and no test may depend on it.
const NSSwitch = "hosts: files dns\n"

// NewNamespace makes a namespace with loopback up and the given stack.
func NewNamespace(stack Stack) (*Namespace, error) {
	if os.Geteuid() != 0 {
		return nil, fmt.Errorf("network namespaces need root")
	}
	if nsSerial.Load() == 0 {
		removeStale()
	}
	n := &Namespace{Name: fmt.Sprintf("hev2r-%d-%d", os.Getpid(), nsSerial.Add(1))}
	if err := run("ip", "netns", "add", n.Name); err != nil {
		return nil, err
	}
	steps := [][]string{{"link", "set", "lo", "up"}}
	if stack.IPv4 || stack.IPv6 {
		steps = append(steps, []string{"link", "add", "d0", "type", "veth", "peer", "name", "d1"},
			[]string{"link", "set", "d1", "up"}, []string{"link", "set", "d0", "up"})
	}
	if stack.IPv4 {
		steps = append(steps, []string{"addr", "add", "198.18.0.2/24", "dev", "d0"})
	}
	if stack.IPv6 {
		steps = append(steps, []string{"addr", "add", "2001:db8::2/64", "dev", "d0", "nodad"})
	}
	for _, s := range steps {
		if err := n.IP(s...); err != nil {
			n.Close()
			return nil, err
		}
	}
	if err := n.WriteEtc("resolv.conf", ResolvConf); err != nil {
		n.Close()
		return nil, err
	}
	if err := n.WriteEtc("hosts", Hosts); err != nil {
		n.Close()
		return nil, err
	}
	if err := n.WriteEtc("nsswitch.conf", NSSwitch); err != nil {
		n.Close()
		return nil, err
	}
	return n, nil
}

// IP runs `ip -n <ns> args...`.
func (n *Namespace) IP(args ...string) error {
	return run("ip", append([]string{"-n", n.Name}, args...)...)
}

// WriteEtc writes /etc/netns/<ns>/<file>.
func (n *Namespace) WriteEtc(file, content string) error {
	dir := filepath.Join("/etc/netns", n.Name)
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return err
	}
	return os.WriteFile(filepath.Join(dir, file), []byte(content), 0o644)
}

// Command returns a command that runs inside the namespace, with its
// resolv.conf and hosts in place.
func (n *Namespace) Command(name string, args ...string) *exec.Cmd {
	return exec.Command("ip", append([]string{"netns", "exec", n.Name, name}, args...)...)
}

// Do runs fn on a thread that has entered the namespace; sockets fn opens
// stay in the namespace. The thread is thrown away afterwards.
func (n *Namespace) Do(fn func() error) error {
	errc := make(chan error, 1)
	go func() {
		// Never unlocked: the goroutine's exit ends the thread, so no
		// other goroutine ever runs in the namespace by accident.
		runtime.LockOSThread()
		f, err := os.Open(filepath.Join("/run/netns", n.Name))
		if err != nil {
			errc <- err
			return
		}
		defer f.Close()
		if err := unix.Setns(int(f.Fd()), unix.CLONE_NEWNET); err != nil {
			errc <- fmt.Errorf("setns %s: %w", n.Name, err)
			return
		}
		errc <- fn()
	}()
	return <-errc
}

// ServeDNS starts a DNS server on 127.0.0.1:53 inside the namespace, where
// its resolv.conf points.
func (n *Namespace) ServeDNS() (*testdns.Server, error) {
	var udp net.PacketConn
	var tcp net.Listener
	err := n.Do(func() (err error) {
		if udp, err = net.ListenPacket("udp4", "127.0.0.1:53"); err != nil {
			return err
		}
		if tcp, err = net.Listen("tcp4", "127.0.0.1:53"); err != nil {
			udp.Close()
		}
		return err
	})
	if err != nil {
		return nil, err
	}
	return testdns.Serve(udp, tcp), nil
}

// Close deletes the namespace and its /etc/netns files.
func (n *Namespace) Close() {
	run("ip", "netns", "del", n.Name)
	os.RemoveAll(filepath.Join("/etc/netns", n.Name))
}

func run(name string, args ...string) error {
	out, err := exec.Command(name, args...).CombinedOutput()
	if err != nil {
		return fmt.Errorf("%s %s: %v: %s", name, strings.Join(args, " "), err, strings.TrimSpace(string(out)))
	}
	return nil
}

// removeStale deletes the namespaces (and /etc/netns files) left by test
// processes that died before cleaning up: names hev2r-<pid>-<n> whose pid
// is gone.
func removeStale() {
	for _, dir := range []string{"/run/netns", "/etc/netns"} {
		entries, _ := os.ReadDir(dir)
		for _, e := range entries {
			var pid, n int
			if _, err := fmt.Sscanf(e.Name(), "hev2r-%d-%d", &pid, &n); err != nil {
				continue
			}
			if unix.Kill(pid, 0) == unix.ESRCH {
				(&Namespace{Name: e.Name()}).Close()
			}
		}
	}
}
