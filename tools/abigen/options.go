package main

import (
	"fmt"
	"regexp"
	"strings"
)

// Every member of hev2_options carries an "@option" note in the comment
// that follows it on its line: the one declaration of how the bindings
// offer it. From the notes the generator writes what each binding would
// otherwise repeat per option (options_python.go, options_ruby.go) and
// capi's conversion into core.Dialer (options_capi.go):
//
//	int keepalive_ms; /* @option keepalive: seconds, 0 = none;
//	                     core KeepAlive */
//
//	@option NAME: KIND[, CLAUSE]...; core [!]FIELD
//	@option special: WHY
//	@option internal: WHY
//
// NAME is the keyword in Python and Ruby: the member's name without its
// unit ("_ms"), so that an option has one name everywhere. KIND is
//
//	seconds  a number of seconds (or None/nil: not given) in the bindings,
//	         ms in the member; the clause "0 = default" or "0 = none" says
//	         what the member's 0 means, which decides what an explicit 0 s
//	         becomes (the smallest delay, or C's "none": see the emitters);
//	bool     True/False, true/false; the clause "default true|false", and
//	         "true = HEV2_X", "false = HEV2_Y" when the member takes
//	         constants rather than 1 and 0;
//	int      an integer (or None/nil: the default, 0).
//
// The clause "parameter" marks a named parameter of both bindings' connect
// call (Socket.tcp's signature): the binding checks it itself, the
// generated code converts and writes it. FIELD is the core.Dialer field
// the member becomes ("!": the field is the flag's opposite, as
// DisableHistory is history's). A plain option's value is judged by core
// alone (Dialer.Validate): the generated code converts types and units.
//
// "special" members are offered by each binding in a form of its own, and
// written by hand in the binding and in capi; "internal" ones are no
// option of the bindings (the struct's size, C's callbacks, what a binding
// sets for itself). WHY says which, for the reader. Which are which today:
//
//	special   family (AF_* constants, named per language: socket.AF_INET,
//	          :ipv4), local_host and local_port (a binding's own source
//	          address: Python's source_address tuple, Ruby's local_host
//	          name resolved by Ruby), resolver and nameservers (names per
//	          language, read together), static_hosts (Python's hosts
//	          mapping, Ruby's addresses of the host: both become its text);
//	internal  size, blocking, on_done, on_done_data, job, record_events,
//	          drive.
//
// A member without a note, a note that cannot be read, or a note that is
// not right after its member fails the generation: adding a member means
// deciding how the bindings offer it.

// option is one member's note, read.
type option struct {
	member  string // hev2_options member: history_lifetime_ms
	kind    string // seconds, bool, int, special, internal
	keyword string // history_lifetime (plain options only)
	why     string // special and internal: the note's reason

	zeroIsDefault bool   // seconds: the member's 0 is the default (else "none")
	defaultTrue   bool   // bool: its default
	trueConst     string // bool: the member's value for true, a HEV2_* constant ("": 1)
	falseConst    string // and for false ("": 0)
	parameter     bool   // a named parameter of the connect call
	coreField     string // core.Dialer field
	coreNegated   bool   // the field is the flag's opposite
}

// plain reports whether the generator writes the option's handling.
func (o *option) plain() bool { return o.kind != "special" && o.kind != "internal" }

var (
	noteRE      = regexp.MustCompile(`@option\b`)
	coreRE      = regexp.MustCompile(`^core (!?)([A-Z][A-Za-z0-9_]*)$`)
	structAtRE  = regexp.MustCompile(`(?s)typedef\s+struct\s+\w*\s*\{([^{}]*)\}\s*hev2_options\s*;`)
	constNameRE = regexp.MustCompile(`^HEV2_[A-Z0-9_]+$`)
)

// maskComments blanks every comment with as many spaces (newlines kept), so
// that positions in the masked text are positions in the source.
func maskComments(src string) string {
	return commentRE.ReplaceAllStringFunc(src, func(c string) string {
		b := []byte(c) // byte by byte: a comment may hold multi-byte runes
		for i := range b {
			if b[i] != '\n' {
				b[i] = ' '
			}
		}
		return string(b)
	})
}

// parseOptions reads the note of every member of hev2_options, in the
// header's order.
func parseOptions(src string, h *header) ([]*option, error) {
	s := h.byName["hev2_options"]
	if s == nil {
		return nil, fmt.Errorf("no struct hev2_options")
	}
	masked := maskComments(src)
	loc := structAtRE.FindStringSubmatchIndex(masked)
	if loc == nil {
		return nil, fmt.Errorf("cannot find hev2_options' body")
	}
	bodyStart, bodyEnd := loc[2], loc[3]
	notes := map[string]string{}
	attached := 0
	start := bodyStart
	for {
		semi := strings.IndexByte(masked[start:bodyEnd], ';')
		if semi < 0 {
			break
		}
		semi += start
		decl := masked[start:semi]
		start = semi + 1
		fs, err := parseDecl(decl)
		if err != nil {
			return nil, fmt.Errorf("hev2_options: %v", err)
		}
		comment := trailingComment(src, semi+1)
		i := noteRE.FindStringIndex(comment)
		if i == nil {
			continue
		}
		attached++
		text := noteText(comment[i[1]:])
		for _, f := range fs {
			notes[f.name] = text
		}
	}
	if n := len(noteRE.FindAllStringIndex(src[bodyStart:bodyEnd], -1)); n != attached {
		return nil, fmt.Errorf("hev2_options: %d @option notes, %d of them right after a member on its line: a note belongs in the comment that follows its member", n, attached)
	}
	var out []*option
	keywords := map[string]string{}
	for _, f := range s.fields {
		text, ok := notes[f.name]
		if !ok {
			return nil, fmt.Errorf("hev2_options.%s has no @option note: say how the bindings offer it (tools/abigen/options.go)", f.name)
		}
		o, err := parseNote(f, text)
		if err != nil {
			return nil, fmt.Errorf("hev2_options.%s: @option %s: %v", f.name, text, err)
		}
		if o.plain() {
			if prev, dup := keywords[o.keyword]; dup {
				return nil, fmt.Errorf("hev2_options.%s: keyword %s is %s's already", f.name, o.keyword, prev)
			}
			keywords[o.keyword] = f.name
		}
		out = append(out, o)
	}
	return out, nil
}

// trailingComment is the comment that starts on the line at pos (after a
// member's ';'), or "".
func trailingComment(src string, pos int) string {
	for pos < len(src) && (src[pos] == ' ' || src[pos] == '\t') {
		pos++
	}
	if !strings.HasPrefix(src[pos:], "/*") {
		return ""
	}
	end := strings.Index(src[pos:], "*/")
	if end < 0 {
		return ""
	}
	return src[pos+2 : pos+end]
}

// noteText is a note's text on one line: the comment's continuation lines
// joined, a leading '*' of each dropped.
func noteText(s string) string {
	var words []string
	for _, line := range strings.Split(s, "\n") {
		line = strings.TrimPrefix(strings.TrimSpace(line), "*")
		words = append(words, strings.Fields(line)...)
	}
	return strings.Join(words, " ")
}

func parseNote(f *field, text string) (*option, error) {
	head, rest, ok := strings.Cut(text, ":")
	if !ok {
		return nil, fmt.Errorf(`want "NAME: KIND, ...", "special: WHY" or "internal: WHY"`)
	}
	head, rest = strings.TrimSpace(head), strings.TrimSpace(rest)
	o := &option{member: f.name}
	if head == "special" || head == "internal" {
		if rest == "" {
			return nil, fmt.Errorf("say why the member is %s", head)
		}
		o.kind, o.why = head, rest
		return o, nil
	}
	o.keyword = head
	if want := strings.TrimSuffix(f.name, "_ms"); head != want {
		return nil, fmt.Errorf("the keyword must be the member's name without its unit: %s", want)
	}
	if f.base != "int" || f.ptr != 0 || len(f.dims) != 0 || f.fnptr {
		return nil, fmt.Errorf("a plain option is an int member")
	}
	clauses, corePart, ok := strings.Cut(rest, ";")
	if !ok {
		return nil, fmt.Errorf(`no "; core FIELD"`)
	}
	m := coreRE.FindStringSubmatch(strings.TrimSpace(corePart))
	if m == nil {
		return nil, fmt.Errorf(`want "core FIELD" or "core !FIELD" after the ';', not %q`, strings.TrimSpace(corePart))
	}
	o.coreNegated, o.coreField = m[1] == "!", m[2]
	parts := strings.Split(clauses, ",")
	o.kind = strings.TrimSpace(parts[0])
	var zeroSaid, defaultSaid bool
	for _, c := range parts[1:] {
		c = strings.TrimSpace(c)
		tight := strings.ReplaceAll(c, " ", "")
		switch {
		case c == "parameter":
			o.parameter = true
		case o.kind == "seconds" && (tight == "0=default" || tight == "0=none"):
			o.zeroIsDefault, zeroSaid = tight == "0=default", true
		case o.kind == "bool" && (c == "default true" || c == "default false"):
			o.defaultTrue, defaultSaid = c == "default true", true
		case o.kind == "bool" && strings.HasPrefix(tight, "true=") && constNameRE.MatchString(tight[5:]):
			o.trueConst = tight[5:]
		case o.kind == "bool" && strings.HasPrefix(tight, "false=") && constNameRE.MatchString(tight[6:]):
			o.falseConst = tight[6:]
		default:
			return nil, fmt.Errorf("cannot read %q for kind %q", c, o.kind)
		}
	}
	switch o.kind {
	case "seconds":
		if !zeroSaid {
			return nil, fmt.Errorf(`say what the member's 0 means: "0 = default" or "0 = none"`)
		}
		if !strings.HasSuffix(f.name, "_ms") {
			return nil, fmt.Errorf("a seconds option's member is in ms: name it ..._ms")
		}
	case "bool":
		if !defaultSaid {
			return nil, fmt.Errorf(`say its default: "default true" or "default false"`)
		}
		if (o.trueConst == "") != (o.falseConst == "") {
			return nil, fmt.Errorf(`name both values ("true = HEV2_X, false = HEV2_Y") or neither (1 and 0)`)
		}
	case "int":
	default:
		return nil, fmt.Errorf("unknown kind %q (seconds, bool, int; or special, internal)", o.kind)
	}
	if o.coreNegated && o.kind != "bool" {
		return nil, fmt.Errorf("only a bool's field can be its opposite (core !%s)", o.coreField)
	}
	return o, nil
}

// boolValues are the member's values for true and false, measured.
func (g *gen) boolValues(o *option) (t, f int64, err error) {
	t, f = 1, 0
	if o.trueConst == "" {
		return t, f, nil
	}
	for _, c := range []struct {
		name string
		v    *int64
	}{{o.trueConst, &t}, {o.falseConst, &f}} {
		m, ok := g.m.consts[c.name]
		if !ok || m.isStr {
			return 0, 0, fmt.Errorf("hev2_options.%s: %s is no integer constant of the header", o.member, c.name)
		}
		*c.v = m.i
	}
	if t == f {
		return 0, 0, fmt.Errorf("hev2_options.%s: %s and %s have the same value", o.member, o.trueConst, o.falseConst)
	}
	return t, f, nil
}

// defaultValue is a bool's default as the member's value.
func (g *gen) defaultValue(o *option) (int64, error) {
	t, f, err := g.boolValues(o)
	if o.defaultTrue {
		return t, err
	}
	return f, err
}

// plainOptions are the options whose handling is generated, in header order.
func (g *gen) plainOptions() []*option {
	var out []*option
	for _, o := range g.options {
		if o.plain() {
			out = append(out, o)
		}
	}
	return out
}
