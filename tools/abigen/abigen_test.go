package main

import (
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"testing"
)

const repo = "../.."

// testOutputs names the generated files of a test generation (nothing is
// written: generate only returns them).
var testOutputs = outputs{py: "py", rb: "rb", goChecks: "go", pyOptions: "pyopt", rbOptions: "rbopt", goOptions: "goopt", cOptions: "copt"}

// appendedHeader is include/hev2.h with what later versions may append:
// constants of the existing families and new ones, members of every kind
// at the end of hev2_options and hev2_stats_info, and a new struct.
func appendedHeader(t *testing.T) string {
	t.Helper()
	src, err := os.ReadFile(filepath.Join(repo, "include/hev2.h"))
	if err != nil {
		t.Fatal(err)
	}
	h := string(src)
	replace := func(old, new string) {
		if !strings.Contains(h, old) {
			t.Fatalf("the header has no %q", old)
		}
		h = strings.Replace(h, old, new, 1)
	}
	replace("} hev2_options;", `	int new_option_ms;          /* a comment, as the header has them;
	                               @option internal: a test */
	const char *new_text; /* @option special: a test */
	uint16_t small, other_small; /* @option internal: a test */
	char new_buf[HEV2_NEW_BUFLEN]; /* @option internal: a test */
	double ratios[2][3]; /* @option internal: a test */
	void (*inline_fn)(int a, int b); /* @option internal: a test */
	struct sockaddr_storage bind_to; /* @option internal: a test */
	int new_delay_ms; /* @option new_delay: seconds, 0 = default; core NewDelay */
	int new_timeout_ms; /* @option new_timeout: seconds, 0 = none,
	                       parameter; core NewTimeout */
	int new_flag; /* @option new_flag: bool, default true; core !DisableNewFlag */
	int new_mode; /* @option new_mode: bool, default false,
	                 true = HEV2_NEW_MODE_ON, false = HEV2_NEW_MODE_OFF;
	                 core NewMode */
	int new_count; /* @option new_count: int; core NewCount */
} hev2_options;`)
	replace("#define HEV2_DRIVE_WAITER  1", "#define HEV2_DRIVE_WAITER  1\n#define HEV2_NEW_MODE_OFF 0\n#define HEV2_NEW_MODE_ON 7")
	replace("#define HEV2_DEFAULT_MAX_HANDLES 4096", "#define HEV2_DEFAULT_MAX_HANDLES 4096\n#define HEV2_NEW_BUFLEN (HEV2_ADDRSTRLEN * 2)")
	replace("} hev2_stats_info;", "\tuint64_t new_counter;\n} hev2_stats_info;")
	replace("#ifdef __cplusplus\n}", `#define HEV2_EV_NEW_THING 99 /* a new event */
#define HEV2_ENEWFAIL -16
#define HEV2_TIMEOUT_IDLE 4
#define HEV2_HTTPS_NEW_STATE 9
#define HEV2_NEW_NAME "hev2"
typedef struct hev2_new_info {
	size_t size;
	hev2_lookup_info lookups[3];
	hev2_job job;
} hev2_new_info;

#ifdef __cplusplus
}`)
	dir := t.TempDir()
	if err := os.MkdirAll(filepath.Join(dir, "include"), 0o755); err != nil {
		t.Fatal(err)
	}
	path := filepath.Join(dir, "include/hev2.h")
	if err := os.WriteFile(path, []byte(h), 0o644); err != nil {
		t.Fatal(err)
	}
	return path
}

func python(t *testing.T) string {
	p, err := exec.LookPath("python3")
	if err != nil {
		t.Fatal("python3 is needed to check the generated ctypes structs")
	}
	return p
}

func TestAppendedMembersAndConstantsNeedNoChange(t *testing.T) {
	hdr := appendedHeader(t)
	out, err := generate(hdr, "", envOr("CC", "cc"), python(t), t.TempDir(), testOutputs)
	if err != nil { // includes the Python-side layout check
		t.Fatal(err)
	}
	py, rb := out[0].text, out[1].text
	for _, want := range []string{
		`("new_option_ms", c_int),`,
		`("new_text", c_char_p),`,
		`("small", c_uint16),`,
		`("other_small", c_uint16),`,
		`("new_buf", c_char * NEW_BUFLEN),`,
		`("ratios", (c_double * 3) * 2),`,
		`("inline_fn", c_void_p),`,
		`("bind_to", c_uint64 * 16),`,
		`("new_counter", c_uint64),`,
		"class NewInfo(Structure):",
		`("lookups", LookupInfo * 3),`,
		`("job", hev2_job),`,
		"EV_NEW_THING = 99\n",
		"NEW_BUFLEN = 128\n",
		`NEW_NAME = "hev2"`,
		`99: "new-thing",`,
		`-16: "HEV2_ENEWFAIL",`,
		`4: "idle_timeout",`,
		`7: "alias-limit",`,
		`9: "new-state",`,
	} {
		if !strings.Contains(py, want) {
			t.Errorf("Python lacks %s", want)
		}
	}
	for _, want := range []string{
		"EV_NEW_THING = 99\n", "new_counter: " + strconv.Itoa(structSize(t, "hev2_stats_info")) + ",", "hev2_new_info: {", `99 => "new-thing",`,
		`NEW_NAME = "hev2"`, `7 => "alias-limit",`, `9 => "new-state",`,
	} {
		if !strings.Contains(rb, want) {
			t.Errorf("Ruby lacks %s", want)
		}
	}
	// The offsets of the appended members are the compiler's, the same in
	// both languages.
	pyOff := regexp.MustCompile(`"new_option_ms": (\d+),`).FindStringSubmatch(py)
	rbOff := regexp.MustCompile(`new_option_ms: (\d+),`).FindStringSubmatch(rb)
	want := strconv.Itoa(optionsEnd(t))
	if pyOff == nil || rbOff == nil || pyOff[1] != rbOff[1] || pyOff[1] != want {
		t.Errorf("offsetof(hev2_options, new_option_ms): Python %v, Ruby %v, want %s", pyOff, rbOff, want)
	}
	if !strings.Contains(out[2].text, "_ = uint(int(core.TraceNewThing) - C.HEV2_EV_NEW_THING)") ||
		!strings.Contains(out[2].text, "_ = uint(C.HEV2_TIMEOUT_IDLE - int(core.TimeoutIdle))") {
		t.Errorf("the Go checks do not cover the new event and timeout:\n%s", out[2].text)
	}
}

// An event the header names but capi/strerror.c does not is refused.
func TestEventNamesAreCheckedAgainstStrerror(t *testing.T) {
	hdr := appendedHeader(t)
	_, err := generate(hdr, filepath.Join(repo, "capi/strerror.c"), envOr("CC", "cc"), "", t.TempDir(), testOutputs)
	if err == nil || !strings.Contains(err.Error(), `hev2_event_name(99) is "unknown"`) {
		t.Fatalf("want the missing event name refused, got %v", err)
	}
}

// The checked-in files are what the header gives (what make abi-check
// does, here too so that go test alone notices).
func TestCheckedInFilesAreCurrent(t *testing.T) {
	wd, err := os.Getwd()
	if err != nil {
		t.Fatal(err)
	}
	if err := os.Chdir(repo); err != nil {
		t.Fatal(err)
	}
	defer os.Chdir(wd)
	files, err := generate("include/hev2.h", "capi/strerror.c", envOr("CC", "cc"), python(t), t.TempDir(), outputs{
		py: "bindings/python/src/hev2/_abi_gen.py", rb: "bindings/ruby/lib/hev2/abi.rb", goChecks: "capi/abi_check.go",
		pyOptions: "bindings/python/src/hev2/_options_gen.py", rbOptions: "bindings/ruby/lib/hev2/plain_options.rb",
		goOptions: "capi/options_gen.go", cOptions: "capi/options_gen.h"})
	if err != nil {
		t.Fatal(err)
	}
	for _, f := range files {
		old, err := os.ReadFile(f.path)
		if err != nil {
			t.Fatal(err)
		}
		if string(old) != f.text {
			t.Errorf("%s is stale: run make abi-generate", f.path)
		}
		if !strings.Contains(f.text, "from include/hev2.h; ") {
			t.Errorf("%s lacks its generated-from line", f.path)
		}
	}
}

func TestDeclarations(t *testing.T) {
	for _, c := range []struct {
		decl string
		want []field
	}{
		{"int a", []field{{name: "a", base: "int"}}},
		{"const char *p", []field{{name: "p", base: "const char", ptr: 1}}},
		{"double start_ms, end_ms", []field{{name: "start_ms", base: "double"}, {name: "end_ms", base: "double"}}},
		{"unsigned long long n", []field{{name: "n", base: "unsigned long long"}}},
		{"char address[HEV2_ADDRSTRLEN]", []field{{name: "address", base: "char", dims: []string{"HEV2_ADDRSTRLEN"}}}},
		{"struct sockaddr_storage sa", []field{{name: "sa", base: "struct sockaddr_storage"}}},
		{"void *a, **b", []field{{name: "a", base: "void", ptr: 1}, {name: "b", base: "void", ptr: 2}}},
		{"int (*fn)(int, void *)", []field{{name: "fn", base: "int", ptr: 1, fnptr: true}}},
	} {
		got, err := parseDecl(c.decl)
		if err != nil {
			t.Errorf("%q: %v", c.decl, err)
			continue
		}
		if len(got) != len(c.want) {
			t.Errorf("%q: %d members, want %d", c.decl, len(got), len(c.want))
			continue
		}
		for i, f := range got {
			w := c.want[i]
			if f.name != w.name || f.base != w.base || f.ptr != w.ptr || f.fnptr != w.fnptr || strings.Join(f.dims, ",") != strings.Join(w.dims, ",") {
				t.Errorf("%q: member %d is %+v, want %+v", c.decl, i, *f, w)
			}
		}
	}
	for _, bad := range []string{"int x : 3", "int", "int a[]"} {
		if _, err := parseDecl(bad); err == nil {
			t.Errorf("%q was accepted", bad)
		}
	}
}

// structSize is sizeof a struct of the header as it is, as the checked-in
// Python mirror records it: where a uint64_t appended to a struct made of
// 8-byte-aligned members lands.
func structSize(t *testing.T, name string) int {
	t.Helper()
	src, err := os.ReadFile(filepath.Join(repo, "bindings/python/src/hev2/_abi_gen.py"))
	if err != nil {
		t.Fatal(err)
	}
	m := regexp.MustCompile(`"` + name + `": \(\s*(\d+),`).FindSubmatch(src)
	if m == nil {
		t.Fatalf("no %s layout in _abi_gen.py", name)
	}
	n, _ := strconv.Atoi(string(m[1]))
	return n
}

// optionsEnd is where a member appended to hev2_options lands: right after
// the last member of the header as it is (an int, in every version so far),
// as the checked-in Python mirror records the compiler's offsets.
func optionsEnd(t *testing.T) int {
	t.Helper()
	src, err := os.ReadFile(filepath.Join(repo, "bindings/python/src/hev2/_abi_gen.py"))
	if err != nil {
		t.Fatal(err)
	}
	m := regexp.MustCompile(`(?s)"hev2_options": \(\s*\d+,\s*\{(.*?)\}`).FindSubmatch(src)
	if m == nil {
		t.Fatal("no hev2_options layout in _abi_gen.py")
	}
	last := -1
	for _, o := range regexp.MustCompile(`: (\d+),`).FindAllSubmatch(m[1], -1) {
		if n, _ := strconv.Atoi(string(o[1])); n > last {
			last = n
		}
	}
	return last + 4
}

// Plain options appended to hev2_options are generated into every
// binding, capi's conversion and the C defaults, each as its note says;
// special and internal members are not.
func TestAppendedPlainOptionsAreGenerated(t *testing.T) {
	out, err := generate(appendedHeader(t), "", envOr("CC", "cc"), "", t.TempDir(), testOutputs)
	if err != nil {
		t.Fatal(err)
	}
	text := map[string]string{}
	for _, f := range out {
		text[f.path] = f.text
	}
	for file, wants := range map[string][]string{
		"pyopt": {
			`"new_delay": seconds("new_delay", more.get("new_delay")),`,
			`"new_flag": flag("new_flag", more.get("new_flag", True)),`,
			`"new_mode": flag("new_mode", more.get("new_mode", False)),`,
			`"new_count": integer("new_count", more.get("new_count")),`,
			"o.new_delay_ms = milliseconds(self.new_delay, zero_to_1ms=True)\n",
			"o.new_timeout_ms = milliseconds(self.new_timeout)\n",
			"o.new_mode = 7 if self.new_mode else 0\n",
			"o.new_count = self.new_count\n",
			"new_timeout: float | None = None,",
			"and self.new_flag is True\n",
		},
		"rbopt": {
			`new_delay: Arguments.duration(more[:new_delay], "new_delay"),`,
			`new_flag: more.key?(:new_flag) ? Arguments.boolean(more[:new_flag], "new_flag") : true,`,
			"s.put_i32(o + OFFSETS[:new_mode], req.new_mode ? ABI::NEW_MODE_ON : ABI::NEW_MODE_OFF)\n",
			"s.put_i32(o + OFFSETS[:new_timeout_ms], Connector.timeout_ms(req.new_timeout))\n",
			"s.put_i32(o + OFFSETS[:new_count], Connector.c_int(req.new_count || 0))\n",
		},
		"goopt": {
			"d.NewDelay = millis(o.new_delay_ms)\n",
			"d.NewTimeout = millis(o.new_timeout_ms)\n",
			`d.DisableNewFlag = !flag("new_flag", o.new_flag, &err)`,
			"case C.HEV2_NEW_MODE_ON:\n\t\td.NewMode = true\n",
			`"new_mode %d is not HEV2_NEW_MODE_ON (7) or HEV2_NEW_MODE_OFF (0)"`,
			"d.NewCount = int(o.new_count)\n",
		},
		"copt": {"\to->new_flag = 1;\n", "\to->new_mode = HEV2_NEW_MODE_OFF;\n"},
	} {
		for _, want := range wants {
			if !strings.Contains(text[file], want) {
				t.Errorf("%s lacks %s", file, want)
			}
		}
		for _, not := range []string{"new_text", "other_small", "bind_to"} {
			if strings.Contains(text[file], not) {
				t.Errorf("%s has %s, a special or internal member", file, not)
			}
		}
	}
	// A parameter is the binding's own keyword: not among **more's.
	kw := regexp.MustCompile(`(?s)KEYWORDS = \((.*?)\)`).FindStringSubmatch(text["pyopt"])
	if kw == nil || strings.Contains(kw[1], "new_timeout") || !strings.Contains(kw[1], `"new_delay"`) {
		t.Errorf("Python KEYWORDS: %v", kw)
	}
}

// Every member must say how the bindings offer it, right after it, in a
// form the generator reads.
func TestOptionNotesAreChecked(t *testing.T) {
	for _, c := range []struct{ members, want string }{
		{"int x;", "hev2_options.x has no @option note"},
		{"/* @option x: int; core X */\n\tint x;", "right after a member"},
		{"int x_ms; /* @option x_ms: seconds, 0 = none; core X */", "the member's name without its unit: x"},
		{"int x_ms; /* @option x: seconds; core X */", `"0 = default" or "0 = none"`},
		{"int x; /* @option x: seconds, 0 = none; core X */", "name it ..._ms"},
		{"int x; /* @option x: bool; core X */", `"default true" or "default false"`},
		{"int x; /* @option x: bool, default true, true = HEV2_A; core X */", "name both values"},
		{"int x; /* @option x: bool, default maybe; core X */", `cannot read "default maybe"`},
		{"int x; /* @option x: float; core X */", `unknown kind "float"`},
		{"int x; /* @option x: int */", `no "; core FIELD"`},
		{"int x; /* @option x: int; dialer X */", `want "core FIELD"`},
		{"int x_ms; /* @option x: seconds, 0 = none; core !X */", "only a bool's field can be its opposite"},
		{"const char *x; /* @option x: int; core X */", "a plain option is an int member"},
		{"int x; /* @option special: */", "say why the member is special"},
		{"int x; /* @option special */", `want "NAME: KIND, ..."`},
	} {
		src := "typedef struct hev2_options {\n\tsize_t size; /* @option internal: its version */\n\t" + c.members + "\n} hev2_options;\n"
		h, err := parseHeader(src)
		if err == nil {
			_, err = parseOptions(src, h)
		}
		if err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%s: want an error with %q, got %v", c.members, c.want, err)
		}
	}
	good := "typedef struct hev2_options {\n\tsize_t size; /* @option internal: its version */\n" +
		"\tint a_ms, b; /* @option internal: both */\n" +
		"\tint on; /* a flag —\n\t           @option on: bool,\n\t * default true; core !Off */\n} hev2_options;\n"
	h, err := parseHeader(good)
	if err != nil {
		t.Fatal(err)
	}
	opts, err := parseOptions(good, h)
	if err != nil {
		t.Fatal(err)
	}
	if len(opts) != 4 || opts[2].kind != "internal" || opts[3].keyword != "on" || !opts[3].defaultTrue || !opts[3].coreNegated || opts[3].coreField != "Off" {
		t.Errorf("read %+v %+v", *opts[2], *opts[3])
	}
}
