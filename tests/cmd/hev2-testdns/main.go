// Command hev2-testdns serves the project's test DNS server (package
// tests/testdns) to tests written in other languages: the Python and
// Ruby bindings' tests start it as a child process, script its answers over
// its stdin and read what it received from its stdout.
//
//	hev2-testdns [-listen IP:PORT] [-zone FILE]
//
// It serves UDP and TCP on one port of -listen (default 127.0.0.1:0, a
// free port; inside a network namespace, e.g. under `ip netns exec`, the
// namespace's). When both are served it prints the address, one line
// (127.0.0.1:53, [::1]:5353), and from then on reads commands, one JSON
// object a line on stdin, answering each with one JSON line on stdout:
//
//	{"zone": ZONE}     sets the (name, type) entries ZONE lists   → {"ok": true}
//	{"queries": true}  the queries received so far, oldest first  →
//	                   {"queries": [{"name": "a.test", "type": "AAAA", "proto": "udp"}, ...]}
//
// A command it cannot take is answered {"error": "..."}, and the server
// goes on. It stops serving and exits 0 when its stdin closes (so it never
// outlives the process that started it, however that one ends) or on
// SIGTERM, SIGINT or SIGHUP; it exits 1 if it cannot listen, 2 on a usage
// error.
//
// A ZONE (also -zone FILE's content) maps names to types to entries:
//
//	{"a.test": {"A": ["127.0.0.1"], "AAAA": {"never": true}},
//	 "b.test": {"AAAA": {"addrs": ["::1"], "hold_until": {"type": "A"}}}}
//
// An entry is a list of addresses or of HTTPS records (answered at once),
// or an object of:
//
//	addrs        the answer's addresses (of the entry's family)
//	records      (HTTPS entries) the answer's HTTPS records, in order
//	rcode        "NOERROR" (the default), "NXDOMAIN", "SERVFAIL", ...
//	never        the query is read and never answered
//	delay        seconds to hold the answer back
//	hold_until   {"name": N, "type": T}: the answer is held until a T query
//	             for N (the entry's own name if left out) has arrived, at
//	             any time since the server started: an order of events
//	             fixed without any timing
//	after_aaaa   (A entries) the n-th A answer waits for the name's n-th
//	             AAAA answer (testdns.Behaviour.AfterAAAA)
//	truncate     UDP answers have TC set and no records; TCP gets the answer
//	reject_edns  queries with EDNS0 are answered FORMERR
//
// An HTTPS record (RFC 9460) is an object as its presentation form reads:
//
//	{"priority": 1, "target": ".", "mandatory": ["alpn"], "alpn": ["h2", "h3"],
//	 "no-default-alpn": true, "port": 8443, "ipv4hint": ["198.18.0.10"],
//	 "ech": "AEX+DQBB...", "ipv6hint": ["2001:db8::10"], "key65000": "text"}
//
// priority is needed (0 makes an AliasMode record); target defaults to ".";
// each other field is a SvcParam, by its name or as keyNNNNN for a key of
// no name here (its value the string's bytes); ech is base64. The record
// must be well formed (no empty list, mandatory naming neither itself nor
// a key twice). A malformed one is asked for as a whole instead:
//
//	{"malformed": KIND}   a ServiceMode record (priority 1, target ".")
//	                      with one fault: port3 (a port of 3 bytes),
//	                      truncated (a SvcParam longer than the RDATA),
//	                      keys-unordered, keys-duplicate, alpn-empty,
//	                      alpn-empty-id, alpn-overflow, no-default-alpn-value,
//	                      ipv4hint5, ipv4hint-empty, ipv6hint15,
//	                      mandatory-empty, mandatory-odd, mandatory-self,
//	                      mandatory-duplicate (testdns.MalformedHTTPS)
//	{"rdata": BASE64}     the record's RDATA, byte for byte
//
// For example, a service, an alias and a malformed record beside them,
// answered after 100 ms:
//
//	{"example.test": {"HTTPS": {"records": [
//	    {"priority": 1, "alpn": ["h2"], "port": 8443, "mandatory": ["alpn"]},
//	    {"priority": 0, "target": "alias.test."},
//	    {"malformed": "port3"}], "delay": 0.1}}}
//
// never, delay, rcode, truncate and the other fields apply to HTTPS
// entries as to address ones; an HTTPS entry without records is NODATA.
//
// As in package testdns, a name with no entry is NXDOMAIN, a name asked
// for a type it has no entry for is NODATA, and "*.example" covers every
// name below example. An entry replaces the one the (name, type) had.
package main

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"
	"net"
	"net/netip"
	"os"
	"os/signal"
	"syscall"

	"github.com/miekg/dns"
)

func main() {
	ctx, stop := signal.NotifyContext(context.Background(), syscall.SIGTERM, syscall.SIGINT, syscall.SIGHUP)
	code := run(ctx, os.Args[1:], os.Stdin, os.Stdout, os.Stderr)
	stop()
	os.Exit(code)
}

// run is the command: it serves until stdin ends or ctx is done.
func run(ctx context.Context, args []string, stdin io.Reader, stdout, stderr io.Writer) int {
	fs := flag.NewFlagSet("hev2-testdns", flag.ContinueOnError)
	fs.SetOutput(stderr)
	listen := fs.String("listen", "127.0.0.1:0", "IP:PORT to serve UDP and TCP on (port 0: a free one)")
	zoneFile := fs.String("zone", "", "a JSON zone file to serve from the start")
	if err := fs.Parse(args); err != nil {
		return 2
	}
	fail := func(code int, format string, a ...any) int {
		fmt.Fprintf(stderr, "hev2-testdns: "+format+"\n", a...)
		return code
	}
	if fs.NArg() != 0 {
		return fail(2, "unexpected arguments %q", fs.Args())
	}
	addr, err := netip.ParseAddrPort(*listen)
	if err != nil {
		return fail(2, "-listen: %v", err)
	}
	srv := newServer()
	if *zoneFile != "" {
		text, err := os.ReadFile(*zoneFile)
		if err != nil {
			return fail(2, "%v", err)
		}
		var z zone
		if err := decodeStrict(text, &z); err != nil {
			return fail(2, "%s: %v", *zoneFile, err)
		}
		if err := srv.setZone(z); err != nil {
			return fail(2, "%s: %v", *zoneFile, err)
		}
	}
	bound, err := srv.listen(addr)
	if err != nil {
		return fail(1, "%v", err)
	}
	defer srv.close()

	out := bufio.NewWriter(stdout)
	fmt.Fprintln(out, bound)
	if err := out.Flush(); err != nil {
		return 0 // nobody reads: nobody will write either
	}
	lines := make(chan []byte)
	go func() {
		defer close(lines)
		in := bufio.NewScanner(stdin)
		in.Buffer(make([]byte, 64<<10), 16<<20)
		for in.Scan() {
			lines <- append([]byte(nil), in.Bytes()...)
		}
	}()
	for {
		select {
		case <-ctx.Done():
			return 0
		case line, ok := <-lines:
			if !ok {
				return 0
			}
			if len(line) == 0 {
				continue
			}
			reply, _ := json.Marshal(srv.command(line))
			out.Write(reply)
			out.WriteByte('\n')
			if err := out.Flush(); err != nil {
				return 0
			}
		}
	}
}

// command runs one command line and returns its reply.
func (s *server) command(line []byte) any {
	var c struct {
		Zone    zone `json:"zone"`
		Queries bool `json:"queries"`
	}
	if err := decodeStrict(line, &c); err != nil {
		return errorReply{err.Error()}
	}
	switch {
	case c.Zone != nil && !c.Queries:
		if err := s.setZone(c.Zone); err != nil {
			return errorReply{err.Error()}
		}
		return struct {
			OK bool `json:"ok"`
		}{true}
	case c.Queries && c.Zone == nil:
		type query struct {
			Name  string `json:"name"`
			Type  string `json:"type"`
			Proto string `json:"proto"`
		}
		qs := []query{}
		for _, q := range s.dns.Queries("") {
			qs = append(qs, query{q.Name, dns.Type(q.Type).String(), q.Proto})
		}
		return struct {
			Queries []query `json:"queries"`
		}{qs}
	}
	return errorReply{`want one of "zone" or "queries"`}
}

type errorReply struct {
	Error string `json:"error"`
}

// decodeStrict decodes one JSON value into v, refusing unknown fields.
func decodeStrict(text []byte, v any) error {
	d := json.NewDecoder(bytes.NewReader(text))
	d.DisallowUnknownFields()
	if err := d.Decode(v); err != nil {
		return err
	}
	if d.More() {
		return errors.New("more than one JSON value")
	}
	return nil
}

// listen serves on addr, UDP and TCP on the same port; port 0 finds one
// free for both.
func (s *server) listen(addr netip.AddrPort) (netip.AddrPort, error) {
	for try := 0; ; try++ {
		udp, err := net.ListenPacket("udp", addr.String())
		if err != nil {
			return netip.AddrPort{}, err
		}
		bound := netip.MustParseAddrPort(udp.LocalAddr().String())
		tcp, err := net.Listen("tcp", bound.String())
		if err != nil {
			udp.Close()
			if addr.Port() == 0 && try < 20 {
				continue // the TCP port is taken: try another one
			}
			return netip.AddrPort{}, err
		}
		s.serve(&dns.Server{PacketConn: udp, Handler: s})
		s.serve(&dns.Server{Listener: tcp, Handler: s})
		return bound, nil
	}
}

// serve starts srv and returns once it serves.
func (s *server) serve(srv *dns.Server) {
	started := make(chan struct{})
	srv.NotifyStartedFunc = func() { close(started) }
	s.servers = append(s.servers, srv)
	go srv.ActivateAndServe()
	<-started
}

// close stops serving; answers still held back are dropped.
func (s *server) close() {
	s.mu.Lock()
	close(s.closed)
	s.mu.Unlock()
	for _, srv := range s.servers {
		srv.Shutdown()
	}
	s.dns.Close()
	s.pending.Wait()
}
