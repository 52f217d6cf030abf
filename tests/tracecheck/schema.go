package tracecheck

import (
	_ "embed"
	"encoding/json"
	"fmt"
	"math"
	"regexp"
	"sort"
	"strings"
)

// schemaJSON is the hev3-00 qlog schema: the draft's CDDL translated into
// JSON Schema (see its $comment for the draft revision and the rules).
//
//go:embed hev3-00.schema.json
var schemaJSON []byte

// Schema is a JSON Schema document and the subset of JSON Schema 2020-12
// this validator knows: $ref (local, "#/$defs/..."), type, properties,
// required, const, enum, pattern, minimum, maximum, items, minItems,
// allOf, oneOf, if/then. A keyword outside that subset is an error when
// the schema is loaded, so a schema can never be checked only in part.
type Schema struct {
	root map[string]any
}

var known = map[string]bool{
	"$schema": true, "$id": true, "$comment": true, "$defs": true, "title": true,
	"$ref": true, "type": true, "properties": true, "required": true, "const": true, "enum": true,
	"pattern": true, "minimum": true, "maximum": true, "items": true, "minItems": true,
	"allOf": true, "oneOf": true, "if": true, "then": true,
}

// HEv3Schema loads the embedded hev3-00 schema.
func HEv3Schema() (*Schema, error) { return LoadSchema(schemaJSON) }

// LoadSchema parses a schema and checks that it uses only the subset.
func LoadSchema(doc []byte) (*Schema, error) {
	var root map[string]any
	if err := json.Unmarshal(doc, &root); err != nil {
		return nil, fmt.Errorf("schema: %w", err)
	}
	s := &Schema{root: root}
	if err := s.checkKeywords(root, "#"); err != nil {
		return nil, err
	}
	return s, nil
}

func (s *Schema) checkKeywords(node map[string]any, at string) error {
	keys := make([]string, 0, len(node))
	for k := range node {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	for _, k := range keys {
		if !known[k] {
			return fmt.Errorf("schema %s: keyword %q is outside the validator's subset", at, k)
		}
		switch v := node[k].(type) {
		case map[string]any:
			if k == "properties" || k == "$defs" {
				names := make([]string, 0, len(v))
				for n := range v {
					names = append(names, n)
				}
				sort.Strings(names)
				for _, n := range names {
					sub, ok := v[n].(map[string]any)
					if !ok {
						return fmt.Errorf("schema %s/%s/%s: not an object", at, k, n)
					}
					if err := s.checkKeywords(sub, at+"/"+k+"/"+n); err != nil {
						return err
					}
				}
			} else if err := s.checkKeywords(v, at+"/"+k); err != nil {
				return err
			}
		case []any:
			if k == "allOf" || k == "oneOf" {
				for i, e := range v {
					sub, ok := e.(map[string]any)
					if !ok {
						return fmt.Errorf("schema %s/%s/%d: not an object", at, k, i)
					}
					if err := s.checkKeywords(sub, fmt.Sprintf("%s/%s/%d", at, k, i)); err != nil {
						return err
					}
				}
			}
		}
	}
	return nil
}

// Validate checks value (as encoding/json decodes it) against the
// definition named def ("QlogFileSeq", "Record", ...).
func (s *Schema) Validate(def string, value any) error {
	node, err := s.ref("#/$defs/" + def)
	if err != nil {
		return err
	}
	return s.validate(node, value, "$")
}

func (s *Schema) ref(r string) (map[string]any, error) {
	name, ok := strings.CutPrefix(r, "#/$defs/")
	if !ok {
		return nil, fmt.Errorf("schema: only local #/$defs references are supported, not %q", r)
	}
	defs, _ := s.root["$defs"].(map[string]any)
	node, ok := defs[name].(map[string]any)
	if !ok {
		return nil, fmt.Errorf("schema: no definition %q", name)
	}
	return node, nil
}

func (s *Schema) validate(node map[string]any, v any, path string) error {
	if r, ok := node["$ref"].(string); ok {
		target, err := s.ref(r)
		if err != nil {
			return err
		}
		if err := s.validate(target, v, path); err != nil {
			return err
		}
	}
	if t, ok := node["type"].(string); ok && !hasType(v, t) {
		return fmt.Errorf("%s: want %s, got %s", path, t, describe(v))
	}
	if c, ok := node["const"]; ok && !equal(c, v) {
		return fmt.Errorf("%s: want %v, got %s", path, c, describe(v))
	}
	if e, ok := node["enum"].([]any); ok {
		found := false
		for _, x := range e {
			if equal(x, v) {
				found = true
				break
			}
		}
		if !found {
			return fmt.Errorf("%s: %s is not one of %v", path, describe(v), e)
		}
	}
	if p, ok := node["pattern"].(string); ok {
		if str, isStr := v.(string); isStr {
			re, err := regexp.Compile(p)
			if err != nil {
				return fmt.Errorf("schema: pattern %q: %w", p, err)
			}
			if !re.MatchString(str) {
				return fmt.Errorf("%s: %q does not match %q", path, str, p)
			}
		}
	}
	if n, isNum := v.(float64); isNum {
		if lo, ok := node["minimum"].(float64); ok && n < lo {
			return fmt.Errorf("%s: %v below the minimum %v", path, n, lo)
		}
		if hi, ok := node["maximum"].(float64); ok && n > hi {
			return fmt.Errorf("%s: %v above the maximum %v", path, n, hi)
		}
	}
	if obj, isObj := v.(map[string]any); isObj {
		if req, ok := node["required"].([]any); ok {
			for _, r := range req {
				if _, present := obj[r.(string)]; !present {
					return fmt.Errorf("%s: required field %q missing", path, r)
				}
			}
		}
		if props, ok := node["properties"].(map[string]any); ok {
			names := make([]string, 0, len(props))
			for n := range props {
				names = append(names, n)
			}
			sort.Strings(names)
			for _, n := range names {
				if fv, present := obj[n]; present {
					if err := s.validate(props[n].(map[string]any), fv, path+"."+n); err != nil {
						return err
					}
				}
			}
		}
	}
	if arr, isArr := v.([]any); isArr {
		if min, ok := node["minItems"].(float64); ok && float64(len(arr)) < min {
			return fmt.Errorf("%s: %d items, want at least %v", path, len(arr), min)
		}
		if items, ok := node["items"].(map[string]any); ok {
			for i, e := range arr {
				if err := s.validate(items, e, fmt.Sprintf("%s[%d]", path, i)); err != nil {
					return err
				}
			}
		}
	}
	if all, ok := node["allOf"].([]any); ok {
		for _, sub := range all {
			if err := s.validate(sub.(map[string]any), v, path); err != nil {
				return err
			}
		}
	}
	if one, ok := node["oneOf"].([]any); ok {
		matched := 0
		var errs []string
		for _, sub := range one {
			if err := s.validate(sub.(map[string]any), v, path); err != nil {
				errs = append(errs, err.Error())
			} else {
				matched++
			}
		}
		if matched != 1 {
			return fmt.Errorf("%s: matches %d of oneOf's choices, want exactly 1 (%s)", path, matched, strings.Join(errs, "; "))
		}
	}
	if cond, ok := node["if"].(map[string]any); ok {
		if s.validate(cond, v, path) == nil {
			if then, ok := node["then"].(map[string]any); ok {
				if err := s.validate(then, v, path); err != nil {
					return err
				}
			}
		}
	}
	return nil
}

func hasType(v any, t string) bool {
	switch t {
	case "object":
		_, ok := v.(map[string]any)
		return ok
	case "array":
		_, ok := v.([]any)
		return ok
	case "string":
		_, ok := v.(string)
		return ok
	case "boolean":
		_, ok := v.(bool)
		return ok
	case "number":
		_, ok := v.(float64)
		return ok
	case "integer":
		n, ok := v.(float64)
		return ok && n == math.Trunc(n)
	case "null":
		return v == nil
	}
	return false
}

func equal(a, b any) bool {
	x, _ := json.Marshal(a)
	y, _ := json.Marshal(b)
	return string(x) == string(y)
}

func describe(v any) string {
	b, _ := json.Marshal(v)
	if len(b) > 60 {
		return string(b[:57]) + "..."
	}
	return string(b)
}
