package resolve

import (
	"bufio"
	"bytes"
	"strings"
)

// nssHosts is what hev2 needs to know of nsswitch.conf's hosts line: the
// two cases it can model exactly, and nothing else.
type nssHosts struct {
	// filesFirst: "files" comes first and nothing changes what a name
	// found there does, so the hosts file's answer is the whole answer.
	filesFirst bool
	// dnsAfterFiles: files first, then DNS as the last source, with at
	// most nss-mdns's minimal modules between them. A name the hosts
	// file does not list then goes to DNS, and DNS's answer is final:
	// getaddrinfo and the built-in DNS client give the same answer.
	dnsAfterFiles bool
	// mdnsMinimal: an mdns*_minimal module stands between files and DNS.
	// It answers names under .local itself and hands every other name on
	// (UNAVAIL), so only names outside .local go to DNS.
	mdnsMinimal bool
}

// nssSource is one service of a hosts line and the action that follows it
// ("[NOTFOUND=return]"), upper-cased, without brackets.
type nssSource struct {
	name, action string
}

// parseNSSHosts reads an nsswitch.conf. A file without a hosts line means
// the C library's default, "dns [!UNAVAIL=return] files": neither case.
func parseNSSHosts(data []byte) nssHosts {
	sources, ok := nssHostsSources(data)
	if !ok || len(sources) == 0 || sources[0].name != "files" || strings.Contains(sources[0].action, "SUCCESS") {
		return nssHosts{}
	}
	h := nssHosts{filesFirst: true}
	rest := sources[1:]
	for len(rest) > 1 && isMDNSMinimal(rest[0].name) {
		h.mdnsMinimal = true
		rest = rest[1:]
	}
	h.dnsAfterFiles = len(rest) == 1 && rest[0].name == "dns"
	return h
}

// nssHostsSources splits the first hosts line into its sources; false when
// there is no hosts line.
func nssHostsSources(data []byte) ([]nssSource, bool) {
	sc := bufio.NewScanner(bytes.NewReader(data))
	for sc.Scan() {
		line := sc.Text()
		if i := strings.IndexByte(line, '#'); i >= 0 {
			line = line[:i]
		}
		db, list, ok := strings.Cut(line, ":")
		if !ok || strings.TrimSpace(db) != "hosts" {
			continue
		}
		var sources []nssSource
		for list = strings.TrimSpace(list); list != ""; list = strings.TrimSpace(list) {
			if list[0] == '[' {
				action, after, _ := strings.Cut(list[1:], "]")
				if len(sources) > 0 {
					sources[len(sources)-1].action = strings.ToUpper(strings.Join(strings.Fields(action), " "))
				}
				list = after
				continue
			}
			end := strings.IndexAny(list, " \t[")
			if end < 0 {
				end = len(list)
			}
			sources = append(sources, nssSource{name: list[:end]})
			list = list[end:]
		}
		return sources, true
	}
	return nil, false
}

// isMDNSMinimal names nss-mdns's modules limited to .local names.
func isMDNSMinimal(name string) bool {
	switch name {
	case "mdns_minimal", "mdns4_minimal", "mdns6_minimal":
		return true
	}
	return false
}

// nssHostsFilesFirst reports whether an nsswitch.conf's hosts line names
// "files" first with no action changing what a found name does.
func nssHostsFilesFirst(data []byte) bool { return parseNSSHosts(data).filesFirst }

// goesToDNS reports whether a name that the hosts file does not answer is
// answered by DNS alone under these rules.
func (h nssHosts) goesToDNS(name string) bool {
	if !h.dnsAfterFiles {
		return false
	}
	if h.mdnsMinimal {
		lower := strings.ToLower(strings.TrimSuffix(name, "."))
		if lower == "local" || strings.HasSuffix(lower, ".local") {
			return false
		}
	}
	return true
}
