package main

import "sync"

// notifier fires completion callbacks and jobs on one library goroutine,
// in the order handles finished: never on a caller's stack, never on the
// shared poller (whose every race would wait for a slow callback), and
// without a goroutine made per handle (a storm of cancels then costs one
// hand-off per batch, not one goroutine each).
var notifier struct {
	sync.Mutex
	queue   []*conn
	running bool
}

// queueNotify hands c to the notifier, starting it if it is idle.
func queueNotify(c *conn) {
	notifier.Lock()
	notifier.queue = append(notifier.queue, c)
	start := !notifier.running
	notifier.running = true
	notifier.Unlock()
	if start {
		go drainNotify()
	}
}

func drainNotify() {
	var batch []*conn
	for {
		notifier.Lock()
		batch, notifier.queue = notifier.queue, batch[:0]
		if len(batch) == 0 {
			notifier.running = false
			notifier.Unlock()
			return
		}
		notifier.Unlock()
		for i, c := range batch {
			c.notify()
			batch[i] = nil
		}
	}
}
