package resolve

import (
	"os"
	"path/filepath"
	"testing"
)

func TestNSSHostsGoesToDNS(t *testing.T) {
	type want struct{ plain, local bool } // "svc.example" and "printer.local"
	cases := map[string]want{
		"hosts: files dns\n": {true, true},
		"hosts:\tfiles mdns4_minimal [NOTFOUND=return] dns\n":                                   {true, false},
		"hosts: files mdns_minimal [NOTFOUND=return] mdns6_minimal [ NOTFOUND = return ] dns\n": {true, false},
		"hosts: files [NOTFOUND=return] dns\n":                                                  {true, true},
		"hosts: files dns [!UNAVAIL=return]\n":                                                  {true, true},
		"hosts: files\n":                                                                        {false, false}, // no DNS at all
		"hosts: files dns mdns4\n":                                                              {false, false}, // DNS's NOTFOUND goes on to mdns4
		"hosts: files myhostname dns\n":                                                         {false, false}, // myhostname answers names of its own
		"hosts: files resolve [!UNAVAIL=return] dns\n":                                          {false, false},
		"hosts: files mdns4 dns\n":                                                              {false, false}, // full mdns answers any name
		"hosts: files [SUCCESS=continue] dns\n":                                                 {false, false},
		"hosts: dns files\n":                                                                    {false, false},
		"hosts: dns\n":                                                                          {false, false},
		"passwd: files\n":                                                                       {false, false}, // the default: DNS first, then files
	}
	for conf, w := range cases {
		h := parseNSSHosts([]byte(conf))
		if got := h.goesToDNS("svc.example"); got != w.plain {
			t.Errorf("%q: svc.example goes to DNS = %v, want %v", conf, got, w.plain)
		}
		if got := h.goesToDNS("Printer.LOCAL."); got != w.local {
			t.Errorf("%q: printer.local goes to DNS = %v, want %v", conf, got, w.local)
		}
	}
}

func TestSystemFilesGoesToDNSSkipsListedNames(t *testing.T) {
	dir := t.TempDir()
	nss, hosts := filepath.Join(dir, "nsswitch.conf"), filepath.Join(dir, "hosts")
	if err := os.WriteFile(nss, []byte("hosts: files dns\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	// A listed name stays with getaddrinfo even for a family the file
	// has no address of (the C library answers it from the file or not).
	if err := os.WriteFile(hosts, []byte("198.18.0.5 listed.test\nfe80::1%lo zoned.test\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	f := &systemFiles{nsswitch: nss, hosts: hostsFile{path: hosts, exact: true}}
	for name, want := range map[string]bool{"listed.test": false, "LISTED.test": false, "zoned.test": false,
		"other.test": true, "other.test.": false, "": false} {
		if got := f.goesToDNS(name); got != want {
			t.Errorf("%q goes to DNS = %v, want %v", name, got, want)
		}
	}
	if err := os.WriteFile(nss, []byte("hosts: files myhostname dns\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	if f.goesToDNS("other.test") {
		t.Errorf("an nsswitch.conf edit is not seen")
	}
}
