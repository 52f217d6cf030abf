// Package netstate knows what network this host is attached to: which
// address families it has, whether it has routes beyond itself, and an
// identity of the network that stays the same while the host stays on it.
//
// It reads the kernel's state once (rtnetlink dumps) and again only when the
// kernel announces a change of addresses or routes, so that asking costs an
// atomic load: the resolvers' AI_ADDRCONFIG policy, NAT64 prefix discovery
// and per-network history all ask on every connect.
//
// The identity is built from the default routers (gateway and interface)
// and the on-link prefixes, never from the host's own addresses: IPv6
// temporary addresses rotate while the host stays on one network, and two
// networks that hand out the same private prefix still differ by their
// routers' addresses or interfaces only rarely enough to accept.
package netstate
