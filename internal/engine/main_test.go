package engine

import (
	"os"
	"testing"
)

// The tests of the race itself start every connect from RFC 8305's
// defaults: the process-wide history is off unless a test (history_test.go)
// turns it on for itself.
func TestMain(m *testing.M) {
	SetHistoryEnabled(false)
	os.Exit(m.Run())
}
