package testbed

// NAT64 through the Go API, inside the bed's IPv6-only namespace. The
// engine learns the host's network in the namespace of its first connect,
// so these tests re-run this test binary there (`ip netns exec`) in child
// mode: TestMain sees nat64ChildEnv, connects as the parent says on stdin
// and prints one JSON line per connect. (The scenario rows prove the same
// through every client, one connect per process; these look inside one
// process: its trace, its cache, a network change.)

import (
	"bufio"
	"context"
	"encoding/binary"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net"
	"net/netip"
	"os"
	"os/exec"
	"slices"
	"strings"
	"testing"
	"time"

	"golang.org/x/sys/unix"

	"github.com/hev2/hev2/core"
)

const nat64ChildEnv = "HEV2_TESTBED_NAT64_CHILD"

// nat64StaticName is a static entry of the child's Dialer (Dialer.Hosts,
// the C ABI's static_hosts): V4Good2, which NAT64 synthesizes too.
const nat64StaticName = "static.nat64.hev2.test"

// nat64Connect is one connect as the child saw it.
type nat64Connect struct {
	Addr            string
	SynthesizedFrom string
	Prefixes        []string
	Err             string
	Trace           []string // "kind detail" per trace event
}

func TestMain(m *testing.M) {
	if os.Getenv(nat64ChildEnv) != "" {
		nat64Child()
		return
	}
	os.Exit(m.Run())
}

// nat64Child connects once per line of stdin ("HOST PORT"); the line
// "wait-prefix HOST PORT WANT" connects until the prefix in use is WANT
// (at most 5 s: netlink's news takes a moment); "init" only calls
// core.Init (which subscribes to netlink).
func nat64Child() {
	in := bufio.NewScanner(os.Stdin)
	out := json.NewEncoder(os.Stdout)
	for in.Scan() {
		f := strings.Fields(in.Text())
		if len(f) == 1 && f[0] == "init" {
			c := nat64Connect{}
			if err := core.Init(); err != nil {
				c.Err = err.Error()
			}
			out.Encode(c)
			continue
		}
		if len(f) == 4 && f[0] == "wait-prefix" {
			deadline := time.Now().Add(5 * time.Second)
			for {
				c := nat64ConnectOnce(f[1], f[2])
				if slices.Contains(c.Prefixes, f[3]) || time.Now().After(deadline) {
					out.Encode(c)
					break
				}
				time.Sleep(20 * time.Millisecond)
			}
			continue
		}
		out.Encode(nat64ConnectOnce(f[0], f[1]))
	}
}

func nat64ConnectOnce(host, port string) nat64Connect {
	var c nat64Connect
	p, err := core.ParsePort(port)
	if err != nil {
		c.Err = err.Error()
		return c
	}
	d := core.Dialer{Hosts: map[string][]netip.Addr{nat64StaticName: {V4Good2}}, Trace: func(ev core.TraceEvent) {
		line := ev.Kind.String()
		for _, p := range ev.Prefixes {
			line += " " + p.String()
		}
		if ev.Addr.IsValid() {
			line += " " + ev.Addr.Addr().String()
		}
		if ev.From.IsValid() {
			line += " from " + ev.From.String()
		}
		c.Trace = append(c.Trace, line)
	}}
	if name, ok := strings.CutPrefix(host, "dial:"); ok {
		// DialContext (the netpoller driver): the winner is a
		// net.Conn; what it was synthesized from is in the trace.
		conn, err := d.DialContext(context.Background(), "tcp", net.JoinHostPort(name, port))
		if err != nil {
			c.Err = err.Error()
			return c
		}
		defer conn.Close()
		c.Addr = conn.RemoteAddr().(*net.TCPAddr).AddrPort().Addr().String()
		for _, line := range c.Trace {
			if from, ok := strings.CutPrefix(line, "attempt-won "+c.Addr+" from "); ok {
				c.SynthesizedFrom = from
			}
			if ps, ok := strings.CutPrefix(line, "nat64-prefix "); ok {
				c.Prefixes = strings.Fields(ps)
			}
		}
		return c
	}
	res, err := d.Connect(context.Background(), host, p)
	if err != nil {
		c.Err = err.Error()
		return c
	}
	unix.Close(res.FD)
	c.Addr = res.Addr.Addr().String()
	if res.SynthesizedFrom.IsValid() {
		c.SynthesizedFrom = res.SynthesizedFrom.String()
	}
	for _, p := range res.NAT64Prefixes {
		c.Prefixes = append(c.Prefixes, p.String())
	}
	return c
}

// nat64Session is a child in the IPv6-only namespace.
type nat64Session struct {
	t     *testing.T
	stdin io.WriteCloser
	lines *bufio.Scanner
}

func startNAT64Child(t *testing.T, bed *Bed) *nat64Session {
	t.Helper()
	cmd := bed.CommandIn(context.Background(), bed.V6OnlyNS, os.Args[0], "-test.run=^$")
	cmd.Env = append(os.Environ(), nat64ChildEnv+"=1")
	stdin, _ := cmd.StdinPipe()
	stdout, _ := cmd.StdoutPipe()
	cmd.Stderr = os.Stderr
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { stdin.Close(); cmd.Wait() })
	return &nat64Session{t: t, stdin: stdin, lines: bufio.NewScanner(stdout)}
}

func (s *nat64Session) connect(line string) nat64Connect {
	s.t.Helper()
	fmt.Fprintln(s.stdin, line)
	if !s.lines.Scan() {
		s.t.Fatalf("%s: the child ended", line)
	}
	var c nat64Connect
	if err := json.Unmarshal(s.lines.Bytes(), &c); err != nil {
		s.t.Fatal(err)
	}
	return c
}

func startNAT64Bed(t *testing.T) *Bed {
	t.Helper()
	bed, err := Start(Options{SkipSelfCheck: true})
	if errors.Is(err, ErrNotRoot) {
		t.Skip("needs root (network namespaces)")
	}
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { bed.Close() })
	return bed
}

func (c nat64Connect) has(t *testing.T, what string, want nat64Connect) {
	t.Helper()
	if c.Err != "" || c.Addr != want.Addr || c.SynthesizedFrom != want.SynthesizedFrom || !slices.Equal(c.Prefixes, want.Prefixes) {
		t.Fatalf("%s: got %+v, want %+v", what, c, want)
	}
}

// The first connect on the network discovers the prefix and synthesizes
// the IPv4 literal; the trace says both, in that order.
func TestNAT64TraceShowsDiscoveryAndSynthesis(t *testing.T) {
	bed := startNAT64Bed(t)
	p := NAT64Prefixes[2] // /48
	if err := (Scenario{Pref64: p}).Install(bed); err != nil {
		t.Fatal(err)
	}
	bed.setPref64(p)
	child := startNAT64Child(t, bed)
	synth := core.NAT64Synthesize(p, V4Good1)
	c := child.connect(fmt.Sprintf("%s %d", V4Good1, bed.Port))
	c.has(t, "first connect", nat64Connect{Addr: synth.String(), SynthesizedFrom: V4Good1.String(), Prefixes: []string{p.String()}})
	want := []string{
		"nat64-discovery",
		"nat64-prefix " + p.String(),
		"synthesized " + p.String() + " " + synth.String() + " from " + V4Good1.String(),
		"attempt-started " + synth.String() + " from " + V4Good1.String(),
		"attempt-won " + synth.String() + " from " + V4Good1.String(),
		"done",
	}
	if !slices.Equal(c.Trace, want) {
		t.Fatalf("trace:\n  %s\nwant:\n  %s", strings.Join(c.Trace, "\n  "), strings.Join(want, "\n  "))
	}
	// The second connect takes the prefix from the cache: no discovery.
	c = child.connect(fmt.Sprintf("%s %d", V4Good1, bed.Port))
	if len(c.Trace) == 0 || c.Trace[0] != "nat64-prefix "+p.String() {
		t.Fatalf("second connect's trace starts %q, want the cached prefix", c.Trace)
	}
	// DialContext (Go's netpoller) reaches it the same way.
	child.connect(fmt.Sprintf("dial:%s %d", V4Good1, bed.Port)).has(t, "DialContext",
		nat64Connect{Addr: synth.String(), SynthesizedFrom: V4Good1.String(), Prefixes: []string{p.String()}})
	// A static entry's IPv4 address is synthesized like a literal.
	child.connect(fmt.Sprintf("%s %d", nat64StaticName, bed.Port)).has(t, "static entry",
		nat64Connect{Addr: core.NAT64Synthesize(p, V4Good2).String(), SynthesizedFrom: V4Good2.String(), Prefixes: []string{p.String()}})
}

// The prefix is cached per network: a new answer for ipv4only.arpa is not
// seen until the network changes (a router appears: netlink tells), and
// then it is.
func TestNAT64NetworkChangeFlushesThePrefix(t *testing.T) {
	bed := startNAT64Bed(t)
	p1, p2 := NAT64Prefixes[5], NAT64Prefixes[3] // /96, then /56
	for _, p := range []netip.Prefix{p1, p2} {
		if err := (Scenario{Pref64: p}).Install(bed); err != nil {
			t.Fatal(err)
		}
	}
	bed.setPref64(p1)
	child := startNAT64Child(t, bed)
	literal := fmt.Sprintf("%s %d", V4Good1, bed.Port)
	first := nat64Connect{Addr: core.NAT64Synthesize(p1, V4Good1).String(), SynthesizedFrom: V4Good1.String(), Prefixes: []string{p1.String()}}
	// The first connect through DialContext: the netpoller driver waits
	// for the discovery (the Connect tests above use the library-driven one).
	child.connect("dial:"+literal).has(t, "first connect (DialContext)", first)

	bed.setPref64(p2)
	child.connect(literal).has(t, "same network, the DNS now says "+p2.String(), first)

	out, err := exec.Command("ip", "-n", bed.V6OnlyNS, "-6", "route", "add", "default", "via", ServerLinkV6Only.String(), "dev", "n6").CombinedOutput()
	if err != nil {
		t.Fatalf("ip route add default: %v: %s", err, out)
	}
	child.connect("wait-prefix "+literal+" "+p2.String()).has(t, "after the network changed",
		nat64Connect{Addr: core.NAT64Synthesize(p2, V4Good1).String(), SynthesizedFrom: V4Good1.String(), Prefixes: []string{p2.String()}})
}

// A router advertisement's PREF64 option (RFC 8781), sent into the
// IPv6-only namespace from the server's end of the link, reaches the
// process (the kernel passes it over rtnetlink) and is used, here while
// ipv4only.arpa says there is no NAT64 at all.
func TestNAT64RouterAdvertisementPREF64(t *testing.T) {
	bed := startNAT64Bed(t)
	p := NAT64Prefixes[1] // /40
	if err := (Scenario{Pref64: p}).Install(bed); err != nil {
		t.Fatal(err)
	}
	bed.setPref64(netip.Prefix{})
	// An RA must come from a link-local address (RFC 4861 §6.1.2).
	if out, err := exec.Command("ip", "-n", bed.ServerNS, "addr", "add", "fe80::2/64", "dev", "s6n", "nodad").CombinedOutput(); err != nil {
		t.Fatalf("ip addr add: %v: %s", err, out)
	}
	child := startNAT64Child(t, bed)
	if c := child.connect("init"); c.Err != "" {
		t.Fatal(c.Err)
	}
	if err := bed.InServer(func() error { return sendRAWithPREF64("s6n", p, 600*time.Second) }); err != nil {
		t.Fatal(err)
	}
	literal := fmt.Sprintf("%s %d", V4Good1, bed.Port)
	child.connect("wait-prefix "+literal+" "+p.String()).has(t, "after the RA",
		nat64Connect{Addr: core.NAT64Synthesize(p, V4Good1).String(), SynthesizedFrom: V4Good1.String(), Prefixes: []string{p.String()}})
}

// sendRAWithPREF64 multicasts one router advertisement (router lifetime
// 0: no default route) carrying a PREF64 option out of iface.
func sendRAWithPREF64(iface string, p netip.Prefix, lifetime time.Duration) error {
	plc := map[int]uint16{96: 0, 64: 1, 56: 2, 48: 3, 40: 4, 32: 5}[p.Bits()]
	ifi, err := net.InterfaceByName(iface)
	if err != nil {
		return err
	}
	fd, err := unix.Socket(unix.AF_INET6, unix.SOCK_RAW|unix.SOCK_CLOEXEC, unix.IPPROTO_ICMPV6)
	if err != nil {
		return err
	}
	defer unix.Close(fd)
	for _, o := range []struct{ opt, v int }{{unix.IPV6_MULTICAST_HOPS, 255}, {unix.IPV6_MULTICAST_IF, ifi.Index}} {
		if err := unix.SetsockoptInt(fd, unix.IPPROTO_IPV6, o.opt, o.v); err != nil {
			return err
		}
	}
	// type 134, code 0, checksum (the kernel's), hop limit 64, flags 0,
	// router lifetime 0, reachable 0, retrans 0; then the option.
	msg := []byte{134, 0, 0, 0, 64, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0}
	msg = append(msg, 38, 2)
	msg = binary.BigEndian.AppendUint16(msg, uint16(lifetime/time.Second/8)<<3|plc)
	a := p.Addr().As16()
	msg = append(msg, a[:12]...)
	dst := &unix.SockaddrInet6{Addr: netip.MustParseAddr("ff02::1").As16(), ZoneId: uint32(ifi.Index)}
	return unix.Sendto(fd, msg, 0, dst)
}
