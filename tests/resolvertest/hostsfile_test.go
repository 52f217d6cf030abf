package resolvertest_test

import (
	"context"
	"net/netip"
	"slices"
	"testing"

	"github.com/miekg/dns"

	"github.com/hev2/hev2/core"
	"github.com/hev2/hev2/tests/resolvertest"
	"github.com/hev2/hev2/tests/testdns"
)

// hostsFileReport is what childHostsFile saw for each name and family:
// the default system resolver's answer (which may come from the hosts
// file without a getaddrinfo call) beside getaddrinfo's own.
type hostsFileReport struct {
	Default, Getaddrinfo map[string][]lookupOutcome
	FromFile             uint64
}

func childHostsFile(a childArgs) (any, error) {
	always := &core.SystemResolver{AlwaysGetaddrinfo: true}
	rep := hostsFileReport{Default: map[string][]lookupOutcome{}, Getaddrinfo: map[string][]lookupOutcome{}}
	for _, host := range a.Hosts {
		for _, f := range []core.Family{core.IPv6, core.IPv4} {
			rep.Default[host] = append(rep.Default[host], lookupOne(context.Background(), core.DefaultSystemResolver, host, f))
			rep.Getaddrinfo[host] = append(rep.Getaddrinfo[host], lookupOne(context.Background(), always, host, f))
		}
	}
	rep.FromFile = core.DefaultSystemResolver.Stats().HostsFile
	return rep, nil
}

// hostsFileNames are names the namespace's hosts file lists (or not) in
// every shape the shortcut has to get right.
const hostsFileContent = resolvertest.Hosts +
	"198.18.0.5 svc.test Alias.Test\n2001:db8::5 svc.test\n198.18.0.6 svc.test\n" +
	"198.18.0.9 v4only.test\n198.18.0.11 dotted.test\n"

var hostsFileNames = []string{"localhost", "svc.test", "SVC.TEST", "alias.test", "v4only.test", "dotted.test.", "dns.test"}

// The hosts-file shortcut of the system resolver answers exactly what
// getaddrinfo answers (as sets: getaddrinfo sorts within a family, hev2
// sorts after), with nsswitch.conf asking files first and DNS first.
func TestSystemHostsFileShortcutEqualsGetaddrinfo(t *testing.T) {
	for _, nss := range []struct {
		conf     string
		fromFile bool
	}{{"hosts: files dns\n", true}, {"hosts: dns files\n", false}} {
		t.Run(nss.conf[7:11], func(t *testing.T) {
			ns, srv := testNamespace(t, resolvertest.Stack{IPv4: true, IPv6: true})
			if err := ns.WriteEtc("hosts", hostsFileContent); err != nil {
				t.Fatal(err)
			}
			if err := ns.WriteEtc("nsswitch.conf", nss.conf); err != nil {
				t.Fatal(err)
			}
			dnsAnswer := []netip.Addr{netip.MustParseAddr("2001:db8::99"), netip.MustParseAddr("198.18.0.99")}
			for _, name := range []string{"svc.test", "v4only.test", "dns.test", "alias.test"} {
				srv.Set(name, 0, testdns.Behaviour{Addrs: dnsAnswer})
			}
			var rep hostsFileReport
			inChild(t, ns, childArgs{Mode: "hostsfile", Hosts: hostsFileNames}, &rep)
			for _, name := range hostsFileNames {
				for i := range rep.Default[name] {
					d, g := rep.Default[name][i], rep.Getaddrinfo[name][i]
					if !sameSet(d.Addrs, g.Addrs) || d.Code != g.Code {
						t.Errorf("%s %v: shortcut %v (code %d), getaddrinfo %v (code %d)", name, d.Family, d.Addrs, d.Code, g.Addrs, g.Code)
					}
				}
			}
			if !nss.fromFile && rep.FromFile != 0 {
				t.Errorf("%d lookups answered from the file with %q", rep.FromFile, nss.conf)
			}
			if nss.fromFile {
				// localhost, svc.test and SVC.TEST in both families,
				// alias.test and v4only.test for IPv4 only: the others
				// go to getaddrinfo.
				if rep.FromFile != 8 {
					t.Errorf("%d lookups answered from the hosts file, want 8", rep.FromFile)
				}
				if n := srv.Count("svc.test", dns.TypeA) + srv.Count("svc.test", dns.TypeAAAA); n != 0 {
					t.Errorf("svc.test reached DNS %d times with files first", n)
				}
			}
		})
	}
}

func sameSet(a, b []string) bool {
	a, b = slices.Clone(a), slices.Clone(b)
	slices.Sort(a)
	slices.Sort(b)
	return slices.Equal(a, b)
}
