package history

import (
	"net/netip"
	"sync"
	"time"

	"github.com/hev2/hev2/internal/race"
)

// Defaults of Config.
const (
	DefaultCapacity   = 1024
	DefaultLifetime   = 10 * time.Minute
	DefaultMinSamples = 3
	DefaultMinDelay   = 100 * time.Millisecond
	DefaultMaxDelay   = 2 * time.Second
	// HardMinDelay is the floor of any attempt delay history derives.
	HardMinDelay = race.MinConnectionAttemptDelay
	// RecordsPerFamily is how many recent outcomes a key keeps per family.
	RecordsPerFamily = 8
)

// Config bounds a Store. Zero fields take the defaults above.
type Config struct {
	Capacity int // keys kept (least recently used evicted)
	// Now is the store's clock (tests inject a fake one); nil: time.Now.
	Now func() time.Time
}

// Store is the per-process history. All methods are safe for concurrent use.
type Store struct {
	mu      sync.Mutex
	cap     int
	now     func() time.Time
	epoch   time.Time
	entries map[key]*entry
	// head is the sentinel of the LRU list: head.next is the most recently
	// used entry, head.prev the least.
	head entry

	stats Stats
}

type key struct {
	network uint64
	host    string
}

// entry is what one (network, host) remembers.
type entry struct {
	key        key
	prev, next *entry
	fam        [2]familyState // IPv6, IPv4 (race.FamilyIndex)
}

// familyState is one family's recent outcomes and RTT under a key.
type familyState struct {
	recs    [RecordsPerFamily]record // a ring; n counts how many are valid
	n, next uint8
	lastOK  int64 // when it last connected (store clock, ns); 0: never
	srtt    time.Duration
	samples uint32
}

type record struct {
	at      int64 // store clock, ns since epoch (never 0: see clock)
	outcome race.PathOutcome
}

// Stats are the store's counters.
type Stats struct {
	Entries    uint64 // keys held now
	Capacity   uint64
	EntryBytes uint64 // bytes per key, the host name aside
	Recorded   uint64 // attempt outcomes recorded
	Evicted    uint64 // keys evicted by the LRU bound
	Reordered  uint64 // races whose family order history changed
	DelaySet   uint64 // races whose attempt delay came from RTT
	Cleared    uint64 // Clear calls
}

// New returns an empty store.
func New(cfg Config) *Store {
	s := &Store{cap: cfg.Capacity, now: cfg.Now, entries: map[key]*entry{}}
	if s.cap <= 0 {
		s.cap = DefaultCapacity
	}
	if s.now == nil {
		s.now = time.Now
	}
	s.epoch = s.now()
	s.head.next, s.head.prev = &s.head, &s.head
	return s
}

// clock is the store's time in ns since its epoch, never 0 (0 is "never").
func (s *Store) clock() int64 {
	return int64(s.now().Sub(s.epoch)) + 1
}

// RecordAttempt is race.HistorySink: it records one attempt's outcome for
// host on network. Network 0 (unknown) records nothing.
func (s *Store) RecordAttempt(network uint64, host string, addr netip.Addr, o race.PathOutcome, rtt time.Duration) {
	if network == 0 {
		return
	}
	now := s.clock()
	s.mu.Lock()
	e := s.lookup(key{network, host}, true)
	f := &e.fam[race.FamilyIndex(race.FamilyOf(addr))]
	f.recs[f.next] = record{at: now, outcome: o}
	f.next = (f.next + 1) % RecordsPerFamily
	if f.n < RecordsPerFamily {
		f.n++
	}
	if o == race.PathConnected {
		f.lastOK = now
		f.addRTT(rtt)
	}
	s.stats.Recorded++
	s.mu.Unlock()
}

// addRTT folds one sample into the smoothed RTT (RFC 6298: alpha 1/8).
func (f *familyState) addRTT(rtt time.Duration) {
	if f.samples == 0 {
		f.srtt = rtt
	} else {
		f.srtt += (rtt - f.srtt) / 8
	}
	if f.samples < 1<<31 {
		f.samples++
	}
}

// lookup finds key k (making it if create) and marks it most recently
// used. Called with s.mu held; nil if absent and !create.
func (s *Store) lookup(k key, create bool) *entry {
	e := s.entries[k]
	if e == nil {
		if !create {
			return nil
		}
		if len(s.entries) >= s.cap {
			s.evict(s.head.prev)
			s.stats.Evicted++
		}
		e = &entry{key: k}
		s.entries[k] = e
	} else {
		e.prev.next, e.next.prev = e.next, e.prev
	}
	e.prev, e.next = &s.head, s.head.next
	s.head.next.prev = e
	s.head.next = e
	return e
}

func (s *Store) evict(e *entry) {
	e.prev.next, e.next.prev = e.next, e.prev
	delete(s.entries, e.key)
}

// Clear forgets everything, on every network.
func (s *Store) Clear() {
	s.mu.Lock()
	clear(s.entries)
	s.head.next, s.head.prev = &s.head, &s.head
	s.stats.Cleared++
	s.mu.Unlock()
}

// Stats returns the counters.
func (s *Store) Stats() Stats {
	s.mu.Lock()
	st := s.stats
	st.Entries = uint64(len(s.entries))
	s.mu.Unlock()
	st.Capacity = uint64(s.cap)
	st.EntryBytes = EntryBytes
	return st
}

// EntryBytes is the memory one key costs, its host name aside: the entry
// (unsafe.Sizeof, rounded up to its allocation size class) plus the map's
// slot for it. TestEntryBytes measures it on the heap.
const EntryBytes = 384 + 48
