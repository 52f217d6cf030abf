package resolve

import (
	"bufio"
	"bytes"
	"net/netip"
	"os"
	"strings"
	"sync"
	"time"

	"github.com/hev2/hev2/internal/race"
)

// hostsFile answers names from a hosts(5) file, re-reading it when it
// changes: checked at most once a second (like Go's net package), or at
// every lookup when exact is set (as the C library, which reads the file at
// every call, would see it).
type hostsFile struct {
	path  string
	exact bool

	mu      sync.Mutex
	checked time.Time
	stamp   fileStamp
	names   map[string][]netip.Addr // lower-case name without final dot
}

const hostsRecheck = time.Second

// lookup returns the addresses of family listed for name, in file order.
func (h *hostsFile) lookup(name string, family race.Family) []netip.Addr {
	h.mu.Lock()
	defer h.mu.Unlock()
	h.refreshLocked()
	var out []netip.Addr
	for _, a := range h.names[strings.ToLower(strings.TrimSuffix(name, "."))] {
		if race.FamilyOf(a) == family {
			out = append(out, a)
		}
	}
	return out
}

// lists reports whether the file has an entry for name, of any family.
func (h *hostsFile) lists(name string) bool {
	h.mu.Lock()
	defer h.mu.Unlock()
	h.refreshLocked()
	_, listed := h.names[strings.ToLower(strings.TrimSuffix(name, "."))]
	return listed
}

func (h *hostsFile) refreshLocked() {
	if !h.exact {
		now := time.Now()
		if !h.checked.IsZero() && now.Sub(h.checked) < hostsRecheck {
			return
		}
		h.checked = now
	}
	h.reload()
}

// reload re-reads the file if it is another file or changed (see
// fileStamp); an unreadable or missing file has no names.
func (h *hostsFile) reload() {
	stamp, err := stampOf(h.path)
	if err != nil {
		h.names, h.stamp = nil, fileStamp{}
		return
	}
	if h.names != nil && stamp == h.stamp {
		return
	}
	data, err := os.ReadFile(h.path)
	if err != nil {
		h.names, h.stamp = nil, fileStamp{}
		return
	}
	h.names, h.stamp = parseHosts(data), stamp
}

// parseHosts reads "address name [alias...]" lines; lines whose address
// does not parse are skipped, as the C library skips them.
func parseHosts(data []byte) map[string][]netip.Addr {
	names := make(map[string][]netip.Addr)
	sc := bufio.NewScanner(bytes.NewReader(data))
	for sc.Scan() {
		line := sc.Text()
		if i := strings.IndexByte(line, '#'); i >= 0 {
			line = line[:i]
		}
		fields := strings.Fields(line)
		if len(fields) < 2 {
			continue
		}
		addr, err := netip.ParseAddr(fields[0])
		if err != nil {
			continue
		}
		for _, name := range fields[1:] {
			key := strings.ToLower(strings.TrimSuffix(name, "."))
			names[key] = appendUnique(names[key], addr)
		}
	}
	return names
}

func appendUnique(addrs []netip.Addr, a netip.Addr) []netip.Addr {
	for _, b := range addrs {
		if a == b {
			return addrs
		}
	}
	return append(addrs, a)
}
