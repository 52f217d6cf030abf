package resolve

import (
	"net/netip"
	"os"
	"strings"
	"sync"

	"github.com/hev2/hev2/internal/race"
)

// systemFiles answers, without a getaddrinfo call, what getaddrinfo would
// answer from the hosts file alone: when nsswitch.conf's hosts line asks
// "files" first and stops at a name found there (the default action), a
// name the hosts file lists with addresses of the family asked gets exactly
// those addresses, and no other source is consulted.
//
// This takes the pool thread, its two hand-offs and the C library's
// per-call reading of three files off the most common name lookup on
// developer machines and in containers (localhost, service names written
// into /etc/hosts). Both files are stat'ed at every lookup and re-read when
// they change, so an edit is seen by the next lookup, as the C library
// would see it. Anything this does not model exactly -- another first
// source, a [SUCCESS=...] action, a name with a final dot, an entry with a
// zone or an IPv4-mapped address, a family the file has no entry of -- goes
// to getaddrinfo as before. Within a family the answer is in file order
// (getaddrinfo would sort it by RFC 3484; hev2 sorts by RFC 6724 after).
type systemFiles struct {
	nsswitch string

	mu       sync.Mutex
	nssStamp fileStamp
	nssRead  bool
	nss      nssHosts
	hosts    hostsFile
}

var systemHostsFiles = &systemFiles{
	nsswitch: "/etc/nsswitch.conf",
	hosts:    hostsFile{path: "/etc/hosts", exact: true},
}

// lookup returns the hosts file's answer and true, or false when
// getaddrinfo must be asked.
func (f *systemFiles) lookup(name string, family race.Family) ([]netip.Addr, bool) {
	if name == "" || name[len(name)-1] == '.' {
		return nil, false
	}
	f.mu.Lock()
	defer f.mu.Unlock()
	if !f.filesFirstLocked() {
		return nil, false
	}
	f.hosts.mu.Lock()
	defer f.hosts.mu.Unlock()
	f.hosts.refreshLocked()
	var out []netip.Addr
	for _, a := range f.hosts.names[strings.ToLower(name)] {
		if a.Zone() != "" || a.Is4In6() {
			// The C library maps or scopes these in ways not
			// modelled here.
			return nil, false
		}
		if race.FamilyOf(a) == family {
			out = append(out, a)
		}
	}
	return out, len(out) > 0
}

// lists reports whether the hosts file getaddrinfo reads has an entry for
// name, whatever nsswitch.conf's order: the host has set the name's
// addresses there.
func (f *systemFiles) lists(name string) bool { return f.hosts.lists(name) }

func (f *systemFiles) filesFirstLocked() bool { return f.nssLocked().filesFirst }

// nssLocked re-reads nsswitch.conf if it changed. A missing file means the
// C library's default, "dns [!UNAVAIL=return] files": DNS first.
func (f *systemFiles) nssLocked() nssHosts {
	stamp, err := stampOf(f.nsswitch)
	if err != nil {
		f.nssRead, f.nss = false, nssHosts{}
		return f.nss
	}
	if f.nssRead && stamp == f.nssStamp {
		return f.nss
	}
	data, err := os.ReadFile(f.nsswitch)
	if err != nil {
		f.nssRead, f.nss = false, nssHosts{}
		return f.nss
	}
	f.nssStamp, f.nssRead, f.nss = stamp, true, parseNSSHosts(data)
	return f.nss
}

// goesToDNS reports whether getaddrinfo would answer name from DNS alone,
// with the answer the built-in DNS client gives too: the hosts line is
// files then DNS (see nssHosts), and the hosts file has no entry for it.
func (f *systemFiles) goesToDNS(name string) bool {
	if name == "" || name[len(name)-1] == '.' {
		return false
	}
	f.mu.Lock()
	defer f.mu.Unlock()
	if !f.nssLocked().goesToDNS(name) {
		return false
	}
	f.hosts.mu.Lock()
	defer f.hosts.mu.Unlock()
	f.hosts.refreshLocked()
	_, listed := f.hosts.names[strings.ToLower(name)]
	return !listed
}

// InHostsFile reports whether the system resolver answers name from the
// hosts file (nsswitch.conf asks "files" first and the file lists it): a
// name that never reaches DNS, so a race to it asks no HTTPS query.
func InHostsFile(name string) bool {
	for _, f := range [...]race.Family{race.IPv6, race.IPv4} {
		if _, ok := systemHostsFiles.lookup(name, f); ok {
			return true
		}
	}
	return false
}
