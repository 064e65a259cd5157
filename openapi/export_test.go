package openapi

import (
	"bytes"
	"encoding/json"
	"fmt"
	"net/http"
	"slices"
	"strconv"
	"strings"
	"sync"

	"github.com/herald-gateway/herald/openapi/openapitest"
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

// CheckResponse checks a response served for method and path against the
// document and returns what does not match: the status must be documented
// for the operation, or be one of the document's x-global-responses (404
// for a path no operation has, 405 for a documented path without this
// method, whose Allow fields must then be exactly the path's documented
// methods); every header the response declares required must be present;
// every declared header present must match its schema (each value on its
// own, so repeated WWW-Authenticate fields are checked one by one);
// WWW-Authenticate and Retry-After must not appear undeclared; and when
// the response documents content, the Content-Type must be one of its
// media types and the body must match that media type's schema (JSON
// parsed, text/plain as a string). A text/event-stream body is not read
// here (see CheckStream), nor the body of an answer to HEAD.
func CheckResponse(method, path string, status int, header http.Header, body []byte) []string {
	var doc map[string]any
	if err := json.Unmarshal(spec, &doc); err != nil {
		return []string{err.Error()}
	}
	at := fmt.Sprintf("%s %s %d", method, path, status)
	raw, errs := responseFor(doc, method, path, status, header)
	if raw == nil {
		return errs
	}
	resp, err := openapitest.Resolve(doc, raw)
	if err != nil {
		return []string{at + ": " + err.Error()}
	}
	v := openapitest.NewValidator(doc)
	declared, _ := resp["headers"].(map[string]any)
	for name, h := range declared {
		hd, err := openapitest.Resolve(doc, h)
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
			errs = append(errs, v.Validate(schema, val, at+" header "+name)...)
		}
	}
	for _, name := range []string{"WWW-Authenticate", "Retry-After"} {
		if _, ok := declared[name]; !ok && len(header.Values(name)) > 0 {
			errs = append(errs, at+": header "+name+" is sent but not documented")
		}
	}
	content, _ := resp["content"].(map[string]any)
	if len(content) == 0 || method == http.MethodHead {
		// A HEAD answer never has content (RFC 9110 §9.3.2).
		return errs
	}
	ct := header.Get("Content-Type")
	mediaType, _, _ := strings.Cut(ct, ";")
	mediaType = strings.TrimSpace(mediaType)
	media, ok := content[mediaType].(map[string]any)
	if !ok {
		if _, json := content["application/json"]; json && len(content) == 1 {
			return append(errs, fmt.Sprintf("%s: Content-Type %q, want application/json", at, ct))
		}
		return append(errs, fmt.Sprintf("%s: Content-Type %q is not a documented media type", at, ct))
	}
	switch {
	case mediaType == "application/json":
		if ct != "application/json" {
			errs = append(errs, fmt.Sprintf("%s: Content-Type %q, want application/json", at, ct))
		}
		var val any
		dec := json.NewDecoder(bytes.NewReader(body))
		if err := dec.Decode(&val); err != nil {
			return append(errs, fmt.Sprintf("%s: body %q is not JSON: %v", at, body, err))
		}
		return append(errs, v.Validate(media["schema"], val, at+" body")...)
	case strings.HasPrefix(mediaType, "text/") && mediaType != "text/event-stream":
		return append(errs, v.Validate(media["schema"], string(body), at+" body")...)
	}
	return errs
}

// responseFor returns the document's response for a status of method and
// path: the operation's own, else a global one that applies (405 when the
// path is documented with other methods, and then only if Allow lists
// exactly those; 404 when the path is not documented).
func responseFor(doc map[string]any, method, path string, status int, header http.Header) (any, []string) {
	at := fmt.Sprintf("%s %s %d", method, path, status)
	code := strconv.Itoa(status)
	item, documented := doc["paths"].(map[string]any)[path].(map[string]any)
	if op, ok := item[strings.ToLower(method)].(map[string]any); ok {
		raw, ok := op["responses"].(map[string]any)[code]
		if !ok {
			return nil, []string{at + ": status not documented"}
		}
		return raw, nil
	}
	global, _ := doc["x-global-responses"].(map[string]any)
	switch {
	case status == http.StatusMethodNotAllowed && documented:
		var want []string
		for _, m := range []string{"get", "head", "post", "put", "patch", "delete", "connect", "options", "trace"} {
			if _, ok := item[m]; ok {
				want = append(want, strings.ToUpper(m))
			}
		}
		if got := header.Values("Allow"); !slices.Equal(got, want) {
			return global[code], []string{fmt.Sprintf("%s: Allow %q, want the path's documented methods %q", at, got, want)}
		}
		return global[code], nil
	case status == http.StatusNotFound && !documented:
		return global[code], nil
	case documented:
		return nil, []string{at + ": operation not documented"}
	}
	return nil, []string{at + ": path not documented"}
}

// CheckStream checks a Server-Sent Events body served for method and path
// with status 200 against the document: it must be in herald's framing
// (see parseSSE), end with connection-closing, and every event must match
// the contentSchema of the response's text/event-stream schema. It returns
// what does not match and the parsed events.
func CheckStream(method, path string, body []byte) ([]string, []map[string]any) {
	var doc map[string]any
	if err := json.Unmarshal(spec, &doc); err != nil {
		return []string{err.Error()}, nil
	}
	at := method + " " + path + " stream"
	item, _ := doc["paths"].(map[string]any)[path].(map[string]any)
	op, ok := item[strings.ToLower(method)].(map[string]any)
	if !ok {
		return []string{at + ": operation not documented"}, nil
	}
	resp, err := openapitest.Resolve(doc, op["responses"].(map[string]any)["200"])
	if err != nil {
		return []string{at + ": " + err.Error()}, nil
	}
	media, ok := resp["content"].(map[string]any)["text/event-stream"].(map[string]any)
	if !ok {
		return []string{at + ": no text/event-stream response"}, nil
	}
	stream, err := openapitest.Resolve(doc, media["schema"])
	if err != nil {
		return []string{at + ": " + err.Error()}, nil
	}
	events, err := parseSSE(string(body))
	if err != nil {
		return []string{fmt.Sprintf("%s: %v in %q", at, err, body)}, nil
	}
	v := openapitest.NewValidator(doc)
	var errs []string
	var out []map[string]any
	for i, ev := range events {
		raw, _ := json.Marshal(ev)
		var generic map[string]any
		_ = json.Unmarshal(raw, &generic)
		errs = append(errs, v.Validate(stream["contentSchema"], generic, fmt.Sprintf("%s event %d", at, i))...)
		out = append(out, generic)
	}
	if len(events) == 0 || events[len(events)-1].Event != "connection-closing" {
		errs = append(errs, at+": the stream does not end with connection-closing")
	}
	return errs, out
}

// DocExample returns the value of a named example of a documented response
// (media is its media type), or nil when there is none.
func DocExample(method, path string, status int, media, name string) any {
	var doc map[string]any
	if err := json.Unmarshal(spec, &doc); err != nil {
		return nil
	}
	var raw any
	if item, ok := doc["paths"].(map[string]any)[path].(map[string]any); ok {
		if op, ok := item[strings.ToLower(method)].(map[string]any); ok {
			raw = op["responses"].(map[string]any)[strconv.Itoa(status)]
		}
	}
	if raw == nil {
		global, _ := doc["x-global-responses"].(map[string]any)
		if raw = global[strconv.Itoa(status)]; raw == nil {
			return nil
		}
	}
	resp, err := openapitest.Resolve(doc, raw)
	if err != nil {
		return nil
	}
	m, _ := resp["content"].(map[string]any)[media].(map[string]any)
	e, ok := m["examples"].(map[string]any)[name]
	if !ok {
		return nil
	}
	ex, err := openapitest.Resolve(doc, e)
	if err != nil {
		return nil
	}
	return ex["value"]
}

// DocRequestExample returns the value of a named example of an
// operation's JSON request body, or nil when there is none.
func DocRequestExample(method, path, name string) any {
	return DocRequestExampleOf(method, path, "application/json", name)
}

// DocRequestExampleOf returns the value of a named example of an
// operation's request body in media type media, or nil when there is none.
func DocRequestExampleOf(method, path, media, name string) any {
	var doc map[string]any
	if err := json.Unmarshal(spec, &doc); err != nil {
		return nil
	}
	item, _ := doc["paths"].(map[string]any)[path].(map[string]any)
	op, _ := item[strings.ToLower(method)].(map[string]any)
	rb, err := openapitest.Resolve(doc, op["requestBody"])
	if err != nil {
		return nil
	}
	m, _ := rb["content"].(map[string]any)[media].(map[string]any)
	e, ok := m["examples"].(map[string]any)[name]
	if !ok {
		return nil
	}
	ex, err := openapitest.Resolve(doc, e)
	if err != nil {
		return nil
	}
	return ex["value"]
}

// sessionDocOnce is the AsyncAPI document herald serves, decoded once.
var sessionDocOnce = sync.OnceValues(func() (*openapitest.SessionDoc, error) { return openapitest.ParseSessionDoc(asyncSpec) })

// sessionMessage names the message of the served AsyncAPI document a
// frame is (openapitest.SessionDoc.Message).
func sessionMessage(direction string, frame []byte) (string, error) {
	sd, err := sessionDocOnce()
	if err != nil {
		return "", err
	}
	return sd.Message(direction, frame)
}
