package main

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/miekg/dns"
	"golang.org/x/net/dns/dnsmessage"

	"github.com/hev2/hev2/tests/testdns"
)

// cmd is the command run in this process, talked to as its callers do.
type cmd struct {
	t     *testing.T
	in    io.WriteCloser
	out   *bufio.Reader
	addr  string
	done  chan int
	stop  context.CancelFunc
	drain sync.Once
}

// discard reads (and drops) the rest of the command's output, so that it
// can end.
func (c *cmd) discard() {
	c.drain.Do(func() { go io.Copy(io.Discard, c.out) })
}

func start(t *testing.T, args ...string) *cmd {
	t.Helper()
	inR, inW := io.Pipe()
	outR, outW := io.Pipe()
	ctx, stop := context.WithCancel(context.Background())
	c := &cmd{t: t, in: inW, out: bufio.NewReader(outR), done: make(chan int, 1), stop: stop}
	var stderr strings.Builder
	go func() {
		code := run(ctx, args, inR, outW, &stderr)
		outW.Close()
		c.done <- code
	}()
	line, err := c.out.ReadString('\n')
	if err != nil {
		t.Fatalf("no ready line: %v (stderr %q)", err, stderr.String())
	}
	c.addr = strings.TrimSpace(line)
	t.Cleanup(func() {
		stop()
		inW.Close()
		c.discard()
		<-c.done
	})
	return c
}

// send writes one command (on one line) and returns its reply, decoded.
func (c *cmd) send(command string) map[string]any {
	c.t.Helper()
	var in bytes.Buffer
	if json.Compact(&in, []byte(command)) != nil {
		in.Reset()
		in.WriteString(command) // not JSON: as it is
	}
	in.WriteByte('\n')
	if _, err := c.in.Write(in.Bytes()); err != nil {
		c.t.Fatal(err)
	}
	line, err := c.out.ReadString('\n')
	if err != nil {
		c.t.Fatal(err)
	}
	var reply map[string]any
	if err := json.Unmarshal([]byte(line), &reply); err != nil {
		c.t.Fatalf("reply %q: %v", line, err)
	}
	return reply
}

func (c *cmd) zone(z string) {
	c.t.Helper()
	if r := c.send(`{"zone": ` + z + `}`); r["ok"] != true {
		c.t.Fatalf("zone %s: %v", z, r)
	}
}

// queries returns the queries the server received, "name TYPE proto" each.
func (c *cmd) queries() []string {
	c.t.Helper()
	var out []string
	for _, q := range c.send(`{"queries": true}`)["queries"].([]any) {
		m := q.(map[string]any)
		out = append(out, m["name"].(string)+" "+m["type"].(string)+" "+m["proto"].(string))
	}
	return out
}

// waitQuery waits until the server received want ("name TYPE proto").
func (c *cmd) waitQuery(want string) {
	c.t.Helper()
	for deadline := time.Now().Add(10 * time.Second); time.Now().Before(deadline); time.Sleep(2 * time.Millisecond) {
		for _, q := range c.queries() {
			if q == want {
				return
			}
		}
	}
	c.t.Fatalf("the server never received %s: %v", want, c.queries())
}

func msg(name string, qtype uint16) *dns.Msg {
	m := new(dns.Msg)
	m.SetQuestion(dns.Fqdn(name), qtype)
	return m
}

func exchange(t *testing.T, proto, addr, name string, qtype uint16) *dns.Msg {
	t.Helper()
	client := &dns.Client{Net: proto, Timeout: 10 * time.Second}
	r, _, err := client.Exchange(msg(name, qtype), addr)
	if err != nil {
		t.Fatalf("%s %s over %s: %v", name, dns.Type(qtype), proto, err)
	}
	return r
}

func answers(r *dns.Msg) string {
	var s []string
	for _, rr := range r.Answer {
		switch rr := rr.(type) {
		case *dns.A:
			s = append(s, rr.A.String())
		case *dns.AAAA:
			s = append(s, rr.AAAA.String())
		}
	}
	return dns.RcodeToString[r.Rcode] + " " + strings.Join(s, ",")
}

func TestAnswers(t *testing.T) {
	c := start(t)
	c.zone(`{"a.test": {"A": ["127.0.0.1", "127.0.0.2"], "AAAA": ["::1"]},
		"B.Test.": {"A": {"rcode": "servfail"}, "AAAA": {"rcode": "NXDOMAIN"}},
		"slow.test": {"A": {"addrs": ["127.0.0.3"], "delay": 0.05}},
		"*.wild.test": {"AAAA": ["::2"]}}`)
	for _, proto := range []string{"udp", "tcp"} {
		for _, tc := range []struct {
			name  string
			qtype uint16
			want  string
		}{
			{"a.test", dns.TypeA, "NOERROR 127.0.0.1,127.0.0.2"},
			{"A.TEST", dns.TypeAAAA, "NOERROR ::1"},
			{"b.test", dns.TypeA, "SERVFAIL "},
			{"b.test", dns.TypeAAAA, "NXDOMAIN "},
			{"slow.test", dns.TypeA, "NOERROR 127.0.0.3"},
			{"slow.test", dns.TypeAAAA, "NOERROR "}, // NODATA
			{"x.wild.test", dns.TypeAAAA, "NOERROR ::2"},
			{"nx.test", dns.TypeA, "NXDOMAIN "},
		} {
			if got := answers(exchange(t, proto, c.addr, tc.name, tc.qtype)); got != tc.want {
				t.Errorf("%s %s over %s: %q, want %q", tc.name, dns.Type(tc.qtype), proto, got, tc.want)
			}
		}
	}
	// An entry replaces the one before.
	c.zone(`{"a.test": {"A": {"rcode": "NXDOMAIN"}}}`)
	if got := answers(exchange(t, "udp", c.addr, "a.test", dns.TypeA)); got != "NXDOMAIN " {
		t.Errorf("a.test A after its change: %q", got)
	}
	qs := c.queries()
	if len(qs) != 17 || qs[0] != "a.test A udp" || qs[8] != "a.test A tcp" || qs[16] != "a.test A udp" {
		t.Errorf("queries: %v", qs)
	}
}

func TestBadCommandsChangeNothing(t *testing.T) {
	c := start(t)
	c.zone(`{"a.test": {"A": ["127.0.0.1"]}}`)
	for _, bad := range []string{
		`{"zone": {"a.test": {"A": ["::1"]}}}`,
		`{"zone": {"a.test": {"A": ["127.0.0.9"], "AAAA": ["127.0.0.1"]}}}`,
		`{"zone": {"a.test": {"A": {"addrs": ["127.0.0.9"], "delay": -1}}}}`,
		`{"zone": {"a.test": {"A": {"rcode": "NOPE"}}}}`,
		`{"zone": {"a.test": {"AAAA": {"after_aaaa": true}}}}`,
		`{"zone": {"a.test": {"A": {"never": true, "typo": 1}}}}`,
		`{"zone": {"a.test": {"NOTATYPE": ["127.0.0.1"]}}}`,
		`{"zone": {"a.test": {"A": {"hold_until": {"type": "X"}}}}}`,
		`{"zone": {}, "queries": true}`,
		`{}`,
		`not json`,
	} {
		if r := c.send(bad); r["error"] == nil {
			t.Errorf("%s: %v, want an error", bad, r)
		}
	}
	if got := answers(exchange(t, "udp", c.addr, "a.test", dns.TypeA)); got != "NOERROR 127.0.0.1" {
		t.Errorf("a.test A: %q", got)
	}
}

// An answer held until another query arrived is not written before it, and
// is written after it, over UDP and TCP (whose connection carries the other
// query meanwhile).
func TestHoldUntil(t *testing.T) {
	c := start(t)
	c.zone(`{"udp.test": {"AAAA": {"addrs": ["::1"], "hold_until": {"type": "A"}}, "A": ["127.0.0.1"]},
		"tcp.test": {"AAAA": {"addrs": ["::1"], "hold_until": {"type": "A"}}, "A": ["127.0.0.1"]},
		"early.test": {"AAAA": {"addrs": ["::2"], "hold_until": {"name": "udp.test", "type": "A"}}}}`)
	for _, proto := range []string{"udp", "tcp"} {
		name := proto + ".test"
		conn, err := dns.Dial(proto, c.addr)
		if err != nil {
			t.Fatal(err)
		}
		defer conn.Close()
		if err := conn.WriteMsg(msg(name, dns.TypeAAAA)); err != nil {
			t.Fatal(err)
		}
		c.waitQuery(name + " AAAA " + proto)
		// Held: nothing to read. (A broken hold whose answer is late is
		// missed here; a sound one never fails.)
		conn.SetReadDeadline(time.Now().Add(50 * time.Millisecond))
		if r, err := conn.ReadMsg(); err == nil {
			t.Fatalf("%s: an answer before the A query: %v", proto, r)
		}
		if err := conn.WriteMsg(msg(name, dns.TypeA)); err != nil {
			t.Fatal(err)
		}
		got := map[uint16]string{}
		conn.SetReadDeadline(time.Now().Add(10 * time.Second))
		for len(got) < 2 {
			r, err := conn.ReadMsg()
			if err != nil {
				t.Fatalf("%s: %v (so far %v)", proto, err, got)
			}
			got[r.Question[0].Qtype] = answers(r)
		}
		if got[dns.TypeAAAA] != "NOERROR ::1" || got[dns.TypeA] != "NOERROR 127.0.0.1" {
			t.Errorf("%s: answers %v", proto, got)
		}
	}
	// Its trigger arrived already: answered at once.
	if got := answers(exchange(t, "udp", c.addr, "early.test", dns.TypeAAAA)); got != "NOERROR ::2" {
		t.Errorf("early.test AAAA: %q", got)
	}
}

func TestZoneFile(t *testing.T) {
	file := filepath.Join(t.TempDir(), "zone.json")
	if err := os.WriteFile(file, []byte(`{"f.test": {"AAAA": ["::1"]}}`), 0o644); err != nil {
		t.Fatal(err)
	}
	c := start(t, "-zone", file, "-listen", "[::1]:0")
	if !strings.HasPrefix(c.addr, "[::1]:") {
		t.Errorf("ready line %q", c.addr)
	}
	if got := answers(exchange(t, "udp", c.addr, "f.test", dns.TypeAAAA)); got != "NOERROR ::1" {
		t.Errorf("f.test AAAA: %q", got)
	}
}

func TestNever(t *testing.T) {
	c := start(t)
	c.zone(`{"dead.test": {"A": {"never": true}}}`)
	conn, err := dns.Dial("udp", c.addr)
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close()
	if err := conn.WriteMsg(msg("dead.test", dns.TypeA)); err != nil {
		t.Fatal(err)
	}
	c.waitQuery("dead.test A udp")
	conn.SetReadDeadline(time.Now().Add(50 * time.Millisecond))
	if r, err := conn.ReadMsg(); err == nil {
		t.Fatalf("an answer: %v", r)
	}
}

func TestExits(t *testing.T) {
	// On stdin's end, and on a signal (ctx), with status 0, the port freed.
	for _, how := range []string{"stdin", "signal"} {
		c := start(t)
		if how == "stdin" {
			c.in.Close()
		} else {
			c.stop()
		}
		c.discard()
		select {
		case code := <-c.done:
			c.done <- code // for the cleanup
			if code != 0 {
				t.Errorf("%s: exit status %d", how, code)
			}
		case <-time.After(10 * time.Second):
			t.Fatalf("%s: still running", how)
		}
		l, err := net.ListenPacket("udp", c.addr)
		if err != nil {
			t.Errorf("%s: port not freed: %v", how, err)
		} else {
			l.Close()
		}
	}
}

func TestUsage(t *testing.T) {
	for _, args := range [][]string{{"-listen", "nowhere"}, {"extra"}, {"-zone", "/nonexistent"}} {
		var stderr strings.Builder
		if code := run(context.Background(), args, strings.NewReader(""), io.Discard, &stderr); code != 2 {
			t.Errorf("%q: exit status %d, want 2 (%s)", args, code, stderr.String())
		}
	}
	var stderr strings.Builder
	if code := run(context.Background(), []string{"-listen", "192.0.2.1:53"}, strings.NewReader(""), io.Discard, &stderr); code != 1 {
		t.Errorf("an address not of this host: exit status %d, want 1 (%s)", code, stderr.String())
	}
}

// httpsAnswer asks name's HTTPS records over proto and returns the answer:
// its RCODE ("TC" after it when truncated), then each record as
// miekg/dns writes it out, or as "rdata HEX" when miekg/dns cannot read it
// (a malformed record, which makes miekg/dns refuse a whole message: the
// records are cut out of the message with dnsmessage, then read one by one).
func httpsAnswer(t *testing.T, proto, addr, name string) []string {
	t.Helper()
	conn, err := dns.Dial(proto, addr)
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close()
	conn.SetDeadline(time.Now().Add(10 * time.Second))
	if err := conn.WriteMsg(msg(name, dns.TypeHTTPS)); err != nil {
		t.Fatal(err)
	}
	buf := make([]byte, 65535)
	n, err := conn.Read(buf)
	if err != nil {
		t.Fatalf("%s HTTPS over %s: %v", name, proto, err)
	}
	var p dnsmessage.Parser
	h, err := p.Start(buf[:n])
	if err != nil {
		t.Fatal(err)
	}
	out := []string{dns.RcodeToString[int(h.RCode)]}
	if h.Truncated {
		out[0] += " TC"
	}
	if err := p.SkipAllQuestions(); err != nil {
		t.Fatal(err)
	}
	for {
		rh, err := p.AnswerHeader()
		if err == dnsmessage.ErrSectionDone {
			return out
		}
		if err != nil {
			t.Fatal(err)
		}
		body, err := p.UnknownResource()
		if err != nil || rh.Type != dnsmessage.TypeHTTPS {
			t.Fatalf("record %v: %v", rh, err)
		}
		// The record alone, owned by ".", read by miekg/dns.
		wire := []byte{0, 0, byte(dns.TypeHTTPS), 0, 1, 0, 0, 0, 1, byte(len(body.Data) >> 8), byte(len(body.Data))}
		rr, _, err := dns.UnpackRR(append(wire, body.Data...), 0)
		if err != nil {
			out = append(out, fmt.Sprintf("rdata %x", body.Data))
			continue
		}
		out = append(out, strings.TrimPrefix(rr.String(), rr.Header().String()))
	}
}

func TestHTTPS(t *testing.T) {
	c := start(t)
	port3, err := testdns.MalformedHTTPS("port3")
	if err != nil {
		t.Fatal(err)
	}
	c.zone(`{"example.test": {"HTTPS": {"records": [
			{"priority": 1, "target": ".", "alpn": ["h2", "h3"], "port": 8443,
			 "ipv4hint": ["198.18.0.10"], "ech": "AEX+DQBB", "mandatory": ["alpn", "key65000"],
			 "no-default-alpn": true, "ipv6hint": ["2001:db8::10"], "key65000": "x"},
			{"priority": 0, "target": "alias.test."},
			{"malformed": "port3"},
			{"rdata": "AAIA"}],
		"delay": 0.05},
		"A": ["198.18.0.1"]},
		"list.test": {"HTTPS": [{"priority": 2, "target": "svc.list.test", "alpn": ["h3"]}]},
		"fail.test": {"HTTPS": {"rcode": "SERVFAIL"}},
		"tc.test": {"HTTPS": {"records": [{"priority": 1}], "truncate": true}},
		"dead.test": {"HTTPS": {"never": true}}}`)
	example := []string{"NOERROR",
		`1 . mandatory="alpn,key65000" alpn="h2,h3" no-default-alpn="" port="8443" ipv4hint="198.18.0.10" ech="AEX+DQBB" ipv6hint="2001:db8::10" key65000="x"`,
		"0 alias.test.",
		fmt.Sprintf("rdata %x", port3.RData),
		"2 .", // {"rdata": "AAIA"}: priority 2, target "."
	}
	for _, tc := range []struct {
		proto, name string
		want        []string
	}{
		{"udp", "example.test", example},
		{"tcp", "example.test", example},
		{"udp", "list.test", []string{"NOERROR", `2 svc.list.test. alpn="h3"`}},
		{"udp", "fail.test", []string{"SERVFAIL"}},
		{"udp", "tc.test", []string{"NOERROR TC"}},
		{"tcp", "tc.test", []string{"NOERROR", "1 ."}},
		{"udp", "nx.test", []string{"NXDOMAIN"}},
		{"udp", "list.test", []string{"NOERROR", `2 svc.list.test. alpn="h3"`}},
	} {
		start := time.Now()
		got := httpsAnswer(t, tc.proto, c.addr, tc.name)
		if !slices.Equal(got, tc.want) {
			t.Errorf("%s over %s:\n got  %q\n want %q", tc.name, tc.proto, got, tc.want)
		}
		if tc.name == "example.test" && time.Since(start) < 50*time.Millisecond {
			t.Errorf("example.test answered after %v, before its delay", time.Since(start))
		}
	}
	// A name with an HTTPS entry and none of A: NODATA for A, and the other way round.
	if got := answers(exchange(t, "udp", c.addr, "list.test", dns.TypeA)); got != "NOERROR " {
		t.Errorf("list.test A: %q", got)
	}
	if got := httpsAnswer(t, "udp", c.addr, "example.test"); len(got) != 5 {
		t.Errorf("example.test HTTPS: %q", got)
	}
	// Silence, as for A and AAAA.
	conn, err := dns.Dial("udp", c.addr)
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close()
	if err := conn.WriteMsg(msg("dead.test", dns.TypeHTTPS)); err != nil {
		t.Fatal(err)
	}
	c.waitQuery("dead.test HTTPS udp")
	conn.SetReadDeadline(time.Now().Add(50 * time.Millisecond))
	if r, err := conn.ReadMsg(); err == nil {
		t.Fatalf("an answer: %v", r)
	}
}

// Entries a zone refuses: the record must be well formed (a malformed one
// is asked for by name) and the fields of the right type.
func TestHTTPSBadZones(t *testing.T) {
	c := start(t)
	for _, bad := range []string{
		`{"HTTPS": {"records": [{"target": "."}]}}`,                             // no priority
		`{"HTTPS": {"records": [{"priority": 1, "alpn": []}]}}`,                 // empty alpn
		`{"HTTPS": {"records": [{"priority": 1, "alpn": [""]}]}}`,               // empty alpn id
		`{"HTTPS": {"records": [{"priority": 1, "mandatory": ["mandatory"]}]}}`, // itself
		`{"HTTPS": {"records": [{"priority": 1, "mandatory": ["port", "port"]}]}}`,
		`{"HTTPS": {"records": [{"priority": 1, "mandatory": []}]}}`,
		`{"HTTPS": {"records": [{"priority": 1, "mandatory": ["nope"]}]}}`,
		`{"HTTPS": {"records": [{"priority": 1, "port": 70000}]}}`,
		`{"HTTPS": {"records": [{"priority": 1, "port": "443"}]}}`,
		`{"HTTPS": {"records": [{"priority": 1, "no-default-alpn": false}]}}`,
		`{"HTTPS": {"records": [{"priority": 1, "ipv4hint": ["2001:db8::1"]}]}}`,
		`{"HTTPS": {"records": [{"priority": 1, "ipv6hint": ["::ffff:198.18.0.1"]}]}}`,
		`{"HTTPS": {"records": [{"priority": 1, "ipv4hint": []}]}}`,
		`{"HTTPS": {"records": [{"priority": 1, "ech": "not base64!"}]}}`,
		`{"HTTPS": {"records": [{"priority": 1, "key1": "h2"}]}}`, // alpn has a name
		`{"HTTPS": {"records": [{"priority": 1, "key70000": "x"}]}}`,
		`{"HTTPS": {"records": [{"priority": 1, "typo": 1}]}}`,
		`{"HTTPS": {"records": [{"priority": 1, "target": "a..b"}]}}`,
		`{"HTTPS": {"records": [{"malformed": "nope"}]}}`,
		`{"HTTPS": {"records": [{"malformed": "port3", "priority": 2}]}}`,
		`{"HTTPS": {"records": [{"rdata": "%%%"}]}}`,
		`{"HTTPS": {"records": ["1 . alpn=h2"]}}`,
		`{"HTTPS": {"addrs": ["198.18.0.1"]}}`,
		`{"A": {"records": [{"priority": 1}]}}`,
	} {
		if r := c.send(`{"zone": {"bad.test": ` + bad + `}}`); r["error"] == nil {
			t.Errorf("%s: %v, want an error", bad, r)
		}
	}
	if got := httpsAnswer(t, "udp", c.addr, "bad.test"); !slices.Equal(got, []string{"NXDOMAIN"}) {
		t.Errorf("bad.test after refused zones: %q", got)
	}
}
