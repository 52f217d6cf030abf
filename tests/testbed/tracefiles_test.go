package testbed

import (
	"context"
	"os"
	"strings"
	"sync"
	"testing"

	"github.com/hev2/hev2/core"
	"github.com/hev2/hev2/tests/loopbacktest"
	"github.com/hev2/hev2/tests/testbed/contract"
)

// A refused loopback race written by core (as every hev2 client writes it)
// passes the suite's check when the client says it failed, and the check
// catches files that tell another race or are missing. No root needed.
func TestCheckTraceFiles(t *testing.T) {
	// Bound and never listening, for the whole test: a closed listener's
	// port could be taken by another test in between.
	port := uint16(loopbacktest.Refusing(t, "127.0.0.1"))
	var mu sync.Mutex // Trace runs on whichever goroutine steps the race
	var events []core.TraceEvent
	d := core.Dialer{Trace: func(ev core.TraceEvent) { mu.Lock(); events = append(events, ev); mu.Unlock() }}
	if _, err := d.Connect(context.Background(), "127.0.0.1", port); err == nil {
		t.Fatal("the refusing port accepted a connection")
	}
	mu.Lock()
	defer mu.Unlock()
	dir := t.TempDir()
	files, flags := contract.TraceFlags(dir, "refused")
	if len(flags) != 6 {
		t.Fatalf("flags %q", flags)
	}
	for path, f := range map[string]core.TraceFormat{files.SVG: core.TraceSVG, files.Qlog: core.TraceQlog, files.Chrome: core.TraceChrome} {
		out, err := os.Create(path)
		if err != nil {
			t.Fatal(err)
		}
		if err := core.WriteTrace(out, f, events, d.TraceMeta("127.0.0.1", port)); err != nil {
			t.Fatal(err)
		}
		out.Close()
	}
	if err := checkTraceFiles(files, &ClientResult{OK: false}); err != nil {
		t.Errorf("a failed race's files: %v", err)
	}
	if err := checkTraceFiles(files, &ClientResult{OK: true}); err == nil || !strings.Contains(err.Error(), "ok=true") {
		t.Errorf("files of a failed race passed for a client that said ok: %v", err)
	}
	os.Remove(files.Chrome)
	if err := checkTraceFiles(files, &ClientResult{OK: false}); err == nil {
		t.Error("a missing Chrome trace passed")
	}
}
