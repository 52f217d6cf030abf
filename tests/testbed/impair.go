package testbed

import (
	"fmt"
	"net/netip"
	"strconv"
)

var (
	bedPrefixV4 = netip.MustParsePrefix("198.18.0.0/24")
	bedPrefixV6 = netip.MustParsePrefix("2001:db8::/32")
)

// Impair gives server address a the impairment imp, adding the address to
// the server namespace the first time. It may be called while the bed runs;
// connections in flight to a see the change.
func (b *Bed) Impair(a netip.Addr, imp Impairment) error {
	if err := imp.validate(); err != nil {
		return err
	}
	if err := checkServerAddr(a); err != nil {
		return err
	}
	b.mu.Lock()
	defer b.mu.Unlock()
	st, known := b.addrs[a]
	if known {
		if err := b.undoImpairment(a, st); err != nil {
			return err
		}
	} else {
		if err := b.addServerAddr(a); err != nil {
			return err
		}
		st = &addrState{}
		b.addrs[a] = st
	}
	st.imp = imp
	return b.applyImpairment(a, st)
}

func checkServerAddr(a netip.Addr) error {
	if !bedPrefixV4.Contains(a) && !bedPrefixV6.Contains(a) {
		return fmt.Errorf("testbed: %v is outside the bed's prefixes %v and %v", a, bedPrefixV4, bedPrefixV6)
	}
	if v6OnlyLinkPrefix.Contains(a) {
		return fmt.Errorf("testbed: %v is on the IPv6-only client's link %v", a, v6OnlyLinkPrefix)
	}
	switch a {
	case ClientV4, ClientV6, ServerLinkV4, ServerLinkV6, DNSServerV4, DNSServerV6,
		bedPrefixV4.Addr(), netip.MustParseAddr("198.18.0.255"), bedPrefixV6.Addr():
		return fmt.Errorf("testbed: %v is reserved by the bed", a)
	}
	return nil
}

func (b *Bed) applyImpairment(a netip.Addr, st *addrState) error {
	if st.imp.listens() {
		var hold = st.imp.Delay
		if st.imp.Kind != KindSlowAccept {
			hold = 0
		}
		l, err := listenIn(b.serverHandle, a, b.Port, hold)
		if err != nil {
			return fmt.Errorf("testbed: listen on %v: %w", a, err)
		}
		st.listener = l
	}
	if st.imp.Kind == KindHealthy {
		l, err := listenIn(b.serverHandle, a, ServicePort, 0)
		if err != nil {
			return fmt.Errorf("testbed: listen on %v port %d: %w", a, ServicePort, err)
		}
		st.service = l
	}
	switch st.imp.Kind {
	case KindBlackhole:
		// Replies from a are routed into table 100's blackhole: the SYN
		// arrives, the SYN-ACK never leaves.
		return run("ip", "-n", b.ServerNS, familyFlag(a), "rule", "add", "from", a.String(), "lookup", "100")
	case KindPathDelay:
		queue := b.nextQueue
		b.nextQueue++
		d, err := startPacketDelayer(int(b.serverHandle), queue, st.imp.Delay)
		if err != nil {
			return err
		}
		st.delayer = d
		return run(b.iptables(a, "-A", queue)...)
	}
	return nil
}

func (b *Bed) undoImpairment(a netip.Addr, st *addrState) error {
	switch st.imp.Kind {
	case KindBlackhole:
		if err := run("ip", "-n", b.ServerNS, familyFlag(a), "rule", "del", "from", a.String(), "lookup", "100"); err != nil {
			return err
		}
	case KindPathDelay:
		if err := run(b.iptables(a, "-D", st.delayer.queue)...); err != nil {
			return err
		}
	}
	st.stop()
	st.listener, st.service, st.delayer = nil, nil, nil
	return nil
}

// iptables builds the rule that queues every TCP packet towards a (in the
// server namespace, before routing) to the delaying reader.
func (b *Bed) iptables(a netip.Addr, op string, queue uint16) []string {
	tool := "iptables"
	if a.Is6() {
		tool = "ip6tables"
	}
	return []string{"ip", "netns", "exec", b.ServerNS, tool, "-w", "-t", "mangle", op, "PREROUTING",
		"-d", a.String(), "-p", "tcp", "-j", "NFQUEUE", "--queue-num", strconv.Itoa(int(queue))}
}

func familyFlag(a netip.Addr) string {
	if a.Is4() {
		return "-4"
	}
	return "-6"
}
