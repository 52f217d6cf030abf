package resolve

import (
	"context"
	"net/netip"
	"os"
	"sync"
	"sync/atomic"
	"time"

	"github.com/hev2/hev2/internal/race"
)

// A getaddrinfo call that nobody waits for any more still holds its thread
// until the C library gives up (its DNS timeout, 5-30 s), so a burst of
// lookups of silent names, each canceled, would hold a thread per name. The
// system resolver therefore hands a lookup over to the built-in DNS client
// once DefaultHandOverAt calls are inside the C library (abandoned ones
// included), when getaddrinfo's answer would come from DNS anyway: the
// hosts line of nsswitch.conf is files, then DNS (see nssHosts), and the
// hosts file does not list the name. The client reads the same resolv.conf
// (servers, search list, ndots, timeout, attempts, rotate, use-vc), holds
// no thread and really cancels: threads stay near DefaultHandOverAt however
// many lookups are abandoned. A lookup it cannot prove gets getaddrinfo's
// answer (another source in nsswitch.conf, a .local name behind nss-mdns,
// a resolv.conf option that changes answers such as no-aaaa, or the
// RES_OPTIONS, LOCALDOMAIN or HOSTALIASES variables glibc reads) still
// goes to getaddrinfo, up to the hard cap (DefaultMaxThreads).
const DefaultHandOverAt = 128

var handOverAt atomic.Int64

func init() { handOverAt.Store(DefaultHandOverAt) }

// HandOverAt reports the getaddrinfo calls in flight from which lookups of
// DNS names go to the built-in client.
func HandOverAt() int { return int(handOverAt.Load()) }

// SetHandOverAt changes that threshold (n >= 1); for tests and hosts that
// know better.
func SetHandOverAt(n int) {
	if n >= 1 {
		handOverAt.Store(int64(n))
	}
}

// handOverClient is the process's built-in client for handed-over lookups
// (and the system resolver's HTTPS lookups), made on first need from
// /etc/resolv.conf and /etc/hosts, the files getaddrinfo reads. If it
// cannot be made (no name server in resolv.conf: glibc would then ask
// 127.0.0.1, which hev2 does not guess), nothing is handed over, and the
// next try comes a second later.
var handOverClient struct {
	mu      sync.Mutex
	dns     *DNSResolver
	err     error // why the last try made none
	retryAt time.Time
}

func handOverResolver() *DNSResolver {
	dns, _ := handOverResolverErr()
	return dns
}

// handOverResolverErr is handOverResolver with the reason it has no client.
func handOverResolverErr() (*DNSResolver, error) {
	handOverClient.mu.Lock()
	defer handOverClient.mu.Unlock()
	if handOverClient.dns != nil {
		return handOverClient.dns, nil
	}
	now := time.Now()
	if now.Before(handOverClient.retryAt) {
		return nil, handOverClient.err
	}
	// The system resolver has applied its AI_ADDRCONFIG policy already.
	dns, err := NewDNSResolver(DNSConfig{NoAddrConfig: true})
	if err != nil {
		handOverClient.retryAt, handOverClient.err = now.Add(time.Second), err
		return nil, err
	}
	handOverClient.dns, handOverClient.err = dns, nil
	return dns, nil
}

// handOver returns the client to ask host of instead of getaddrinfo, or
// nil. Cheap below the threshold: one atomic load.
func (r *SystemResolver) handOver(host string) *DNSResolver {
	if busyCalls.Load() < handOverAt.Load() || r.AlwaysGetaddrinfo || !systemHostsFiles.goesToDNS(host) {
		return nil
	}
	dns := handOverResolver()
	if dns == nil || len(dns.settings().unmodelled) > 0 || glibcEnvSet() {
		return nil
	}
	return dns
}

// glibcEnvSet reports whether the environment changes how glibc resolves
// (resolv.conf(5): RES_OPTIONS, LOCALDOMAIN; hostname(7): HOSTALIASES).
func glibcEnvSet() bool {
	for _, name := range [...]string{"RES_OPTIONS", "LOCALDOMAIN", "HOSTALIASES"} {
		if _, set := os.LookupEnv(name); set {
			return true
		}
	}
	return false
}

// lookupHandedOver asks dns for host without blocking the caller: done is
// called once from a goroutine of its own, unless cancel comes first.
func (r *SystemResolver) lookupHandedOver(dns *DNSResolver, host string, family race.Family, done func([]netip.Addr, error)) (cancel func()) {
	r.stats.handedOver.Add(1)
	ctx, stop := context.WithCancel(context.Background())
	var canceled atomic.Bool
	go func() {
		addrs, err := dns.LookupFamily(ctx, host, family)
		if !canceled.Load() {
			done(addrs, err)
		}
	}()
	return func() {
		canceled.Store(true)
		stop()
	}
}
