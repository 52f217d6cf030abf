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
	replace("} hev2_options;", `	int new_option_ms;          /* a comment, as the header has them */
	const char *new_text;
	uint16_t small, other_small;
	char new_buf[HEV2_NEW_BUFLEN];
	double ratios[2][3];
	void (*inline_fn)(int a, int b);
	struct sockaddr_storage bind_to;
} hev2_options;`)
	replace("#define HEV2_DEFAULT_MAX_HANDLES 4096", "#define HEV2_DEFAULT_MAX_HANDLES 4096\n#define HEV2_NEW_BUFLEN (HEV2_ADDRSTRLEN * 2)")
	replace("} hev2_stats_info;", "\tuint64_t new_counter;\n} hev2_stats_info;")
	replace("#ifdef __cplusplus\n}", `#define HEV2_EV_NEW_THING 99 /* a new event */
#define HEV2_ENEWFAIL -16
#define HEV2_TIMEOUT_IDLE 4
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
	out, err := generate(hdr, "", envOr("CC", "cc"), python(t), t.TempDir(), "py", "rb", "go")
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
	} {
		if !strings.Contains(py, want) {
			t.Errorf("Python lacks %s", want)
		}
	}
	for _, want := range []string{
		"EV_NEW_THING = 99\n", "new_counter: " + strconv.Itoa(structSize(t, "hev2_stats_info")) + ",", "hev2_new_info: {", `99 => "new-thing",`,
		`NEW_NAME = "hev2"`,
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
	_, err := generate(hdr, filepath.Join(repo, "capi/strerror.c"), envOr("CC", "cc"), "", t.TempDir(), "py", "rb", "go")
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
	files, err := generate("include/hev2.h", "capi/strerror.c", envOr("CC", "cc"), python(t), t.TempDir(),
		"bindings/python/src/hev2/_abi_gen.py", "bindings/ruby/lib/hev2/abi.rb", "capi/abi_check.go")
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
