package netio

import (
	"net/netip"
	"sync"

	"github.com/hev2/hev2/internal/netstate"
)

// kernelSources keeps kernelSource's answers for every race of the process,
// for as long as the kernel announces no change of addresses or routes
// (netstate.Changes): RFC 6724 sorting asks it for each destination of a
// name, and each question costs four system calls (a UDP socket, connect,
// getsockname, close), more than the connect it sorts for. Where changes
// are not watched (no rtnetlink), nothing is kept and each race asks the
// kernel. An answer may lag a change by the time the watcher takes to read
// its announcement; it only orders the attempts (the kernel picks the
// source of each connect itself), so a late one costs, at worst, one race
// in a less preferred order.
var kernelSources = &sourceMemo{changes: netstate.Changes, ask: kernelSource}

// sourceMemoMax bounds the memo: a client that reaches many destinations
// (a crawler) starts it afresh when it is full.
const sourceMemoMax = 1024

type sourceMemo struct {
	changes func() (count uint64, watched bool)
	ask     func(dst netip.Addr) (src netip.Addr, ok bool)

	mu      sync.Mutex
	answers map[netip.Addr]memoAnswer
}

type memoAnswer struct {
	changes uint64 // the count when the kernel was asked
	src     netip.Addr
	ok      bool
}

// source is ask(dst), from the memo when the network has not changed since
// the kernel was asked.
func (m *sourceMemo) source(dst netip.Addr) (netip.Addr, bool) {
	changes, watched := m.changes()
	if !watched {
		return m.ask(dst)
	}
	m.mu.Lock()
	a, found := m.answers[dst]
	m.mu.Unlock()
	if found && a.changes == changes {
		return a.src, a.ok
	}
	src, ok := m.ask(dst)
	m.mu.Lock()
	if m.answers == nil || len(m.answers) >= sourceMemoMax {
		m.answers = make(map[netip.Addr]memoAnswer)
	}
	m.answers[dst] = memoAnswer{changes, src, ok}
	m.mu.Unlock()
	return src, ok
}
