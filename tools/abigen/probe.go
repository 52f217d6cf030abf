package main

import (
	"bufio"
	"encoding/hex"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
)

// Every number the generated files hold is measured here: a C program that
// includes hev2.h prints each constant's value, each struct's sizeof and
// _Alignof, each member's offsetof and sizeof, each array dimension, and the
// kind of each member type (by _Generic); hev2_event_name is compiled from
// capi/strerror.c so that the event names can be checked against it.

type constant struct {
	name  string
	isStr bool
	i     int64
	s     string
}

type typeInfo struct {
	kind  string // _Generic's answer: int, uint, long, ..., double, charp, other
	size  int64
	align int64
}

type layout struct {
	size, align int64
	offsets     map[string]int64
	sizes       map[string]int64
	dims        map[string][]int64 // array dimensions, measured
}

type measured struct {
	consts     map[string]constant
	structs    map[string]*layout
	types      map[string]typeInfo // by base type text
	eventNames map[int64]string    // hev2_event_name(kind) for every HEV2_EV_* value
}

func (h *header) probeSource(withEventNames bool) string {
	var b strings.Builder
	b.WriteString(`#include <stddef.h>
#include <stdio.h>
#include <string.h>
#include "hev2.h"

__attribute__((unused)) static void p_int(const char *name, long long v) { printf("const %s int %lld\n", name, v); }
__attribute__((unused)) static void p_str(const char *name, const char *v)
{
	printf("const %s str ", name);
	for (; *v; v++)
		printf("%02x", (unsigned char)*v);
	printf("\n");
}
#define CONST(name, v) _Generic((v), char *: p_str, const char *: p_str, default: p_int)(name, v)
#define KIND(T) _Generic(*(T *)0, \
	_Bool: "bool", char: "char", signed char: "int", unsigned char: "uint", \
	short: "int", unsigned short: "uint", int: "int", unsigned int: "uint", \
	long: "int", unsigned long: "uint", long long: "int", unsigned long long: "uint", \
	float: "float", double: "double", char *: "charp", const char *: "charp", \
	default: "other")
#define TYPE(T) printf("type %s %s %zu %zu\n", #T, KIND(T), sizeof(T), _Alignof(T))

int main(void)
{
`)
	for _, c := range h.consts {
		fmt.Fprintf(&b, "\tCONST(%q, %s);\n", c, c)
	}
	types := map[string]bool{}
	for _, s := range h.structs {
		fmt.Fprintf(&b, "\tprintf(\"struct %s %%zu %%zu\\n\", sizeof(%s), _Alignof(%s));\n", s.name, s.name, s.name)
		for _, f := range s.fields {
			fmt.Fprintf(&b, "\tprintf(\"field %s %s %%zu %%zu\\n\", offsetof(%s, %s), sizeof(((%s *)0)->%s));\n",
				s.name, f.name, s.name, f.name, s.name, f.name)
			for i, d := range f.dims {
				fmt.Fprintf(&b, "\tprintf(\"dim %s %s %d %%lld\\n\", (long long)(%s));\n", s.name, f.name, i, d)
			}
			if !f.fnptr && f.ptr == 0 && !types[f.base] {
				types[f.base] = true
				fmt.Fprintf(&b, "\tTYPE(%s);\n", f.base)
			}
		}
	}
	if withEventNames {
		for _, c := range h.consts {
			if strings.HasPrefix(c, "HEV2_EV_") {
				fmt.Fprintf(&b, "\tprintf(\"event %%lld %%s\\n\", (long long)(%s), hev2_event_name(%s));\n", c, c)
			}
		}
	}
	b.WriteString("\treturn 0;\n}\n")
	return b.String()
}

// probe compiles and runs the measuring program in a fresh directory under
// workdir (removed afterwards).
func (h *header) probe(cc, includeDir, strerrorC, workdir string) (*measured, error) {
	if workdir != "" {
		if err := os.MkdirAll(workdir, 0o755); err != nil {
			return nil, err
		}
	}
	dir, err := os.MkdirTemp(workdir, "abigen-")
	if err != nil {
		return nil, err
	}
	defer os.RemoveAll(dir)
	src := filepath.Join(dir, "probe.c")
	if err := os.WriteFile(src, []byte(h.probeSource(strerrorC != "")), 0o644); err != nil {
		return nil, err
	}
	exe := filepath.Join(dir, "probe")
	args := []string{"-std=gnu11", "-Wall", "-Wextra", "-Werror", "-I", includeDir, "-o", exe, src}
	if strerrorC != "" {
		args = append(args, "-I", filepath.Dir(strerrorC), strerrorC)
	}
	cmd := exec.Command(cc, args...)
	cmd.Stderr = os.Stderr
	if err := cmd.Run(); err != nil {
		return nil, fmt.Errorf("%s could not compile the probe (%s): %v", cc, src, err)
	}
	out, err := exec.Command(exe).Output()
	if err != nil {
		return nil, fmt.Errorf("running the probe: %v", err)
	}
	return parseProbe(string(out))
}

func parseProbe(out string) (*measured, error) {
	m := &measured{consts: map[string]constant{}, structs: map[string]*layout{}, types: map[string]typeInfo{}, eventNames: map[int64]string{}}
	num := func(s string) int64 {
		n, err := strconv.ParseInt(s, 10, 64)
		if err != nil {
			panic(fmt.Sprintf("probe printed %q where a number belongs", s))
		}
		return n
	}
	sc := bufio.NewScanner(strings.NewReader(out))
	for sc.Scan() {
		w := strings.Fields(sc.Text())
		switch w[0] {
		case "const":
			c := constant{name: w[1]}
			if w[2] == "str" {
				c.isStr = true
				if len(w) > 3 {
					raw, err := hex.DecodeString(w[3])
					if err != nil {
						return nil, err
					}
					c.s = string(raw)
				}
			} else {
				c.i = num(w[3])
			}
			m.consts[c.name] = c
		case "struct":
			m.structs[w[1]] = &layout{size: num(w[2]), align: num(w[3]), offsets: map[string]int64{}, sizes: map[string]int64{}, dims: map[string][]int64{}}
		case "field":
			l := m.structs[w[1]]
			l.offsets[w[2]], l.sizes[w[2]] = num(w[3]), num(w[4])
		case "dim":
			l := m.structs[w[1]]
			l.dims[w[2]] = append(l.dims[w[2]], num(w[4]))
		case "type":
			// "type const char * charp 8 8": the name may hold spaces.
			n := len(w)
			m.types[strings.Join(w[1:n-3], " ")] = typeInfo{kind: w[n-3], size: num(w[n-2]), align: num(w[n-1])}
		case "event":
			m.eventNames[num(w[1])] = strings.Join(w[2:], " ")
		}
	}
	return m, nil
}
