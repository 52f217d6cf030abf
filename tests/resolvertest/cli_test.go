package resolvertest_test

import (
	"encoding/json"
	"errors"
	"net/netip"
	"os/exec"
	"path/filepath"
	"testing"

	"github.com/hev2/hev2/tests/resolvertest"
	"github.com/hev2/hev2/tests/testdns"
	"github.com/miekg/dns"
)

// hev2-resolve prints each family's answer or its getaddrinfo code, and
// exits 0 when a family answered, 1 when none did, 2 on a usage error.
func TestResolveCommand(t *testing.T) {
	ns, srv := testNamespace(t, resolvertest.Stack{})
	srv.Set("dual.test", 0, testdns.Behaviour{Addrs: []netip.Addr{v6addr, v4addr}})
	srv.Set("v4only.test", dns.TypeA, testdns.Behaviour{Addrs: []netip.Addr{v4addr}})
	bin := filepath.Join(t.TempDir(), "hev2-resolve")
	if out, err := exec.Command("go", "build", "-o", bin, "github.com/hev2/hev2/tests/cmd/hev2-resolve").CombinedOutput(); err != nil {
		t.Fatalf("go build: %v\n%s", err, out)
	}
	type result struct {
		Lookups []struct {
			Family string
			Addrs  []string
			Error  *struct{ EAI, Errno, Message string }
		}
	}
	run := func(args ...string) (result, int) {
		var res result
		out, err := ns.Command(bin, args...).Output()
		code := 0
		var exit *exec.ExitError
		if errors.As(err, &exit) {
			code = exit.ExitCode()
		} else if err != nil {
			t.Fatal(err)
		}
		if code != 2 {
			if err := json.Unmarshal(out, &res); err != nil {
				t.Fatalf("%v: output %q: %v", args, out, err)
			}
		}
		return res, code
	}
	for _, r := range resolvers {
		res, code := run("--resolver", r, "dual.test")
		if code != 0 || len(res.Lookups) != 2 || res.Lookups[0].Addrs[0] != v6addr.String() || res.Lookups[1].Addrs[0] != v4addr.String() {
			t.Errorf("%s dual.test: exit %d, %+v", r, code, res)
		}
		res, code = run("--resolver", r, "v4only.test")
		if code != 0 || res.Lookups[0].Error == nil || res.Lookups[0].Error.EAI != "EAI_NODATA" {
			t.Errorf("%s v4only.test: exit %d, %+v", r, code, res)
		}
		res, code = run("--resolver", r, "--family", "4", "nxdomain.test")
		if code != 1 || len(res.Lookups) != 1 || res.Lookups[0].Error.EAI != "EAI_NONAME" {
			t.Errorf("%s nxdomain.test: exit %d, %+v", r, code, res)
		}
	}
	for _, bad := range [][]string{{}, {"--family", "5", "x.test"}, {"--resolver", "other", "x.test"}, {"--nameserver", "127.0.0.1", "x.test"}, {"--resolver", "builtin", "--nameserver", "nope", "x.test"}} {
		if _, code := run(bad...); code != 2 {
			t.Errorf("%v: exit %d, want 2", bad, code)
		}
	}
}
