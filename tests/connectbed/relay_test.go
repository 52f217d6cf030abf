package bedtest

import (
	"bytes"
	"context"
	"crypto/rand"
	"crypto/sha256"
	"errors"
	"fmt"
	"io"
	"os/exec"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/hev2/hev2/tests/testbed"
)

// upBytes and downBytes are what the relay carries each way: a few MB,
// many times its 64 KiB buffers and the sockets' buffers.
const (
	upBytes   = 4 << 20
	downBytes = 3 << 20
)

func randomBytes(t *testing.T, n int) []byte {
	t.Helper()
	b := make([]byte, n)
	if _, err := rand.Read(b); err != nil {
		t.Fatal(err)
	}
	return b
}

func sum(b []byte) string { s := sha256.Sum256(b); return fmt.Sprintf("%x", s) }

// stdio starts hev2-connect --stdio NAME PORT in the client namespace with
// pipes on its stdin and stdout; stderr is collected.
func stdio(t *testing.T, ctx context.Context, name string, port int, flags ...string) (*exec.Cmd, io.WriteCloser, io.ReadCloser, *bytes.Buffer) {
	t.Helper()
	argv := append(append([]string{tool, "--stdio"}, flags...), name, strconv.Itoa(port))
	cmd := bed.Command(ctx, argv...)
	stdin, err := cmd.StdinPipe()
	if err != nil {
		t.Fatal(err)
	}
	stdout, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	return cmd, stdin, stdout, &stderr
}

// TestRelayBothWays: 4 MiB up and 3 MiB down at the same time, through the
// race (IPv6 blackholed). The server answers with the checksum of what it
// received only after reading its EOF, so the trailer proves that stdin's
// EOF became a half-close (shutdown(SHUT_WR)) while the way down stayed
// open; the tool ends at the socket's EOF, with exit 0.
func TestRelayBothWays(t *testing.T) {
	const port = 7001
	conns := listenServer(t, port)
	up, down := randomBytes(t, upBytes), randomBytes(t, downBytes)
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()

	server := make(chan error, 1)
	go func() {
		c := <-conns
		defer c.Close()
		wantIPv4Winner(t, c)
		sent := make(chan error, 1)
		go func() { _, err := c.Write(down); sent <- err }()
		got, err := io.ReadAll(c) // until the tool's half-close
		if err == nil {
			err = <-sent
		}
		if err == nil {
			_, err = fmt.Fprintf(c, "\nreceived %d %s\n", len(got), sum(got))
		}
		server <- err
	}()

	cmd, stdin, stdout, stderr := stdio(t, ctx, raceName, port)
	go func() { stdin.Write(up); stdin.Close() }()
	out, err := io.ReadAll(stdout)
	if err != nil {
		t.Fatal(err)
	}
	if err := cmd.Wait(); err != nil {
		t.Fatalf("hev2-connect --stdio: %v; stderr: %s", err, stderr)
	}
	if err := <-server; err != nil {
		t.Fatalf("server: %v", err)
	}
	if len(out) < downBytes || sum(out[:downBytes]) != sum(down) {
		t.Fatalf("way down: got %d bytes (sha256 %s), want %d (%s)", len(out), sum(out[:min(len(out), downBytes)]), downBytes, sum(down))
	}
	trailer := string(out[downBytes:])
	if want := fmt.Sprintf("\nreceived %d %s\n", upBytes, sum(up)); trailer != want {
		t.Fatalf("way up: server said %q, want %q", trailer, want)
	}
	if stderr.Len() != 0 {
		t.Errorf("stderr not empty: %s", stderr)
	}
	t.Logf("relayed %d bytes up and %d down intact (sha256 %.12s…, %.12s…)", upBytes, downBytes, sum(up), sum(down))
}

// TestRelaySocketEOFFirst: the server sends 1 MiB and half-closes at once.
// The tool must close its stdout then (the reader sees EOF while stdin is
// still open) and go on relaying stdin until its EOF before it exits 0.
// With -v, the race's timeline goes to stderr and stdout carries only the
// peer's bytes.
func TestRelaySocketEOFFirst(t *testing.T) {
	const port = 7002
	conns := listenServer(t, port)
	greeting, up := randomBytes(t, 1<<20), randomBytes(t, 2<<20)
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()

	received := make(chan string, 1)
	go func() {
		c := <-conns
		defer c.Close()
		_, err := c.Write(greeting)
		if err == nil {
			err = c.CloseWrite()
		}
		got, err2 := io.ReadAll(c)
		if err != nil || err2 != nil {
			received <- fmt.Sprintf("server error: %v %v", err, err2)
			return
		}
		received <- sum(got)
	}()

	cmd, stdin, stdout, stderr := stdio(t, ctx, raceName, port, "-v")
	out, err := io.ReadAll(stdout) // returns at EOF: stdin is still open
	if err != nil {
		t.Fatal(err)
	}
	if sum(out) != sum(greeting) {
		t.Fatalf("way down: %d bytes, want the %d the server sent", len(out), len(greeting))
	}
	if _, err := stdin.Write(up); err != nil {
		t.Fatalf("stdin after the socket's EOF: %v (the tool should still relay it)", err)
	}
	stdin.Close()
	if err := cmd.Wait(); err != nil {
		t.Fatalf("hev2-connect --stdio: %v; stderr: %s", err, stderr)
	}
	if got := <-received; got != sum(up) {
		t.Fatalf("way up after the socket's EOF: server got %s, want %s", got, sum(up))
	}
	if want := "attempt-won       #1 " + testbed.V4Good1.String(); !strings.Contains(stderr.String(), want) {
		t.Errorf("-v: no %q in the timeline on stderr: %s", want, stderr)
	}
}

// exitOf runs hev2-connect --stdio NAME PORT with empty stdin and returns
// its exit status, stdout and stderr.
func exitOf(t *testing.T, name string, port int) (int, string, string) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	res, err := bed.Exec(ctx, tool, "--stdio", name, strconv.Itoa(port))
	if err != nil {
		t.Fatal(err)
	}
	return res.ExitCode, res.Stdout, res.Stderr
}

// TestEveryAddressFails: exit 1 and one line on stderr that names the host
// and says why; nothing on stdout (it belongs to the peer's bytes).
func TestEveryAddressFails(t *testing.T) {
	for _, c := range []struct{ name, why string }{
		{refusedName, "connection refused"},
		{nxName, "Name or service not known"},
	} {
		code, out, errText := exitOf(t, c.name, 22)
		lines := strings.Split(strings.TrimSuffix(errText, "\n"), "\n")
		want := "hev2-connect: cannot connect to " + c.name + " port 22: "
		if code != 1 || out != "" || len(lines) != 1 || !strings.HasPrefix(lines[0], want) ||
			!strings.Contains(lines[0], c.why) {
			t.Errorf("%s: exit %d, stdout %q, stderr %q; want exit 1, no stdout, one line %q...%q",
				c.name, code, out, errText, want, c.why)
		}
		t.Logf("%s: exit %d: %s", c.name, code, lines[0])
	}
}

// TestRelayReset: a peer that resets the connection is a relay error:
// exit 3 and one line that names the host. The server resets only after
// reading the tool's EOF (its stdin is empty), so the reset reaches the
// relay, not the race: a reset that beats the race's SO_ERROR check fails
// that attempt instead, and the race goes on with the blackholed one.
func TestRelayReset(t *testing.T) {
	const port = 7003
	conns := listenServer(t, port)
	go func() {
		c := <-conns
		io.Copy(io.Discard, c)
		c.SetLinger(0) // close sends RST
		c.Close()
	}()
	code, out, errText := exitOf(t, raceName, port)
	want := "hev2-connect: " + raceName + " port 7003: "
	if code != 3 || out != "" || !strings.HasPrefix(errText, want) || strings.Count(errText, "\n") != 1 {
		t.Fatalf("reset: exit %d, stdout %q, stderr %q; want exit 3 and one line %q...", code, out, errText, want)
	}
	t.Logf("reset: exit %d: %s", code, strings.TrimSpace(errText))
}

// TestStdoutReaderGone: when whoever reads the tool's stdout goes away
// (`hev2-connect --stdio ... | head -c 10`), the tool ends as cat or nc
// would: killed by SIGPIPE, without a message.
func TestStdoutReaderGone(t *testing.T) {
	const port = 7004
	conns := listenServer(t, port)
	data := randomBytes(t, 4<<20) // more than the pipe and socket buffers hold
	go func() {
		c := <-conns
		defer c.Close()
		c.Write(data) // fails once the tool is gone
	}()
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	cmd, stdin, stdout, stderr := stdio(t, ctx, raceName, port)
	defer stdin.Close()
	if _, err := io.ReadFull(stdout, make([]byte, 10)); err != nil {
		t.Fatal(err)
	}
	stdout.Close()
	err := cmd.Wait()
	var exitErr *exec.ExitError
	if !errors.As(err, &exitErr) || exitErr.Sys().(syscall.WaitStatus).Signal() != syscall.SIGPIPE || stderr.Len() != 0 {
		t.Fatalf("stdout's reader gone: %v, stderr %q; want killed by SIGPIPE, nothing on stderr", err, stderr)
	}
}
