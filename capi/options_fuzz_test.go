package main

import (
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/hev2/hev2/core"
)

// FuzzConvertOptions: any hev2_options a caller can fill (every int field
// any value, each string NULL or anything) is either refused by the
// conversion with a clear error, or becomes a Dialer that core's rules
// (Validate) accept or refuse with an *InputError of kind option; never a
// panic, and nothing core refuses gets past both.
func FuzzConvertOptions(f *testing.F) {
	f.Add(int32(0), int32(0), int32(0), int32(0), int32(0), int32(0), int32(1), int32(0), int32(0), int32(0), int32(0), int32(0), int32(0), int32(0), int32(0), int32(0), "", "", "", uint8(0))
	f.Add(int32(50), int32(250), int32(1), int32(100), int32(0), int32(0), int32(0), int32(10), int32(443), int32(2), int32(1), int32(5000), int32(1), int32(1), int32(1), int32(0), "::1", "127.0.0.1:53,[::1]:5353", "a.test:127.0.0.1,::1;b.test:[::1]", uint8(7))
	f.Add(int32(-1), int32(1<<30), int32(65), int32(86400001), int32(-5), int32(100), int32(2), int32(99), int32(70000), int32(3), int32(2), int32(-1), int32(7), int32(9), int32(5), int32(300), "x\x00y", ",", ":", uint8(5))
	f.Fuzz(func(t *testing.T, a, b, c, d, e, g, h, i, j, k, l, m, n, o, p, q int32, local, ns, static string, which uint8) {
		var strs [3]*string
		if which&1 != 0 {
			strs[0] = &local
		}
		if which&2 != 0 {
			strs[1] = &ns
		}
		if which&4 != 0 {
			strs[2] = &static
		}
		co, err := optionsFromFields([16]int32{a, b, c, d, e, g, h, i, j, k, l, m, n, o, p, q}, strs)
		if err != nil {
			var se *statusError
			if !errors.As(err, &se) || se.code != statusOptions && se.code != statusNotSup || strings.TrimSpace(se.msg) == "" {
				t.Fatalf("rejection is not a clear options error: %#v", err)
			}
			return
		}
		if verr := co.dialer.Validate(); verr != nil {
			var ie *core.InputError
			if !errors.As(verr, &ie) || ie.Kind != core.InputOption || ie.Field == "" || ie.Reason == "" || codeOf(verr) != statusOptions {
				t.Fatalf("core's refusal is not a clear option error: %#v", verr)
			}
			return
		}
		for _, dur := range []time.Duration{co.dialer.ResolvTimeout, co.dialer.ConnectTimeout, co.dialer.OpenTimeout, co.dialer.KeepAlive} {
			if dur < 0 || dur > 24*time.Hour {
				t.Fatalf("a duration out of range got through: %v", dur)
			}
		}
		if co.dialer.Family != core.FamilyUnspec && co.dialer.Family != core.IPv4 && co.dialer.Family != core.IPv6 {
			t.Fatalf("family %v", co.dialer.Family)
		}
	})
}
