package resolve

import (
	"bufio"
	"bytes"
	"net/netip"
	"os"
	"strings"
	"sync"
	"time"

	"github.com/hev2/hev2/core/internal/race"
)

// hostsFile answers names from a hosts(5) file, re-reading it when it
// changes (checked at most once a second, like Go's net package).
type hostsFile struct {
	path string

	mu      sync.Mutex
	checked time.Time
	modTime time.Time
	size    int64
	names   map[string][]netip.Addr // lower-case name without final dot
}

const hostsRecheck = time.Second

// lookup returns the addresses of family listed for name, in file order.
func (h *hostsFile) lookup(name string, family race.Family) []netip.Addr {
	h.mu.Lock()
	defer h.mu.Unlock()
	if now := time.Now(); now.Sub(h.checked) >= hostsRecheck || h.checked.IsZero() {
		h.checked = now
		h.reload()
	}
	var out []netip.Addr
	for _, a := range h.names[strings.ToLower(strings.TrimSuffix(name, "."))] {
		if race.FamilyOf(a) == family {
			out = append(out, a)
		}
	}
	return out
}

// reload re-reads the file if its size or modification time changed; an
// unreadable or missing file has no names.
func (h *hostsFile) reload() {
	st, err := os.Stat(h.path)
	if err != nil {
		h.names, h.modTime, h.size = nil, time.Time{}, 0
		return
	}
	if h.names != nil && st.ModTime().Equal(h.modTime) && st.Size() == h.size {
		return
	}
	data, err := os.ReadFile(h.path)
	if err != nil {
		h.names = nil
		return
	}
	h.names, h.modTime, h.size = parseHosts(data), st.ModTime(), st.Size()
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
