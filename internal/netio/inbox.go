package netio

import (
	"sync"

	"github.com/hev2/hev2/internal/race"
)

// inbox collects events from resolver goroutines and the poller for one
// race. The race takes everything that is there at once, so events that
// arrive together are handled in one turn.
type inbox struct {
	mu     sync.Mutex
	events []race.Event
	wake   chan struct{} // capacity 1: "something is waiting"
}

func newInbox() *inbox { return &inbox{wake: make(chan struct{}, 1)} }

func (b *inbox) push(ev race.Event) {
	b.mu.Lock()
	b.events = append(b.events, ev)
	b.mu.Unlock()
	select {
	case b.wake <- struct{}{}:
	default:
	}
}

// takeInto appends every waiting event to dst.
func (b *inbox) takeInto(dst []race.Event) []race.Event {
	b.mu.Lock()
	dst = append(dst, b.events...)
	b.events = b.events[:0]
	b.mu.Unlock()
	return dst
}
