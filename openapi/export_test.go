package openapi

import (
	"bytes"
	"encoding/json"
	"fmt"
	"net/http"
	"strconv"
	"strings"
)

// Exports for the external tests (package openapi_test), which may import
// package api and so can drive the real router.

// RouteKeys returns "METHOD path" for every entry of the route table.
func RouteKeys() []string {
	keys := make([]string, len(routes))
	for i, r := range routes {
		keys[i] = r.method + " " + r.path
	}
	return keys
}

// resolve follows $ref until it reaches a non-reference object.
func resolve(doc map[string]any, v any) (map[string]any, error) {
	for range 10 {
		m, ok := v.(map[string]any)
		if !ok {
			return nil, fmt.Errorf("expected an object, got %T", v)
		}
		ref, ok := m["$ref"].(string)
		if !ok {
			return m, nil
		}
		next, err := pointer(doc, ref)
		if err != nil {
			return nil, err
		}
		v = next
	}
	return nil, fmt.Errorf("reference chain too long")
}

// CheckResponse checks a response served for method and path against the
// document and returns what does not match: the status must be documented
// for the operation; every header the response declares required must be
// present; every declared header present must match its schema (each
// value on its own, so repeated WWW-Authenticate fields are checked one by
// one); WWW-Authenticate and Retry-After must not appear undeclared; and a
// documented JSON body must be JSON matching the response's schema.
func CheckResponse(method, path string, status int, header http.Header, body []byte) []string {
	var doc map[string]any
	if err := json.Unmarshal(spec, &doc); err != nil {
		return []string{err.Error()}
	}
	at := fmt.Sprintf("%s %s %d", method, path, status)
	item, _ := doc["paths"].(map[string]any)[path].(map[string]any)
	op, ok := item[strings.ToLower(method)].(map[string]any)
	if !ok {
		return []string{at + ": operation not documented"}
	}
	raw, ok := op["responses"].(map[string]any)[strconv.Itoa(status)]
	if !ok {
		return []string{at + ": status not documented"}
	}
	resp, err := resolve(doc, raw)
	if err != nil {
		return []string{at + ": " + err.Error()}
	}
	v := &validator{doc: doc}
	var errs []string
	declared, _ := resp["headers"].(map[string]any)
	for name, h := range declared {
		hd, err := resolve(doc, h)
		if err != nil {
			errs = append(errs, at+": header "+name+": "+err.Error())
			continue
		}
		values := header.Values(name)
		if len(values) == 0 {
			if hd["required"] == true {
				errs = append(errs, at+": required header "+name+" is missing")
			}
			continue
		}
		schema, _ := hd["schema"].(map[string]any)
		for _, s := range values {
			var val any = s
			if schema["type"] == "integer" {
				n, err := strconv.Atoi(s)
				if err != nil {
					errs = append(errs, fmt.Sprintf("%s: header %s: %q is not an integer", at, name, s))
					continue
				}
				val = float64(n)
			}
			errs = append(errs, v.validate(schema, val, at+" header "+name)...)
		}
	}
	for _, name := range []string{"WWW-Authenticate", "Retry-After"} {
		if _, ok := declared[name]; !ok && len(header.Values(name)) > 0 {
			errs = append(errs, at+": header "+name+" is sent but not documented")
		}
	}
	media, ok := resp["content"].(map[string]any)["application/json"].(map[string]any)
	if !ok {
		return errs
	}
	if ct := header.Get("Content-Type"); ct != "application/json" {
		errs = append(errs, fmt.Sprintf("%s: Content-Type %q, want application/json", at, ct))
	}
	var val any
	dec := json.NewDecoder(bytes.NewReader(body))
	if err := dec.Decode(&val); err != nil {
		return append(errs, fmt.Sprintf("%s: body %q is not JSON: %v", at, body, err))
	}
	return append(errs, v.validate(media["schema"], val, at+" body")...)
}
