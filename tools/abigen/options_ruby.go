package main

import (
	"fmt"
	"strings"
)

// rubyOptions is bindings/ruby/lib/hev2/plain_options.rb: the plain options
// (options.go) as the gem takes them. The kinds' rules are the gem's own
// (Arguments' checks, Connector's units): here each option is only tied to
// its kind.
//
// Seconds: nil is "not given" (0 in the member); any number, 0 included,
// is converted by Connector.timeout_ms, for which a Ruby 0 is "no time at
// all" (1 ms), as Socket.tcp reads it, whatever the member's 0 means.
func (g *gen) rubyOptions() (string, error) {
	opts := g.plainOptions()
	var b strings.Builder
	b.WriteString("# frozen_string_literal: true\n\n")
	b.WriteString(g.banner("#"))
	b.WriteString(`
require_relative "abi"

module Hev2
  # The plain options of hev2_options: the members whose @option note in
  # include/hev2.h names a keyword, with their keyword, type check and
  # struct filling, as the notes declare them. The rule of each kind is
  # Arguments' (checks) and Connector's (ms, C ints). Request has a member
  # for each (FIELDS); Arguments.build reads **more with keywords,
  # Connector.fill_options writes the struct with fill.
  module PlainOptions
`)
	var keywords, fields []string
	for _, o := range opts {
		fields = append(fields, o.keyword)
		if !o.parameter {
			keywords = append(keywords, o.keyword)
		}
	}
	b.WriteString("    # Hev2.tcp's keywords (**more) that are plain options.\n")
	b.WriteString("    KEYWORDS = " + rbSymbols(keywords) + ".freeze\n\n")
	b.WriteString("    # Every plain option: KEYWORDS and Hev2.tcp's named parameters.\n")
	b.WriteString("    FIELDS = " + rbSymbols(fields) + ".freeze\n\n")
	b.WriteString(`    OFFSETS = ABI::OFFSETS.fetch(:hev2_options)
    private_constant :OFFSETS

    module_function

    # The plain options of more, checked as Ruby checks their kind (a
    # TypeError naming the keyword, a RangeError for a NaN), as Request's
    # members; their values are the library's to judge. Parameters are not
    # among them.
    def keywords(more)
      {
`)
	for _, o := range opts {
		if o.parameter {
			continue
		}
		var expr string
		switch o.kind {
		case "seconds":
			expr = fmt.Sprintf("Arguments.duration(more[:%s], %q)", o.keyword, o.keyword)
		case "bool":
			expr = fmt.Sprintf("more.key?(:%s) ? Arguments.boolean(more[:%s], %q) : %t", o.keyword, o.keyword, o.keyword, o.defaultTrue)
		case "int":
			expr = fmt.Sprintf("Arguments.integer(more[:%s], %q)", o.keyword, o.keyword)
		}
		fmt.Fprintf(&b, "        %s: %s,\n", o.keyword, expr)
	}
	b.WriteString(`      }
    end

    # Writes every plain option of req into the hev2_options at offset o of
    # the Scratch s (a copy of hev2_options_init_size's struct).
    def fill(s, o, req)
`)
	for _, o := range opts {
		fmt.Fprintf(&b, "      # %s\n", g.rubyNoteComment(o))
		var expr string
		switch o.kind {
		case "seconds":
			expr = fmt.Sprintf("Connector.timeout_ms(req.%s)", o.keyword)
		case "bool":
			if _, _, err := g.boolValues(o); err != nil {
				return "", err
			}
			t, f := "1", "0"
			if o.trueConst != "" {
				t, f = "ABI::"+constName(o.trueConst), "ABI::"+constName(o.falseConst)
			}
			expr = fmt.Sprintf("req.%s ? %s : %s", o.keyword, t, f)
		case "int":
			expr = fmt.Sprintf("Connector.c_int(req.%s || 0)", o.keyword)
		}
		fmt.Fprintf(&b, "      s.put_i32(o + OFFSETS[:%s], %s)\n", o.member, expr)
	}
	if len(opts) == 0 {
		b.WriteString("      nil\n")
	}
	b.WriteString("    end\n  end\nend\n")
	return b.String(), nil
}

// rubyNoteComment is noteComment with Ruby's reading of 0 s.
func (g *gen) rubyNoteComment(o *option) string {
	if o.kind == "seconds" {
		return strings.Replace(g.noteComment(o), " (an explicit 0 s is 1 ms)", "", 1)
	}
	return g.noteComment(o)
}

// rbSymbols is a %i[] literal, one symbol per line.
func rbSymbols(items []string) string {
	if len(items) == 0 {
		return "%i[]"
	}
	return "%i[\n      " + strings.Join(items, "\n      ") + "\n    ]"
}
