package main

import (
	"fmt"
	"strings"
)

// pythonOptions is bindings/python/src/hev2/_options_gen.py: the plain
// options (options.go) as the package takes them. The kinds' rules are the
// package's own (_convert.py): here each option is only tied to its kind.
//
// Seconds: None is "not given" (the member keeps the library's default);
// an explicit 0 is what the member's 0 means when that is "none" (Python's
// 0 timeout bounds nothing, as socket's), and the smallest delay (1 ms)
// when the member's 0 is the default, so that 0 s is never read as "the
// default" (milliseconds' zero_to_1ms).
func (g *gen) pythonOptions() (string, error) {
	opts := g.plainOptions()
	var b strings.Builder
	b.WriteString(g.banner("#"))
	b.WriteString(`"""The plain options of hev2_options: the members whose @option note in
include/hev2.h names a keyword, with their keyword, type check, conversion
to the struct's units and struct filling, as the notes declare them. The
rule of each kind is _convert's. ConnectRequest is a PlainOptions;
build_request reads **more with keywords(), options_for fills the struct
with fill_plain(). Imported by ` + "``import hev2``" + `: nothing heavy (no ctypes).
"""

from __future__ import annotations

from ._convert import flag, integer, milliseconds, seconds

TYPE_CHECKING = False  # typing.TYPE_CHECKING without importing typing (mypy knows the name)
if TYPE_CHECKING:
    from collections.abc import Mapping
    from typing import Any

    from ._abi import Options

`)
	var keywords, params, slots []string
	for _, o := range opts {
		slots = append(slots, o.keyword)
		if o.parameter {
			params = append(params, o.keyword)
		} else {
			keywords = append(keywords, o.keyword)
		}
	}
	b.WriteString("# create_connection's keyword arguments (**more) that are plain options.\n")
	b.WriteString("KEYWORDS = " + pyTuple(keywords, "") + "\n\n")
	b.WriteString("# create_connection's named parameters that are plain options (its own checks).\n")
	b.WriteString("PARAMETERS = " + pyTuple(params, "") + "\n\n\n")

	b.WriteString(`class PlainOptions:
    """The plain options of one connection, checked (keywords()): seconds
    as a float (None: not given), True or False, an int (None: not given)."""

    __slots__ = ` + pyTuple(slots, "    ") + `

    def __init__(
        self,
`)
	for _, o := range opts {
		fmt.Fprintf(&b, "        %s: %s = %s,\n", o.keyword, pyType(o), pyDefault(o))
	}
	b.WriteString("    ) -> None:\n")
	for _, o := range opts {
		fmt.Fprintf(&b, "        self.%s = %s\n", o.keyword, o.keyword)
	}

	b.WriteString(`
    def plain_defaults(self) -> bool:
        """Whether every plain option is the library's default."""
        return (
`)
	for i, o := range opts {
		and := "and "
		if i == 0 {
			and = ""
		}
		fmt.Fprintf(&b, "            %sself.%s is %s\n", and, o.keyword, pyDefault(o))
	}
	if len(opts) == 0 {
		b.WriteString("            True\n")
	}
	b.WriteString(`        )

    def fill_plain(self, o: Options) -> None:
        """Writes into o, hev2_options_init_size's struct, the member of each
        plain option that is not its default."""
`)
	for _, o := range opts {
		fmt.Fprintf(&b, "        # %s\n", g.noteComment(o))
		fmt.Fprintf(&b, "        if self.%s is not %s:\n", o.keyword, pyDefault(o))
		switch o.kind {
		case "seconds":
			zero := ""
			if o.zeroIsDefault {
				zero = ", zero_to_1ms=True"
			}
			fmt.Fprintf(&b, "            o.%s = milliseconds(self.%s%s)\n", o.member, o.keyword, zero)
		case "bool":
			t, f, err := g.boolValues(o)
			if err != nil {
				return "", err
			}
			fmt.Fprintf(&b, "            o.%s = %d if self.%s else %d\n", o.member, t, o.keyword, f)
		case "int":
			fmt.Fprintf(&b, "            o.%s = self.%s\n", o.member, o.keyword)
		}
	}
	if len(opts) == 0 {
		b.WriteString("        pass\n")
	}

	b.WriteString(`

def keywords(more: Mapping[str, Any]) -> dict[str, Any]:
    """The plain options of create_connection's **more, checked as Python
    checks their kind (a TypeError naming the keyword, a ValueError for a
    NaN), as PlainOptions' arguments; their values are the library's to
    judge. Parameters are not among them."""
    return {
`)
	for _, o := range opts {
		if o.parameter {
			continue
		}
		var expr string
		switch o.kind {
		case "seconds":
			expr = fmt.Sprintf("seconds(%q, more.get(%q))", o.keyword, o.keyword)
		case "bool":
			expr = fmt.Sprintf("flag(%q, more.get(%q, %s))", o.keyword, o.keyword, pyDefault(o))
		case "int":
			expr = fmt.Sprintf("integer(%q, more.get(%q))", o.keyword, o.keyword)
		}
		fmt.Fprintf(&b, "        %q: %s,\n", o.keyword, expr)
	}
	b.WriteString("    }\n")
	return b.String(), nil
}

// noteComment says, in a generated file, what the member's note declared.
func (g *gen) noteComment(o *option) string {
	s := fmt.Sprintf("%s: %s", o.member, o.kind)
	switch o.kind {
	case "seconds":
		if o.zeroIsDefault {
			s += ", 0 = default (an explicit 0 s is 1 ms)"
		} else {
			s += ", 0 = none"
		}
	case "bool":
		s += fmt.Sprintf(", default %t", o.defaultTrue)
		if o.trueConst != "" {
			s += fmt.Sprintf(", true = %s, false = %s", o.trueConst, o.falseConst)
		}
	}
	if o.parameter {
		s += ", parameter"
	}
	return s
}

func pyType(o *option) string {
	switch o.kind {
	case "seconds":
		return "float | None"
	case "bool":
		return "bool"
	default:
		return "int | None"
	}
}

// pyDefault is the option's value when not given.
func pyDefault(o *option) string {
	if o.kind != "bool" {
		return "None"
	}
	if o.defaultTrue {
		return "True"
	}
	return "False"
}

// pyTuple is a tuple of strings, one per line, indented by indent.
func pyTuple(items []string, indent string) string {
	if len(items) == 0 {
		return "()"
	}
	var b strings.Builder
	b.WriteString("(\n")
	for _, it := range items {
		fmt.Fprintf(&b, "%s    %q,\n", indent, it)
	}
	b.WriteString(indent + ")")
	return b.String()
}
