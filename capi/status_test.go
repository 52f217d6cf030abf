package main

import (
	"syscall"
	"testing"
)

// A win that raced hev2_cancel reaches publish as (nil error, canceled): its
// socket is closed there, so the outcome must be the cancel's, never
// HEV2_OK with no fd (which hev2_result then reported as fd -1).
func TestOutcomeOfWinClosedByCancel(t *testing.T) {
	o := outcomeOf(nil, true)
	if o.status != statusCancelled || o.errno != int(syscall.ECANCELED) {
		t.Fatalf("outcomeOf(nil, canceled) = status %d errno %d, want %d (HEV2_ECANCELED) and ECANCELED",
			o.status, o.errno, statusCancelled)
	}
	if o := outcomeOf(nil, false); o.status != statusOK || o.errno != 0 {
		t.Fatalf("outcomeOf(nil, not canceled) = status %d errno %d, want HEV2_OK", o.status, o.errno)
	}
}
