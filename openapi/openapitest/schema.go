// Package openapitest checks values, HTTP answers and session frames
// against herald's API documents (openapi.json and asyncapi.json), for
// tests: a JSON Schema validator of the subset the documents use, and the
// lookup of a session frame's message. It is not part of the server: the
// documents are given as bytes (package openapi serves them).
package openapitest

import (
	"fmt"
	"math"
	"reflect"
	"regexp"
	"slices"
	"sort"
	"strings"
	"sync"
)

// This file is the JSON Schema checker of both documents: the subset of
// JSON Schema that openapi.json (draft 2020-12, as OpenAPI 3.1 has it) and
// asyncapi.json (the AsyncAPI Schema Object, a superset of draft 07) use.
// A keyword it does not know is reported as an error, so that a document
// cannot silently use one the checks skip.

// Pointer resolves a local JSON pointer ("#/components/schemas/X") in doc.
func Pointer(doc map[string]any, ref string) (any, error) {
	if !strings.HasPrefix(ref, "#/") {
		return nil, fmt.Errorf("%q is not a local reference", ref)
	}
	var v any = doc
	for _, tok := range strings.Split(ref[2:], "/") {
		tok = strings.ReplaceAll(strings.ReplaceAll(tok, "~1", "/"), "~0", "~")
		switch n := v.(type) {
		case map[string]any:
			next, ok := n[tok]
			if !ok {
				return nil, fmt.Errorf("%q: no %q", ref, tok)
			}
			v = next
		default:
			return nil, fmt.Errorf("%q: cannot descend into %T at %q", ref, v, tok)
		}
	}
	return v, nil
}

// Validator checks JSON values (as encoding/json decodes them into any)
// against the schemas of doc, whose local $refs it follows.
type Validator struct {
	doc map[string]any
}

// NewValidator returns a validator of the schemas of doc, a decoded API
// document.
func NewValidator(doc map[string]any) *Validator { return &Validator{doc: doc} }

// annotations are the keywords that do not constrain a value.
var annotations = map[string]bool{
	"description": true, "examples": true, "format": true, "title": true,
	"contentMediaType": true, "contentSchema": true,
}

// patterns caches the compiled pattern keywords.
var patterns sync.Map // string → *regexp.Regexp or error

func compiled(pattern string) (*regexp.Regexp, error) {
	if v, ok := patterns.Load(pattern); ok {
		if re, ok := v.(*regexp.Regexp); ok {
			return re, nil
		}
		return nil, v.(error)
	}
	re, err := regexp.Compile(pattern)
	if err != nil {
		patterns.Store(pattern, err)
		return nil, err
	}
	patterns.Store(pattern, re)
	return re, nil
}

// Validate returns what in value does not match schema, each message
// starting with at (where the value is).
func (v *Validator) Validate(schema, value any, at string) []string {
	switch s := schema.(type) {
	case bool:
		if !s {
			return []string{at + ": no value is allowed here"}
		}
		return nil
	case map[string]any:
		return v.object(s, value, at)
	}
	return []string{fmt.Sprintf("%s: schema is %T", at, schema)}
}

// JSONType names the JSON type of a decoded value; a number without a
// fraction is an integer.
func JSONType(value any) string {
	switch x := value.(type) {
	case nil:
		return "null"
	case bool:
		return "boolean"
	case string:
		return "string"
	case float64:
		if x == math.Trunc(x) {
			return "integer"
		}
		return "number"
	case []any:
		return "array"
	case map[string]any:
		return "object"
	}
	return fmt.Sprintf("%T", value)
}

// number returns a numeric keyword's value.
func number(kw any) (float64, bool) {
	n, ok := kw.(float64)
	return n, ok
}

func (v *Validator) object(s map[string]any, value any, at string) []string {
	var errs []string
	fail := func(format string, args ...any) { errs = append(errs, at+": "+fmt.Sprintf(format, args...)) }
	keys := make([]string, 0, len(s))
	for k := range s {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	for _, k := range keys {
		kw := s[k]
		switch k {
		case "$ref":
			ref, _ := kw.(string)
			target, err := Pointer(v.doc, ref)
			if err != nil {
				fail("%v", err)
				continue
			}
			errs = append(errs, v.Validate(target, value, at)...)
		case "type":
			var types []string
			switch tt := kw.(type) {
			case string:
				types = []string{tt}
			case []any:
				for _, x := range tt {
					if s, ok := x.(string); ok {
						types = append(types, s)
					}
				}
			}
			got := JSONType(value)
			if !slices.Contains(types, got) && !(got == "integer" && slices.Contains(types, "number")) {
				fail("type %s, want %v", got, types)
			}
		case "const":
			if !reflect.DeepEqual(value, kw) {
				fail("%v, want const %v", value, kw)
			}
		case "enum":
			list, _ := kw.([]any)
			if !slices.ContainsFunc(list, func(e any) bool { return reflect.DeepEqual(e, value) }) {
				fail("%v is not in enum %v", value, kw)
			}
		case "properties":
			obj, ok := value.(map[string]any)
			if !ok {
				continue
			}
			props, _ := kw.(map[string]any)
			names := make([]string, 0, len(props))
			for name := range props {
				names = append(names, name)
			}
			sort.Strings(names)
			for _, name := range names {
				if pv, ok := obj[name]; ok {
					errs = append(errs, v.Validate(props[name], pv, at+"."+name)...)
				}
			}
		case "required":
			obj, ok := value.(map[string]any)
			if !ok {
				continue
			}
			list, _ := kw.([]any)
			for _, name := range list {
				n, _ := name.(string)
				if _, ok := obj[n]; !ok {
					fail("missing required %q", n)
				}
			}
		case "additionalProperties":
			obj, ok := value.(map[string]any)
			if !ok {
				continue
			}
			props, _ := s["properties"].(map[string]any)
			names := make([]string, 0, len(obj))
			for name := range obj {
				names = append(names, name)
			}
			sort.Strings(names)
			for _, name := range names {
				if _, declared := props[name]; !declared {
					errs = append(errs, v.Validate(kw, obj[name], at+"."+name)...)
				}
			}
		case "items":
			arr, ok := value.([]any)
			if !ok {
				continue
			}
			if tuple, ok := kw.([]any); ok {
				// Draft 07's tuple form (the AsyncAPI Schema Object):
				// one schema per position, additionalItems for the rest.
				for i, ps := range tuple {
					if i < len(arr) {
						errs = append(errs, v.Validate(ps, arr[i], fmt.Sprintf("%s[%d]", at, i))...)
					}
				}
				continue
			}
			prefix, _ := s["prefixItems"].([]any)
			for i := len(prefix); i < len(arr); i++ {
				errs = append(errs, v.Validate(kw, arr[i], fmt.Sprintf("%s[%d]", at, i))...)
			}
		case "additionalItems":
			arr, ok := value.([]any)
			tuple, isTuple := s["items"].([]any)
			if !ok || !isTuple {
				continue
			}
			for i := len(tuple); i < len(arr); i++ {
				errs = append(errs, v.Validate(kw, arr[i], fmt.Sprintf("%s[%d]", at, i))...)
			}
		case "prefixItems":
			arr, ok := value.([]any)
			if !ok {
				continue
			}
			list, _ := kw.([]any)
			for i, ps := range list {
				if i < len(arr) {
					errs = append(errs, v.Validate(ps, arr[i], fmt.Sprintf("%s[%d]", at, i))...)
				}
			}
		case "minItems", "maxItems":
			if arr, ok := value.([]any); ok {
				n, _ := number(kw)
				if (k == "minItems" && float64(len(arr)) < n) || (k == "maxItems" && float64(len(arr)) > n) {
					fail("%d items, %s %v", len(arr), k, n)
				}
			}
		case "minProperties", "maxProperties":
			if obj, ok := value.(map[string]any); ok {
				n, _ := number(kw)
				if (k == "minProperties" && float64(len(obj)) < n) || (k == "maxProperties" && float64(len(obj)) > n) {
					fail("%d properties, %s %v", len(obj), k, n)
				}
			}
		case "minLength", "maxLength":
			if str, ok := value.(string); ok {
				n, _ := number(kw)
				l := float64(len([]rune(str)))
				if k == "minLength" && l < n {
					fail("%q is shorter than %v", str, kw)
				}
				if k == "maxLength" && l > n {
					fail("%q is longer than %v", str, kw)
				}
			}
		case "pattern":
			str, ok := value.(string)
			if !ok {
				continue
			}
			p, _ := kw.(string)
			re, err := compiled(p)
			if err != nil {
				fail("pattern %q: %v", p, err)
				continue
			}
			if !re.MatchString(str) {
				fail("%q does not match %s", str, p)
			}
		case "minimum", "maximum":
			if n, ok := value.(float64); ok {
				limit, _ := number(kw)
				if (k == "minimum" && n < limit) || (k == "maximum" && n > limit) {
					fail("%v breaks %s %v", n, k, kw)
				}
			}
		case "not":
			if len(v.Validate(kw, value, at+"<not>")) == 0 {
				fail("matches the schema under not")
			}
		case "if":
			// then or else applies by whether the value matches if;
			// the if schema itself adds no error.
			branch, ok := s["else"]
			if len(v.Validate(kw, value, at+"<if>")) == 0 {
				branch, ok = s["then"]
			}
			if ok {
				errs = append(errs, v.Validate(branch, value, at)...)
			}
		case "then", "else":
			// Applied under "if"; alone they mean nothing.
		case "oneOf", "anyOf", "allOf":
			alts, _ := kw.([]any)
			matched := 0
			var sub []string
			for i, alt := range alts {
				e := v.Validate(alt, value, fmt.Sprintf("%s<%s %d>", at, k, i))
				if len(e) == 0 {
					matched++
				}
				sub = append(sub, e...)
			}
			if k == "oneOf" {
				if derr := v.discriminated(s, value, at); len(derr) > 0 {
					fail("%s", strings.Join(derr, "; "))
					continue
				}
			}
			switch {
			case k == "oneOf" && matched != 1:
				fail("matches %d of oneOf, want exactly 1 %v", matched, sub)
			case k == "anyOf" && matched == 0:
				fail("matches none of anyOf %v", sub)
			case k == "allOf" && matched != len(alts):
				fail("does not match allOf %v", sub)
			}
		case "discriminator":
			// Checked with oneOf (see discriminated).
		default:
			if !annotations[k] {
				fail("the Validator does not support keyword %q", k)
			}
		}
	}
	return errs
}

// discriminated checks the OpenAPI discriminator of a oneOf schema s (at
// most one error, without its location): an
// object value must carry the discriminating property, as a string that
// the mapping lists, and the schema it maps to must be one of the oneOf
// alternatives and match the value. This is what a generated client does
// with the value (it decodes the mapped schema), so the document may not
// promise more than it. A schema without a discriminator passes.
func (v *Validator) discriminated(s map[string]any, value any, at string) []string {
	disc, ok := s["discriminator"].(map[string]any)
	if !ok {
		return nil
	}
	obj, ok := value.(map[string]any)
	if !ok {
		return nil // the alternatives already refuse a non-object
	}
	name, _ := disc["propertyName"].(string)
	tag, ok := obj[name].(string)
	if !ok {
		return []string{fmt.Sprintf("discriminator %q is missing or not a string", name)}
	}
	mapping, _ := disc["mapping"].(map[string]any)
	target, ok := mapping[tag].(string)
	if !ok {
		return []string{fmt.Sprintf("discriminator %s %q is not in the mapping", name, tag)}
	}
	alts, _ := s["oneOf"].([]any)
	if !slices.ContainsFunc(alts, func(a any) bool {
		m, _ := a.(map[string]any)
		return m["$ref"] == target
	}) {
		return []string{fmt.Sprintf("discriminator %s %q maps to %s, which is not an alternative", name, tag, target)}
	}
	if sub := v.Validate(map[string]any{"$ref": target}, value, at); len(sub) > 0 {
		return []string{fmt.Sprintf("discriminator %s %q selects %s, which does not match %v", name, tag, target, sub)}
	}
	return nil
}
