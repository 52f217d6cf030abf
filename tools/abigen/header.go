package main

import (
	"fmt"
	"regexp"
	"strings"
)

// header is what the generator reads from include/hev2.h itself: names,
// declarations and the order of both. Every number (constant values, sizes,
// offsets, array lengths) comes from the C compiler instead (probe.go).
type header struct {
	consts   []string            // HEV2_* object-like macros with a value, in header order
	typedefs map[string]string   // hev2_job -> "uint32_t" (scalar typedefs)
	fnptrs   map[string]bool     // hev2_done_fn: typedefs of function pointers
	structs  []*cstruct          // typedef struct ... hev2_x; in header order
	byName   map[string]*cstruct // by typedef name
}

type cstruct struct {
	name   string // the typedef name: hev2_options
	fields []*field
}

type field struct {
	name  string
	base  string   // the type without declarator: "int", "const char", "struct sockaddr_storage"
	ptr   int      // pointer depth ("*" in the declarator, or a function-pointer declarator)
	dims  []string // array dimensions as written: ["HEV2_ADDRSTRLEN"], ["2"]
	fnptr bool     // declared as (*name)(...)
}

var (
	commentRE = regexp.MustCompile(`(?s)/\*.*?\*/|//[^\n]*`)
	defineRE  = regexp.MustCompile(`(?m)^[ \t]*#[ \t]*define[ \t]+(HEV2_[A-Za-z0-9_]*)([ \t(]?)(.*)$`)
	structRE  = regexp.MustCompile(`(?s)typedef\s+struct\s+(\w+)?\s*\{([^{}]*)\}\s*(\w+)\s*;`)
	typedefRE = regexp.MustCompile(`(?m)^\s*typedef\s+([^;{}()]+?)\s+(\w+)\s*;`)
	fnptrRE   = regexp.MustCompile(`typedef\s+[^;{}]*?\(\s*\*\s*(\w+)\s*\)\s*\([^;]*\)\s*;`)
	tokenRE   = regexp.MustCompile(`[A-Za-z_]\w*|\d\w*|[*\[\](),]|\S`)
	identRE   = regexp.MustCompile(`^[A-Za-z_]\w*$`)
)

// stripComments blanks every comment, keeping its newlines so that line
// structure (and #define lines) survive.
func stripComments(src string) string {
	return commentRE.ReplaceAllStringFunc(src, func(c string) string {
		if strings.HasPrefix(c, "//") {
			return ""
		}
		return " " + strings.Repeat("\n", strings.Count(c, "\n"))
	})
}

func parseHeader(src string) (*header, error) {
	text := stripComments(src)
	// Join continuation lines: a #define may span several.
	text = strings.ReplaceAll(text, "\\\n", " ")
	h := &header{typedefs: map[string]string{}, fnptrs: map[string]bool{}, byName: map[string]*cstruct{}}

	seen := map[string]bool{}
	for _, m := range defineRE.FindAllStringSubmatch(text, -1) {
		name, sep, value := m[1], m[2], strings.TrimSpace(m[3])
		if sep == "(" || value == "" { // function-like macro, or the include guard
			continue
		}
		if seen[name] {
			return nil, fmt.Errorf("%s is defined twice", name)
		}
		seen[name] = true
		h.consts = append(h.consts, name)
	}

	for _, m := range fnptrRE.FindAllStringSubmatch(text, -1) {
		h.fnptrs[m[1]] = true
	}
	for _, m := range typedefRE.FindAllStringSubmatch(text, -1) {
		if strings.HasPrefix(strings.TrimSpace(m[1]), "struct") {
			continue
		}
		h.typedefs[m[2]] = strings.Join(strings.Fields(m[1]), " ")
	}

	for _, m := range structRE.FindAllStringSubmatch(text, -1) {
		s := &cstruct{name: m[3]}
		for _, decl := range strings.Split(m[2], ";") {
			if strings.TrimSpace(decl) == "" {
				continue
			}
			fs, err := parseDecl(decl)
			if err != nil {
				return nil, fmt.Errorf("struct %s: %v", s.name, err)
			}
			s.fields = append(s.fields, fs...)
		}
		if len(s.fields) == 0 {
			return nil, fmt.Errorf("struct %s has no fields", s.name)
		}
		h.structs = append(h.structs, s)
		h.byName[s.name] = s
	}
	// A struct the regexp could not take (a nested struct or union, a
	// bitfield) must not be skipped silently.
	if n := strings.Count(regexp.MustCompile(`typedef\s+struct\s+\w*\s*\{`).ReplaceAllString(text, "\x00"), "\x00"); n != len(h.structs) {
		return nil, fmt.Errorf("found %d struct definitions but could read only %d (nested struct/union?)", n, len(h.structs))
	}
	return h, nil
}

// parseDecl reads one member declaration: "int a", "const char *p",
// "double start_ms, end_ms", "char address[HEV2_ADDRSTRLEN]",
// "hev2_lookup_info lookups[2]", "void (*fn)(int)".
func parseDecl(decl string) ([]*field, error) {
	decl = strings.Join(strings.Fields(decl), " ")
	if strings.Contains(decl, ":") {
		return nil, fmt.Errorf("bitfield %q is not supported", decl)
	}
	toks := tokenRE.FindAllString(decl, -1)
	// The base type runs up to the first declarator: the first "*" or "(",
	// or else the last identifier before the first "[" or ",".
	end := len(toks)
	for i, t := range toks {
		if t == "[" || t == "," {
			end = i
			break
		}
	}
	baseEnd := -1
	for i := 0; i < end; i++ {
		if toks[i] == "*" || toks[i] == "(" {
			baseEnd = i
			break
		}
	}
	if baseEnd < 0 {
		baseEnd = end - 1
	}
	if baseEnd < 1 {
		return nil, fmt.Errorf("cannot read declaration %q", decl)
	}
	base := strings.Join(toks[:baseEnd], " ")
	var out []*field
	for _, d := range splitTop(toks[baseEnd:]) {
		f, err := parseDeclarator(base, d)
		if err != nil {
			return nil, fmt.Errorf("%q: %v", decl, err)
		}
		out = append(out, f)
	}
	return out, nil
}

// splitTop splits declarator tokens at commas outside parentheses.
func splitTop(toks []string) [][]string {
	var out [][]string
	depth, start := 0, 0
	for i, t := range toks {
		switch t {
		case "(":
			depth++
		case ")":
			depth--
		case ",":
			if depth == 0 {
				out = append(out, toks[start:i])
				start = i + 1
			}
		}
	}
	return append(out, toks[start:])
}

func parseDeclarator(base string, d []string) (*field, error) {
	f := &field{base: base}
	i := 0
	for i < len(d) && (d[i] == "*" || d[i] == "const" || d[i] == "volatile" || d[i] == "restrict") {
		if d[i] == "*" {
			f.ptr++
		}
		i++
	}
	if i+3 < len(d) && d[i] == "(" && d[i+1] == "*" && identRE.MatchString(d[i+2]) && d[i+3] == ")" {
		f.name, f.ptr, f.fnptr = d[i+2], f.ptr+1, true
		return f, nil // the parameter list follows; it does not change the layout
	}
	if i >= len(d) || !identRE.MatchString(d[i]) {
		return nil, fmt.Errorf("no member name")
	}
	f.name = d[i]
	i++
	for i < len(d) {
		if d[i] != "[" {
			return nil, fmt.Errorf("unexpected %q after %s", d[i], f.name)
		}
		j := i + 1
		for j < len(d) && d[j] != "]" {
			j++
		}
		if j == len(d) || j == i+1 {
			return nil, fmt.Errorf("array %s needs a constant dimension", f.name)
		}
		f.dims = append(f.dims, strings.Join(d[i+1:j], " "))
		i = j + 1
	}
	return f, nil
}
