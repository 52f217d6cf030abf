package resolve

import (
	"fmt"
	"net/netip"
	"os"
	"strings"
	"sync"
	"sync/atomic"
	"time"
)

// DNSConfig configures the built-in resolver. Zero fields take their value
// from resolv.conf, then from glibc's defaults.
type DNSConfig struct {
	// Nameservers are "ip" (port 53) or "ip:port" ("[ipv6]:port"); they
	// replace resolv.conf's name servers.
	Nameservers []string
	// ResolvConf is the resolv.conf(5) to read ("": /etc/resolv.conf).
	ResolvConf string
	// HostsFile is the hosts(5) file consulted first ("": /etc/hosts);
	// NoHostsFile skips it.
	HostsFile   string
	NoHostsFile bool
	// Search replaces resolv.conf's search list; Ndots its ndots (0: keep).
	Search []string
	Ndots  int
	// Timeout is the wait for one server's answer to one query
	// (resolv.conf's timeout, default 5 s); Attempts the number of rounds
	// over the servers (default 2).
	Timeout  time.Duration
	Attempts int
	// UseTCP sends every query over TCP (resolv.conf: options use-vc).
	UseTCP bool
	// NoAddrConfig asks DNS for every family, even one this host has no
	// usable address for (by default such a family is answered from the
	// hosts file only, see AddrConfigFamilies).
	NoAddrConfig bool
}

// dnsSettings is resolv.conf with the caller's DNSConfig applied: what one
// lookup uses from start to end.
type dnsSettings struct {
	servers  []netip.AddrPort
	search   []string
	ndots    int
	timeout  time.Duration
	attempts int
	rotate   bool
	useTCP   bool
	// unmodelled: resolv.conf's options that would make getaddrinfo
	// answer otherwise (resolvConf.unmodelled).
	unmodelled []string
}

// confFile is the resolv.conf behind a resolver's settings, re-read when
// its size or modification time changes.
type confFile struct {
	path     string
	settings atomic.Pointer[dnsSettings]

	mu      sync.Mutex
	checked time.Time
	modTime time.Time
	size    int64
}

// NewDNSResolver reads the configuration; it fails when a file or value is
// malformed or when no name server is known.
func NewDNSResolver(cfg DNSConfig) (*DNSResolver, error) {
	if cfg.Ndots < 0 || cfg.Timeout < 0 || cfg.Attempts < 0 {
		return nil, fmt.Errorf("hev2: negative ndots, timeout or attempts")
	}
	for _, s := range cfg.Nameservers {
		if _, err := parseNameserver(s); err != nil {
			return nil, err
		}
	}
	r := &DNSResolver{cfg: cfg, addrConfig: !cfg.NoAddrConfig}
	r.conf.path = cfg.ResolvConf
	if r.conf.path == "" {
		r.conf.path = "/etc/resolv.conf"
	}
	st, _ := os.Stat(r.conf.path)
	set, err := r.load()
	if err != nil {
		return nil, err
	}
	r.conf.settings.Store(set)
	r.conf.checked = time.Now()
	if st != nil {
		r.conf.modTime, r.conf.size = st.ModTime(), st.Size()
	}
	if !cfg.NoHostsFile {
		hosts := cfg.HostsFile
		if hosts == "" {
			hosts = "/etc/hosts"
		}
		r.hosts = &hostsFile{path: hosts}
	}
	return r, nil
}

// load reads resolv.conf and applies the caller's configuration over it.
func (r *DNSResolver) load() (*dnsSettings, error) {
	cfg := &r.cfg
	rc, err := readResolvConf(r.conf.path)
	if err != nil {
		return nil, err
	}
	if len(cfg.Nameservers) > 0 {
		rc.nameservers = nil
		for _, s := range cfg.Nameservers {
			ap, _ := parseNameserver(s) // checked by NewDNSResolver
			rc.nameservers = append(rc.nameservers, ap)
		}
	}
	if len(rc.nameservers) == 0 {
		return nil, fmt.Errorf("hev2: no name server: none given and none in %s", r.conf.path)
	}
	if cfg.Search != nil {
		rc.search = cfg.Search
	}
	if cfg.Ndots > 0 {
		rc.ndots = min(cfg.Ndots, maxNdots)
	}
	if cfg.Timeout > 0 {
		rc.timeout = cfg.Timeout
	}
	if cfg.Attempts > 0 {
		rc.attempts = cfg.Attempts
	}
	set := &dnsSettings{
		servers: rc.nameservers, ndots: rc.ndots, timeout: rc.timeout,
		attempts: rc.attempts, rotate: rc.rotate, useTCP: rc.useTCP || cfg.UseTCP,
		unmodelled: rc.unmodelled,
	}
	for _, s := range rc.search {
		if s = strings.Trim(s, "."); s != "" {
			set.search = append(set.search, s)
		}
	}
	return set, nil
}

// settings returns the current settings, re-reading resolv.conf first if
// it changed. A file that turns bad keeps the last good settings: a running
// process should not lose its resolver to a half-written file.
func (r *DNSResolver) settings() *dnsSettings {
	c := &r.conf
	c.mu.Lock()
	defer c.mu.Unlock()
	if now := time.Now(); now.Sub(c.checked) >= confRecheck {
		c.checked = now
		if st, err := os.Stat(c.path); err == nil && (!st.ModTime().Equal(c.modTime) || st.Size() != c.size) {
			if set, err := r.load(); err == nil {
				c.settings.Store(set)
				c.modTime, c.size = st.ModTime(), st.Size()
			}
		}
	}
	return c.settings.Load()
}

// confRecheck is how often resolv.conf is checked for changes.
const confRecheck = time.Second

func parseNameserver(s string) (netip.AddrPort, error) {
	if addr, err := netip.ParseAddr(s); err == nil {
		return netip.AddrPortFrom(addr, 53), nil
	}
	ap, err := netip.ParseAddrPort(s)
	if err != nil || ap.Port() == 0 {
		return netip.AddrPort{}, fmt.Errorf("hev2: name server %q is not \"ip\" or \"ip:port\"", s)
	}
	return ap, nil
}

// Nameservers returns the servers the resolver asks now, in order.
func (r *DNSResolver) Nameservers() []netip.AddrPort {
	return append([]netip.AddrPort(nil), r.settings().servers...)
}
