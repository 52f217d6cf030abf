package testbed

import (
	"fmt"
	"net"

	"github.com/vishvananda/netns"

	"github.com/hev2/hev2/tests/testdns"
)

// The test bed's DNS server is the project's test DNS server (package
// testdns), served on UDP and TCP port 53 of DNSServerV4 and DNSServerV6 in
// the server namespace. These names keep the test bed's API in one place.
type (
	// DNSServer answers every client-namespace lookup from a table set by
	// the test.
	DNSServer = testdns.Server
	// Behaviour is how the DNS server answers one (name, query type).
	Behaviour = testdns.Behaviour
	// Query is one query the DNS server received.
	Query = testdns.Query
)

// The behaviours a scenario gives a name (see testdns for each).
var (
	Answer      = testdns.Answer
	Delayed     = testdns.Delayed
	NeverAnswer = testdns.NeverAnswer
	NoData      = testdns.NoData
	NXDomain    = testdns.NXDomain
	ServFail    = testdns.ServFail
	Truncated   = testdns.Truncated
)

// listenDNS opens the DNS server's sockets inside the server namespace and
// starts serving on them.
func listenDNS(s *DNSServer, server netns.NsHandle) error {
	var conns []net.PacketConn
	var lns []net.Listener
	err := inNamespace(server, func() error {
		for _, host := range []string{DNSServerV4.String(), DNSServerV6.String()} {
			addr := net.JoinHostPort(host, "53")
			pc, err := net.ListenPacket("udp", addr)
			if err != nil {
				return err
			}
			conns = append(conns, pc)
			ln, err := net.Listen("tcp", addr)
			if err != nil {
				return err
			}
			lns = append(lns, ln)
		}
		return nil
	})
	if err != nil {
		for _, c := range conns {
			c.Close()
		}
		for _, l := range lns {
			l.Close()
		}
		return fmt.Errorf("testbed: DNS server sockets: %w", err)
	}
	for i := range conns {
		s.Serve(conns[i], lns[i])
	}
	return nil
}
