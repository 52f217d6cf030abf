package race

import (
	"go/ast"
	"go/parser"
	"go/token"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
)

// The race machine is sans-I/O by construction, not by convention: it may
// not import anything that reaches the system, nor read the clock. Every
// moment it knows is the "now" its driver passes in.
func TestRaceMachineIsSansIO(t *testing.T) {
	// Direct imports: fmt and errors reach os underneath, which is fine;
	// what the machine itself may call is what matters. math/rand/v2
	// shuffles services of equal priority from the seed it is given.
	out, err := exec.Command("go", "list", "-f", "{{join .Imports \"\\n\"}}\n{{.CgoFiles}}", ".").Output()
	if err != nil {
		t.Fatalf("go list: %v", err)
	}
	lines := strings.Split(strings.TrimSpace(string(out)), "\n")
	allowed := map[string]bool{"errors": true, "fmt": true, "math/rand/v2": true, "net/netip": true, "slices": true, "sort": true, "strconv": true, "strings": true, "syscall": true, "time": true}
	for _, pkg := range lines[:len(lines)-1] {
		if !allowed[pkg] {
			t.Errorf("internal/race imports %s (allowed: pure packages only, no os, net, unix or cgo)", pkg)
		}
	}
	if cgo := lines[len(lines)-1]; cgo != "[]" {
		t.Errorf("internal/race uses cgo: %s", cgo)
	}

	files, err := filepath.Glob("*.go")
	if err != nil || len(files) == 0 {
		t.Fatalf("no files here: %v", err)
	}
	fset := token.NewFileSet()
	for _, name := range files {
		if strings.HasSuffix(name, "_test.go") {
			continue
		}
		f, err := parser.ParseFile(fset, name, nil, 0)
		if err != nil {
			t.Fatal(err)
		}
		timeName := ""
		for _, imp := range f.Imports {
			path, _ := strconv.Unquote(imp.Path.Value)
			if path == "time" {
				timeName = "time"
				if imp.Name != nil {
					timeName = imp.Name.Name
				}
			}
		}
		ast.Inspect(f, func(n ast.Node) bool {
			sel, ok := n.(*ast.SelectorExpr)
			if !ok {
				return true
			}
			if x, ok := sel.X.(*ast.Ident); ok && x.Name == timeName && timeName != "" {
				switch sel.Sel.Name {
				case "Now", "Since", "Until", "Sleep", "After", "AfterFunc", "NewTimer", "NewTicker", "Tick":
					t.Errorf("%s: time.%s in the race machine (its clock is the driver's \"now\")", fset.Position(sel.Pos()), sel.Sel.Name)
				}
			}
			return true
		})
	}
}
