// Command abigen generates the bindings' mirrors of the C ABI from
// include/hev2.h, so that the header is the one source of truth:
//
//   - bindings/python/src/hev2/_abi_gen.py: constants, name tables, ctypes
//     Structures (checked against the compiler's layout as it is written);
//   - bindings/ruby/lib/hev2/abi.rb: constants, name tables, sizes and
//     offsets for Fiddle;
//   - capi/abi_check.go: compile-time checks that core's trace and timeout
//     kinds equal HEV2_EV_* and HEV2_TIMEOUT_*;
//   - from the @option note of each hev2_options member (options.go), the
//     plain options: bindings/python/src/hev2/_options_gen.py and
//     bindings/ruby/lib/hev2/plain_options.rb (each binding's keywords,
//     type checks, unit conversion and struct filling), capi/options_gen.go
//     (the conversion into core.Dialer) and capi/options_gen.h (their
//     defaults for hev2_options_init_size).
//
// Names (constants, struct members, their types) are read from the header;
// every number is measured by the C compiler: a generated C program that
// includes hev2.h prints the constants, sizeof and offsetof. Constants,
// members and structs appended to the header are picked up as they are.
//
// Run from the repository root: `make abi-generate` writes the files,
// `make abi-check` fails when the checked-in ones differ from what the
// header gives now.
package main

import (
	"bytes"
	"flag"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
)

func main() {
	headerPath := flag.String("header", "include/hev2.h", "the C header")
	strerrorC := flag.String("strerror", "capi/strerror.c", "the C file defining hev2_event_name, to check the event names against (empty: no check)")
	pyOut := flag.String("python", "bindings/python/src/hev2/_abi_gen.py", "the generated Python module")
	rbOut := flag.String("ruby", "bindings/ruby/lib/hev2/abi.rb", "the generated Ruby file")
	goOut := flag.String("go", "capi/abi_check.go", "the generated Go checks")
	pyOpts := flag.String("python-options", "bindings/python/src/hev2/_options_gen.py", "the generated Python plain options")
	rbOpts := flag.String("ruby-options", "bindings/ruby/lib/hev2/plain_options.rb", "the generated Ruby plain options")
	goOpts := flag.String("go-options", "capi/options_gen.go", "the generated Go conversion of the plain options")
	cOpts := flag.String("c-options", "capi/options_gen.h", "the generated C defaults of the plain options")
	cc := flag.String("cc", envOr("CC", "cc"), "the C compiler")
	python := flag.String("python-exe", "python3", "the Python that checks the ctypes layout (empty: no check)")
	workdir := flag.String("workdir", "", "where the probe program is built (a fresh directory inside it; default: the system's temp)")
	check := flag.Bool("check", false, "write nothing; fail if a generated file differs from what the header gives")
	flag.Parse()

	out := outputs{py: *pyOut, rb: *rbOut, goChecks: *goOut, pyOptions: *pyOpts, rbOptions: *rbOpts, goOptions: *goOpts, cOptions: *cOpts}
	files, err := generate(*headerPath, *strerrorC, *cc, *python, *workdir, out)
	if err != nil {
		fmt.Fprintln(os.Stderr, "abigen:", err)
		os.Exit(1)
	}
	stale := 0
	for _, f := range files {
		old, err := os.ReadFile(f.path)
		if err == nil && bytes.Equal(old, []byte(f.text)) {
			continue
		}
		if *check {
			fmt.Fprintf(os.Stderr, "abigen: %s is not what %s gives now: run make abi-generate and commit it\n", f.path, *headerPath)
			stale++
			continue
		}
		if err := os.WriteFile(f.path, []byte(f.text), 0o644); err != nil {
			fmt.Fprintln(os.Stderr, "abigen:", err)
			os.Exit(1)
		}
		fmt.Println("abigen: wrote", f.path)
	}
	if stale > 0 {
		os.Exit(1)
	}
	if *check {
		fmt.Printf("abigen: %d generated files match %s\n", len(files), *headerPath)
	}
}

type output struct{ path, text string }

// outputs are the paths of the generated files.
type outputs struct {
	py, rb, goChecks                          string // the ABI's mirrors
	pyOptions, rbOptions, goOptions, cOptions string // the plain options
}

func generate(headerPath, strerrorC, cc, python, workdir string, out outputs) ([]output, error) {
	src, err := os.ReadFile(headerPath)
	if err != nil {
		return nil, err
	}
	h, err := parseHeader(string(src))
	if err != nil {
		return nil, fmt.Errorf("%s: %v", headerPath, err)
	}
	m, err := h.probe(cc, filepath.Dir(headerPath), strerrorC, workdir)
	if err != nil {
		return nil, err
	}
	ts, err := buildTables(h, m)
	if err != nil {
		return nil, err
	}
	opts, err := parseOptions(string(src), h)
	if err != nil {
		return nil, fmt.Errorf("%s: %v", headerPath, err)
	}
	g := &gen{h: h, m: m, tables: ts, options: opts, src: filepath.ToSlash(headerPath)}
	py, err := g.python()
	if err != nil {
		return nil, err
	}
	if python != "" {
		if err := checkPython(python, workdir, py); err != nil {
			return nil, err
		}
	}
	goSrc, err := g.goFile()
	if err != nil {
		return nil, err
	}
	files := []output{{out.py, py}, {out.rb, g.ruby()}, {out.goChecks, goSrc}}
	for _, o := range []struct {
		path string
		make func() (string, error)
	}{{out.pyOptions, g.pythonOptions}, {out.rbOptions, g.rubyOptions}, {out.goOptions, g.capiOptions}, {out.cOptions, g.capiDefaults}} {
		text, err := o.make()
		if err != nil {
			return nil, err
		}
		files = append(files, output{o.path, text})
	}
	return files, nil
}

// checkPython loads the generated module in Python and has it compare its
// ctypes layout with the compiler's figures it carries.
func checkPython(python, workdir, text string) error {
	dir, err := os.MkdirTemp(workdir, "abigen-py-")
	if err != nil {
		return err
	}
	defer os.RemoveAll(dir)
	mod := filepath.Join(dir, "_abi_gen.py")
	if err := os.WriteFile(mod, []byte(text), 0o644); err != nil {
		return err
	}
	const script = `import importlib.util, sys
spec = importlib.util.spec_from_file_location("_abi_gen", sys.argv[1])
m = importlib.util.module_from_spec(spec)
spec.loader.exec_module(m)
bad = m.check_layout()
print("\n".join(bad))
sys.exit(1 if bad else 0)
`
	out, err := exec.Command(python, "-B", "-c", script, mod).CombinedOutput()
	if err != nil {
		return fmt.Errorf("the generated ctypes structs do not match the compiler's layout (%v):\n%s", err, out)
	}
	return nil
}

func envOr(k, def string) string {
	if v := os.Getenv(k); v != "" {
		return v
	}
	return def
}
