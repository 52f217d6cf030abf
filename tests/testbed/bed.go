package testbed

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"net/netip"
	"os"
	"os/exec"
	"sort"
	"sync"

	"github.com/vishvananda/netns"

	"github.com/hev2/hev2/tests/testdns"
)

// DefaultPort is the TCP port every listening server address serves.
const DefaultPort = 8080

// The ports of the HTTPS rows' services (scenarios_https.go): every
// healthy server address also listens on ServicePort, and nothing listens
// on ClosedPort (a connect there is refused at once, a blackholed address
// still drops it).
const (
	ServicePort = 8090
	ClosedPort  = 8091
)

// Options configure Start.
type Options struct {
	// Layout gives each server address its impairment (nil:
	// StandardLayout()). Every address must be in 198.18.0.0/24 or
	// 2001:db8::/32, outside the client and link addresses (and the
	// IPv6-only client's link, 2001:db8:1::/64).
	Layout map[netip.Addr]Impairment
	// Port is the TCP port of the listeners (0: DefaultPort).
	Port uint16
	// Hosts are extra lines for the client namespace's /etc/hosts (it
	// always has localhost and HostsFileName).
	Hosts string
	// SkipSelfCheck skips the verification of every impairment (it costs
	// about 1.5 s, the blackhole check waits that long).
	SkipSelfCheck bool
}

// Bed is a running test bed. Close removes everything it made.
type Bed struct {
	// ClientNS and ServerNS are the namespace names (for `ip netns exec`).
	ClientNS, ServerNS string
	// V6OnlyNS is a second client namespace with IPv6 only: no IPv4
	// address, no IPv4 route (a NAT64 network's host); its resolv.conf
	// names the DNS server's IPv6 address. See topology_v6only.go.
	V6OnlyNS string
	// Port is the listeners' TCP port.
	Port uint16
	// DNS is the test DNS server every client-namespace lookup reaches.
	DNS *DNSServer

	serverHandle netns.NsHandle
	clientHandle netns.NsHandle
	created      []string

	// pref64 serialises the rows that set ipv4only.arpa's answer (one
	// name for the whole bed).
	pref64 sync.Mutex

	mu        sync.Mutex
	addrs     map[netip.Addr]*addrState
	nextQueue uint16
	closeOnce sync.Once
}

type addrState struct {
	imp      Impairment
	listener *serverListener
	// service listens on ServicePort (healthy addresses only).
	service *serverListener
	delayer *packetDelayer
}

// Start builds the bed: namespaces, links, server addresses with their
// impairments, the DNS server; then verifies every impairment. Root only.
func Start(opts Options) (bed *Bed, err error) {
	if os.Geteuid() != 0 {
		return nil, ErrNotRoot
	}
	for _, tool := range []string{"ip", "iptables", "ip6tables", "sysctl"} {
		if _, err := exec.LookPath(tool); err != nil {
			return nil, fmt.Errorf("testbed: %s not found (Debian packages iproute2, iptables, procps): %w", tool, err)
		}
	}
	if err := removeStaleNamespaces(); err != nil {
		return nil, err
	}
	prefix := newNamePrefix()
	b := &Bed{
		ClientNS:     prefix + "-c",
		ServerNS:     prefix + "-s",
		V6OnlyNS:     prefix + "-n",
		Port:         opts.Port,
		DNS:          testdns.New(),
		addrs:        map[netip.Addr]*addrState{},
		nextQueue:    100,
		serverHandle: -1,
		clientHandle: -1,
	}
	if b.Port == 0 {
		b.Port = DefaultPort
	}
	if b.Port == ServicePort || b.Port == ClosedPort {
		return nil, fmt.Errorf("testbed: port %d is the HTTPS rows' service or closed port", b.Port)
	}
	defer func() {
		if err != nil {
			b.Close()
		}
	}()
	if err := b.createTopology(opts.Hosts); err != nil {
		return nil, err
	}
	if b.serverHandle, err = netns.GetFromName(b.ServerNS); err != nil {
		return nil, fmt.Errorf("testbed: open %s: %w", b.ServerNS, err)
	}
	if b.clientHandle, err = netns.GetFromName(b.ClientNS); err != nil {
		return nil, fmt.Errorf("testbed: open %s: %w", b.ClientNS, err)
	}
	if err := listenDNS(b.DNS, b.serverHandle); err != nil {
		return nil, err
	}
	layout := opts.Layout
	if layout == nil {
		layout = StandardLayout()
	}
	for _, a := range sortedAddrs(layout) {
		if err := b.Impair(a, layout[a]); err != nil {
			return nil, err
		}
	}
	if !opts.SkipSelfCheck {
		if err := b.SelfCheck(context.Background()); err != nil {
			return nil, err
		}
	}
	return b, nil
}

// ErrNotRoot is returned by Start when not run as root.
var ErrNotRoot = errors.New("testbed: needs root (network namespaces)")

func sortedAddrs(m map[netip.Addr]Impairment) []netip.Addr {
	out := make([]netip.Addr, 0, len(m))
	for a := range m {
		out = append(out, a)
	}
	sort.Slice(out, func(i, j int) bool { return out[i].Less(out[j]) })
	return out
}

// Close stops every server and deletes both namespaces and their files. It
// is safe to call more than once and after a failed Start.
func (b *Bed) Close() error {
	b.closeOnce.Do(func() {
		b.mu.Lock()
		states := b.addrs
		b.addrs = map[netip.Addr]*addrState{}
		b.mu.Unlock()
		for _, st := range states {
			st.stop()
		}
		b.DNS.Close()
		if b.serverHandle >= 0 {
			b.serverHandle.Close()
		}
		if b.clientHandle >= 0 {
			b.clientHandle.Close()
		}
		for _, ns := range b.created {
			deleteNamespace(ns)
		}
	})
	return nil
}

func (st *addrState) stop() {
	if st.listener != nil {
		st.listener.close()
	}
	if st.service != nil {
		st.service.close()
	}
	if st.delayer != nil {
		st.delayer.close()
	}
}

// Addrs returns the server addresses with their impairments.
func (b *Bed) Addrs() map[netip.Addr]Impairment {
	b.mu.Lock()
	defer b.mu.Unlock()
	m := make(map[netip.Addr]Impairment, len(b.addrs))
	for a, st := range b.addrs {
		m[a] = st.imp
	}
	return m
}

// Command returns a command that runs argv inside the client namespace
// (through `ip netns exec`, so it sees the bed's resolv.conf and hosts).
func (b *Bed) Command(ctx context.Context, argv ...string) *exec.Cmd {
	return b.CommandIn(ctx, b.ClientNS, argv...)
}

// CommandIn is Command for one of the bed's client namespaces (ClientNS
// or V6OnlyNS).
func (b *Bed) CommandIn(ctx context.Context, ns string, argv ...string) *exec.Cmd {
	return exec.CommandContext(ctx, "ip", append([]string{"netns", "exec", ns}, argv...)...)
}

// ExecResult is what a command run by Exec did.
type ExecResult struct {
	Stdout, Stderr string
	ExitCode       int
}

// Exec runs argv inside the client namespace and waits for it. err is set
// only when the command could not be run or was killed by ctx; a non-zero
// exit status is reported in ExitCode.
func (b *Bed) Exec(ctx context.Context, argv ...string) (ExecResult, error) {
	return b.ExecIn(ctx, b.ClientNS, argv...)
}

// ExecIn is Exec in one of the bed's client namespaces.
func (b *Bed) ExecIn(ctx context.Context, ns string, argv ...string) (ExecResult, error) {
	if len(argv) == 0 {
		return ExecResult{}, errors.New("testbed: Exec: empty command")
	}
	cmd := b.CommandIn(ctx, ns, argv...)
	var stdout, stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	err := cmd.Run()
	res := ExecResult{Stdout: stdout.String(), Stderr: stderr.String()}
	var exitErr *exec.ExitError
	if errors.As(err, &exitErr) && ctx.Err() == nil && exitErr.Exited() {
		res.ExitCode = exitErr.ExitCode()
		return res, nil
	}
	if err != nil {
		return res, fmt.Errorf("testbed: exec %v: %w", argv, err)
	}
	return res, nil
}

// InClient runs fn on an OS thread inside the client namespace: sockets fn
// creates live there. Goroutines fn starts do not inherit the namespace.
func (b *Bed) InClient(fn func() error) error { return inNamespace(b.clientHandle, fn) }

// InServer is InClient for the server namespace.
func (b *Bed) InServer(fn func() error) error { return inNamespace(b.serverHandle, fn) }
