// Package history remembers, per network, what connecting to each host name
// did, so that a process stops paying the same blackhole on every connect
// (RFC 8305 §4 allows it; Happy Eyeballs v3 asks that it be bounded).
//
// The store is keyed by (network identity, host name): a network is what
// netstate.Snapshot.Network names (default routers and on-link prefixes),
// so nothing learned on one network is ever read on another, and a new
// network starts from RFC 8305's defaults at once. Per key and family it
// keeps the last RecordsPerFamily attempt outcomes (connected, refused,
// timed out, lost: pending for at least the attempt delay and then closed
// because the other family won) and the smoothed connect RTT (RFC 6298's
// SRTT, alpha 1/8).
//
// Two decisions come out of it (Decide), both deterministic functions of
// the records and the clock, so they are testable with a fake clock:
//
//   - Family order: a family with a failure (refused, timed out, lost) in
//     the last Lifetime and no success since, while the other family
//     connected in that window, is tried second. When the failures age past
//     Lifetime, the next connect tries the RFC 6724 order again: a path that
//     is still broken is paid for once more (one attempt delay) and demoted
//     again, a healed one wins. Bound: on one network, per host name, at
//     most one connect per Lifetime pays a still-broken path again (plus the
//     connects already running when that connect's outcome arrives), and a
//     healed path is tried again at most Lifetime after its last failure.
//   - Connection Attempt Delay: 2 x SRTT of the family tried first, clamped
//     to [MinDelay, MaxDelay] (RFC 8305 §5's recommended [100 ms, 2 s] by
//     default; 10 ms is the hard floor), once that family has MinSamples
//     connects on record.
//
// The store is bounded: at most Capacity keys, least recently used evicted,
// EntryBytes bytes each plus the host name's length.
package history
