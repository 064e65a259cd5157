package openapi

import (
	"reflect"
	"slices"
	"sort"
	"strings"
	"testing"

	"github.com/herald-gateway/herald/openapi/openapitest"
)

// These tests hold the document to what client generators need
// (oapi-codegen, openapi-python-client; sdk/ runs both on the served
// document): they read OpenAPI 3.1 but not all of JSON Schema.

// boolKeys are the keywords whose value may be a JSON boolean. Anything
// else holding a boolean is a boolean schema (items: false), which the
// generators cannot read.
var boolKeys = map[string]bool{
	"required": true, "additionalProperties": true, "deprecated": true, "explode": true,
	"allowReserved": true, "allowEmptyValue": true, "const": true, "default": true,
}

// undiscriminated are the unions of object schemas that have no property
// telling their members apart on the wire, so no discriminator can be
// declared: an admin answer ({"success", "message"}: no code) or a reload
// answer ({"status", "code"}) beside a body of another shape, and a live
// notification beside the connection_established event (a CloudEvent's
// type is int.ecmwf.aviso.<event_type>, not one value). Generated
// clients try the members in order.
var undiscriminated = []string{
	"#/components/schemas/SseLiveNotification/properties/data",
	"#/paths/~1api~1v1~1admin~1notification~1{notification_id}/delete/responses/400/content/application~1json/schema",
	"#/paths/~1api~1v1~1admin~1notification~1{notification_id}/delete/responses/503/content/application~1json/schema",
	"#/paths/~1api~1v1~1admin~1reload/post/responses/400/content/application~1json/schema",
	"#/paths/~1api~1v1~1admin~1reload/post/responses/503/content/application~1json/schema",
	"#/paths/~1api~1v1~1admin~1wipe~1all/delete/responses/503/content/application~1json/schema",
	"#/paths/~1api~1v1~1admin~1wipe~1stream/delete/responses/400/content/application~1json/schema",
	"#/paths/~1api~1v1~1admin~1wipe~1stream/delete/responses/503/content/application~1json/schema",
}

// isExample reports whether a location is inside an example value.
func isExample(at string) bool {
	return strings.Contains(at, "/examples/") || strings.Contains(at, "/example/") || strings.HasSuffix(at, "/example")
}

func TestNoBooleanSchemasTypeArraysOrAllOf(t *testing.T) {
	doc := loadDoc(t)
	walk(doc, "#", func(at string, v any) {
		m, ok := v.(map[string]any)
		if !ok || isExample(at) {
			return
		}
		for k, x := range m {
			// Under properties every key is a property name, so a
			// boolean there is a boolean schema whatever the name.
			if _, isBool := x.(bool); isBool && (!boolKeys[k] || strings.HasSuffix(at, "/properties")) {
				t.Errorf("%s/%s: a boolean schema", at, k)
			}
		}
		if types, ok := m["type"].([]any); ok {
			if len(types) != 2 || !slices.Contains(types, any("null")) {
				t.Errorf("%s: type %v: only [T, \"null\"] is allowed (generators choke on other type arrays)", at, types)
			}
		}
		if _, ok := m["allOf"]; ok {
			t.Errorf("%s: allOf: generators merge it badly; write the schema out", at)
		}
	})
}

func TestNumbersHaveFormats(t *testing.T) {
	doc := loadDoc(t)
	n := 0
	walk(doc, "#", func(at string, v any) {
		m, ok := v.(map[string]any)
		if !ok || isExample(at) {
			return
		}
		types := []any{m["type"]}
		if list, ok := m["type"].([]any); ok {
			types = list
		}
		switch {
		case slices.Contains(types, any("integer")):
			n++
			if m["format"] != "int64" {
				t.Errorf("%s: integer with format %v, want int64 (generators make an int32 or a float of it)", at, m["format"])
			}
		case slices.Contains(types, any("number")):
			n++
			if m["format"] != "double" {
				t.Errorf("%s: number with format %v, want double (generators make a float32 of it)", at, m["format"])
			}
		}
		if _, ok := m["const"]; ok && m["type"] == nil {
			t.Errorf("%s: const without type (oapi-codegen makes an interface{} of it)", at)
		}
		if _, ok := m["enum"]; ok && m["type"] == nil {
			t.Errorf("%s: enum without type", at)
		}
	})
	if n < 20 {
		t.Fatalf("only %d numbers found", n)
	}
}

// TestDiscriminators checks every oneOf of object schemas: it has a
// discriminator whose mapping names exactly its members, each member
// requires the property and fixes it to the values mapped to it; or it is
// one of the undiscriminated unions.
func TestDiscriminators(t *testing.T) {
	doc := loadDoc(t)
	var seen []string
	discriminated := 0
	walk(doc, "#", func(at string, v any) {
		m, ok := v.(map[string]any)
		if !ok || isExample(at) {
			return
		}
		alts, ok := m["oneOf"].([]any)
		if !ok {
			return
		}
		var refs []string
		for _, a := range alts {
			ref, _ := a.(map[string]any)["$ref"].(string)
			if ref == "" {
				return
			}
			target, err := openapitest.Pointer(doc, ref)
			if err != nil {
				t.Fatal(err)
			}
			if target.(map[string]any)["type"] != "object" && target.(map[string]any)["oneOf"] == nil {
				return // a union with a scalar or an array: nothing to discriminate
			}
			refs = append(refs, ref)
		}
		disc, ok := m["discriminator"].(map[string]any)
		if !ok {
			if !slices.Contains(undiscriminated, at) {
				t.Errorf("%s: a oneOf of %v without a discriminator", at, refs)
			}
			seen = append(seen, at)
			return
		}
		discriminated++
		if slices.Contains(undiscriminated, at) {
			t.Errorf("%s is listed as undiscriminated but has a discriminator", at)
		}
		prop, _ := disc["propertyName"].(string)
		byRef := map[string][]string{}
		for value, ref := range disc["mapping"].(map[string]any) {
			byRef[ref.(string)] = append(byRef[ref.(string)], value)
		}
		var mapped []string
		for ref := range byRef {
			mapped = append(mapped, ref)
		}
		sort.Strings(mapped)
		sorted := slices.Clone(refs)
		sort.Strings(sorted)
		if !reflect.DeepEqual(mapped, sorted) {
			t.Errorf("%s: the mapping names %v, the members are %v", at, mapped, sorted)
		}
		for ref, values := range byRef {
			target := deref(t, doc, map[string]any{"$ref": ref})
			if !slices.Contains(asSlice(target["required"]), any(prop)) {
				t.Errorf("%s: %s does not require %s", at, ref, prop)
			}
			p := deref(t, doc, target["properties"].(map[string]any)[prop])
			var allowed []string
			if c, ok := p["const"].(string); ok {
				allowed = []string{c}
			}
			for _, e := range asSlice(p["enum"]) {
				allowed = append(allowed, e.(string))
			}
			for _, value := range values {
				if !slices.Contains(allowed, value) {
					t.Errorf("%s: %s %q maps to %s, whose %s allows %v", at, prop, value, ref, prop, allowed)
				}
			}
			if p["const"] != nil && len(values) != 1 {
				t.Errorf("%s: %s has %s %v but is mapped from %v", at, ref, prop, p["const"], values)
			}
		}
	})
	for _, at := range undiscriminated {
		if !slices.Contains(seen, at) {
			t.Errorf("%s is listed as undiscriminated but is no such union", at)
		}
	}
	if discriminated < 6 {
		t.Errorf("only %d discriminated unions", discriminated)
	}
}

func asSlice(v any) []any {
	s, _ := v.([]any)
	return s
}

// TestErrorBodiesArePlainObjects checks that every JSON response body is
// a plain object schema (no oneOf, anyOf or allOf of its own) or a oneOf
// of such: one type per body in a generated client.
func TestErrorBodiesArePlainObjects(t *testing.T) {
	doc := loadDoc(t)
	plain := func(at string, s any) {
		target := deref(t, doc, s)
		if target["type"] != "object" {
			t.Errorf("%s: body schema of type %v, want an object", at, target["type"])
		}
		for _, k := range []string{"oneOf", "anyOf", "allOf"} {
			if _, ok := target[k]; ok {
				t.Errorf("%s: the body schema has %s", at, k)
			}
		}
	}
	n := 0
	for k, responses := range responseSets(doc) {
		for code, r := range responses {
			resp := deref(t, doc, r)
			content, _ := resp["content"].(map[string]any)
			media, ok := content["application/json"].(map[string]any)
			if !ok {
				continue
			}
			at := k + " " + code
			s := media["schema"].(map[string]any)
			if alts, ok := s["oneOf"].([]any); ok {
				for _, a := range alts {
					plain(at, a)
				}
			} else {
				plain(at, s)
			}
			n++
		}
	}
	if n < 50 {
		t.Fatalf("only %d JSON responses", n)
	}
}
