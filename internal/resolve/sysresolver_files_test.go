package resolve

import (
	"os"
	"path/filepath"
	"slices"
	"testing"

	"github.com/hev2/hev2/internal/race"
)

func TestNSSHostsFilesFirst(t *testing.T) {
	cases := map[string]bool{
		"hosts: files dns\n": true,
		"hosts:\tfiles mdns4_minimal [NOTFOUND=return] dns\n": true,
		"# hosts: dns\nhosts: files\n":                        true,
		"hosts: files [NOTFOUND=return] dns\n":                true,
		"hosts: files [SUCCESS=continue] dns\n":               false,
		"hosts: files [ success = continue ] dns\n":           false,
		"hosts: dns files\n":                                  false,
		"hosts: myhostname files\n":                           false,
		"hosts:\n":                                            false,
		"passwd: files\n":                                     false, // no hosts line: DNS first
		"hosts: files dns # comment\n":                        true,
	}
	for conf, want := range cases {
		if got := nssHostsFilesFirst([]byte(conf)); got != want {
			t.Errorf("%q: files first = %v, want %v", conf, got, want)
		}
	}
}

func TestSystemFilesAnswersWhatTheFileLists(t *testing.T) {
	dir := t.TempDir()
	nss, hosts := filepath.Join(dir, "nsswitch.conf"), filepath.Join(dir, "hosts")
	write := func(path, content string) {
		t.Helper()
		if err := os.WriteFile(path, []byte(content), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	write(nss, "hosts: files dns\n")
	write(hosts, "198.18.0.5 svc.test Alias.Test\n2001:db8::5 svc.test\n198.18.0.6 svc.test\n"+
		"fe80::1%lo zoned.test\n198.18.0.7 zoned.test\n::ffff:198.18.0.8 mapped.test\n198.18.0.9 v4only.test\n")
	f := &systemFiles{nsswitch: nss, hosts: hostsFile{path: hosts, exact: true}}
	check := func(name string, fam race.Family, want ...string) {
		t.Helper()
		addrs, ok := f.lookup(name, fam)
		var got []string
		for _, a := range addrs {
			got = append(got, a.String())
		}
		if ok != (len(want) > 0) || !slices.Equal(got, want) {
			t.Errorf("%s %v: got %v (answered %v), want %v", name, fam, got, ok, want)
		}
	}
	check("svc.test", race.IPv4, "198.18.0.5", "198.18.0.6")
	check("SVC.test", race.IPv6, "2001:db8::5")
	check("alias.test", race.IPv4, "198.18.0.5")
	check("svc.test.", race.IPv4)   // a final dot: getaddrinfo decides
	check("v4only.test", race.IPv6) // no entry of the family: getaddrinfo (DNS) decides
	check("zoned.test", race.IPv4)  // a zone on the name: getaddrinfo decides
	check("mapped.test", race.IPv4) // an IPv4-mapped entry: getaddrinfo decides
	check("missing.test", race.IPv4)

	// An edit is seen by the next lookup, even one second later or less.
	write(hosts, "198.18.0.10 svc.test\n")
	check("svc.test", race.IPv4, "198.18.0.10")
	// DNS first: the file is not consulted.
	write(nss, "hosts: dns files\n")
	check("svc.test", race.IPv4)
	os.Remove(nss)
	check("svc.test", race.IPv4)
}
