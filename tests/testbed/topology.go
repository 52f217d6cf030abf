package testbed

import (
	"fmt"
	"net/netip"
	"os"
	"path/filepath"
	"strings"
)

// Fixed MAC addresses, so that both ends can carry permanent neighbour
// entries: the first packet leaves at once, no ARP or ND delay pollutes a
// timing.
const (
	macClient4 = "02:68:65:76:04:01"
	macServer4 = "02:68:65:76:04:02"
	macClient6 = "02:68:65:76:06:01"
	macServer6 = "02:68:65:76:06:02"
)

// resolvConf keeps scenarios where a query is never answered short: glibc's
// smallest timeout is 1 s, and one attempt means a silent server costs 1 s
// per family and lookup (glibc: timeout:1 attempts:1; Go reads the same
// options). There is one nameserver, the bed's own, and no search list.
const resolvConf = `# hev2 test bed: the test DNS server in the server namespace.
# timeout:1 attempts:1 make a never-answered query fail after 1 s.
nameserver %s
options timeout:1 attempts:1
`

const nsswitchConf = "hosts: files dns\n"

// createTopology creates both namespaces, one veth link per family and the
// client's /etc/netns files.
func (b *Bed) createTopology(extraHosts string) error {
	if err := run("ip", "netns", "add", b.ClientNS); err != nil {
		return err
	}
	b.created = append(b.created, b.ClientNS)
	if err := run("ip", "netns", "add", b.ServerNS); err != nil {
		return err
	}
	b.created = append(b.created, b.ServerNS)

	client := []string{
		"link add c4 type veth peer name s4 netns " + b.ServerNS,
		"link add c6 type veth peer name s6 netns " + b.ServerNS,
		"link set lo up",
		"link set c4 address " + macClient4,
		"link set c6 address " + macClient6,
		// No link-local address on the IPv6 link: the neighbours are static.
		"link set c6 addrgenmode none",
		"addr add " + ClientV4.String() + "/24 dev c4",
		"addr add " + ClientV6.String() + "/64 dev c6 nodad",
		"link set c4 up",
		"link set c6 up",
		"neigh replace " + ServerLinkV4.String() + " lladdr " + macServer4 + " dev c4 nud permanent",
		"neigh replace " + ServerLinkV6.String() + " lladdr " + macServer6 + " dev c6 nud permanent",
	}
	server := []string{
		"link set lo up",
		"link set s4 address " + macServer4,
		"link set s6 address " + macServer6,
		"link set s6 addrgenmode none",
		"addr add " + ServerLinkV4.String() + "/24 dev s4",
		"addr add " + ServerLinkV6.String() + "/64 dev s6 nodad",
		"link set s4 up",
		"link set s6 up",
		"neigh replace " + ClientV4.String() + " lladdr " + macClient4 + " dev s4 nud permanent",
		"neigh replace " + ClientV6.String() + " lladdr " + macClient6 + " dev s6 nud permanent",
		// Table 100 drops everything; blackholed addresses route their
		// replies through it.
		"route add blackhole 0.0.0.0/0 table 100",
		"route add blackhole ::/0 table 100",
	}
	// No DAD anywhere (addresses are usable at once); the IPv4 links carry
	// no IPv6 at all, so each family has exactly one path.
	noDAD := []string{"net.ipv6.conf.all.accept_dad=0", "net.ipv6.conf.default.accept_dad=0"}
	if err := sysctl(b.ClientNS, noDAD...); err != nil {
		return err
	}
	if err := sysctl(b.ServerNS, noDAD...); err != nil {
		return err
	}
	if err := ipBatch(b.ClientNS, client); err != nil {
		return err
	}
	if err := ipBatch(b.ServerNS, server); err != nil {
		return err
	}
	if err := sysctl(b.ClientNS, "net.ipv6.conf.c4.disable_ipv6=1"); err != nil {
		return err
	}
	if err := sysctl(b.ServerNS, "net.ipv6.conf.s4.disable_ipv6=1"); err != nil {
		return err
	}
	for _, a := range []netip.Addr{DNSServerV4, DNSServerV6} {
		if err := b.addServerAddr(a); err != nil {
			return err
		}
	}
	if err := b.createV6Only(); err != nil {
		return err
	}
	return b.writeClientFiles(extraHosts)
}

func sysctl(ns string, settings ...string) error {
	return run(append([]string{"ip", "netns", "exec", ns, "sysctl", "-q", "-w"}, settings...)...)
}

// addServerAddr puts a on the server end of its family's link and gives the
// client a permanent neighbour entry for it.
func (b *Bed) addServerAddr(a netip.Addr) error {
	if a.Is4() {
		if err := run("ip", "-n", b.ServerNS, "addr", "add", a.String()+"/32", "dev", "s4"); err != nil {
			return err
		}
		return run("ip", "-n", b.ClientNS, "neigh", "replace", a.String(), "lladdr", macServer4, "dev", "c4", "nud", "permanent")
	}
	if err := run("ip", "-n", b.ServerNS, "addr", "add", a.String()+"/128", "dev", "s6", "nodad"); err != nil {
		return err
	}
	return run("ip", "-n", b.ClientNS, "neigh", "replace", a.String(), "lladdr", macServer6, "dev", "c6", "nud", "permanent")
}

// writeClientFiles writes /etc/netns/<client>/{resolv.conf,hosts,
// nsswitch.conf}, which `ip netns exec` bind-mounts over /etc for every
// command run in the client namespace.
func (b *Bed) writeClientFiles(extraHosts string) error {
	dir := filepath.Join("/etc/netns", b.ClientNS)
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return fmt.Errorf("testbed: %w", err)
	}
	hosts := "127.0.0.1\tlocalhost\n::1\tlocalhost ip6-localhost ip6-loopback\n" + standardHosts + extraHosts
	if extraHosts != "" && !strings.HasSuffix(hosts, "\n") {
		hosts += "\n"
	}
	files := map[string]string{
		"resolv.conf":   fmt.Sprintf(resolvConf, DNSServerV4),
		"hosts":         hosts,
		"nsswitch.conf": nsswitchConf,
	}
	for name, content := range files {
		if err := os.WriteFile(filepath.Join(dir, name), []byte(content), 0o644); err != nil {
			return fmt.Errorf("testbed: %w", err)
		}
	}
	// The IPv6-only client asks the DNS server over IPv6.
	dir6 := filepath.Join("/etc/netns", b.V6OnlyNS)
	if err := os.MkdirAll(dir6, 0o755); err != nil {
		return fmt.Errorf("testbed: %w", err)
	}
	files["resolv.conf"] = fmt.Sprintf(resolvConf, DNSServerV6)
	for name, content := range files {
		if err := os.WriteFile(filepath.Join(dir6, name), []byte(content), 0o644); err != nil {
			return fmt.Errorf("testbed: %w", err)
		}
	}
	return nil
}
