package openapi

import (
	"bytes"
	"encoding/json"
	"fmt"
	"net/http"
	"net/http/httptest"
	"reflect"
	"regexp"
	"slices"
	"sort"
	"strings"
	"testing"

	"github.com/herald-gateway/herald/openapi/openapitest"
)

// route is one method and path served by api.NewRouter, with the response
// statuses the document must list for it.
type route struct {
	method   string
	path     string
	statuses []string
}

// routes mirrors api.NewRouter (package api imports this package, so only
// the external test TestRouteTableMatchesRouter can ask the router, and
// does). Keep the two in step: a route added there must be added here and
// documented in openapi.json.
var routes = []route{
	{"GET", "/", []string{"200"}},
	{"HEAD", "/", []string{"200"}},
	{"GET", "/health", []string{"200", "503"}},
	{"HEAD", "/health", []string{"200", "503"}},
	{"GET", "/ready", []string{"200", "503"}},
	{"HEAD", "/ready", []string{"200", "503"}},
	{"GET", "/api-docs/openapi.json", []string{"200"}},
	{"HEAD", "/api-docs/openapi.json", []string{"200"}},
	{"GET", "/api-docs/asyncapi.json", []string{"200"}},
	{"HEAD", "/api-docs/asyncapi.json", []string{"200"}},
	{"GET", "/swagger-ui", []string{"200"}},
	{"HEAD", "/swagger-ui", []string{"200"}},
	{"GET", "/swagger-ui/", []string{"200"}},
	{"HEAD", "/swagger-ui/", []string{"200"}},
	{"GET", "/swagger-ui/{file}", []string{"200", "404"}},
	{"HEAD", "/swagger-ui/{file}", []string{"200", "404"}},
	{"GET", "/console", []string{"301"}},
	{"HEAD", "/console", []string{"301"}},
	{"GET", "/console/", []string{"200", "304"}},
	{"HEAD", "/console/", []string{"200", "304"}},
	{"GET", "/console/{file}", []string{"200", "304", "404"}},
	{"HEAD", "/console/{file}", []string{"200", "304", "404"}},
	{"GET", "/docs/", []string{"200"}},
	{"HEAD", "/docs/", []string{"200"}},
	{"GET", "/docs/{file}", []string{"200", "404"}},
	{"HEAD", "/docs/{file}", []string{"200", "404"}},
	{"GET", "/api/v1/schema", []string{"200"}},
	{"HEAD", "/api/v1/schema", []string{"200"}},
	{"GET", "/api/v1/schema/{event_type}", []string{"200", "404"}},
	{"HEAD", "/api/v1/schema/{event_type}", []string{"200", "404"}},
	{"GET", "/schema/{event_type}", []string{"200", "404"}},
	{"HEAD", "/schema/{event_type}", []string{"200", "404"}},
	{"POST", "/api/v1/notification", []string{"200", "400", "401", "403", "408", "413", "415", "500", "503"}},
	{"POST", "/api/v1/notifications", []string{"200", "400", "401", "403", "408", "413", "415", "500", "503"}},
	{"POST", "/api/v1/events/{event_type}", []string{"200", "400", "401", "403", "408", "413", "415", "500", "503"}},
	{"POST", "/api/v1/watch", []string{"200", "400", "401", "403", "408", "413", "415", "429", "500", "503"}},
	{"POST", "/api/v1/replay", []string{"200", "400", "401", "403", "408", "413", "415", "429", "500", "503"}},
	{"GET", "/api/v1/session", []string{"101", "400", "401", "403", "426", "429", "503"}},
	{"DELETE", "/api/v1/admin/notification/{notification_id}", []string{"200", "400", "401", "403", "404", "500", "503"}},
	{"DELETE", "/api/v1/admin/wipe/stream", []string{"200", "400", "401", "403", "404", "408", "413", "415", "500", "503"}},
	{"DELETE", "/api/v1/admin/wipe/all", []string{"200", "400", "401", "403", "500", "503"}},
	{"POST", "/api/v1/admin/reload", []string{"200", "400", "401", "403", "408", "409", "413", "415", "500", "501", "503"}},
}

// globalStatuses are the answers every path may give, documented once
// under the document's x-global-responses: no route (404) and another
// method (405).
var globalStatuses = []string{"404", "405"}

// queryParams are the only query parameters herald reads, per operation.
var queryParams = map[string][]string{"POST /api/v1/admin/reload": {"force"}, "POST /api/v1/events/{event_type}": {"identifier"}}

// publicRoutes never need credentials: their operations declare an empty
// security requirement list.
var publicRoutes = map[string]bool{
	"HEAD /": true, "HEAD /health": true, "HEAD /ready": true,
	"HEAD /api-docs/openapi.json": true, "HEAD /api-docs/asyncapi.json": true,
	"HEAD /swagger-ui": true, "HEAD /swagger-ui/": true, "HEAD /swagger-ui/{file}": true,
	"HEAD /console": true, "HEAD /console/": true, "HEAD /console/{file}": true,
	"HEAD /docs/": true, "HEAD /docs/{file}": true,
	"HEAD /api/v1/schema": true, "HEAD /api/v1/schema/{event_type}": true, "HEAD /schema/{event_type}": true,
	"GET /": true, "GET /health": true, "GET /ready": true,
	"GET /api-docs/openapi.json": true, "GET /api-docs/asyncapi.json": true,
	"GET /swagger-ui": true, "GET /swagger-ui/": true, "GET /swagger-ui/{file}": true,
	"GET /console": true, "GET /console/": true, "GET /console/{file}": true,
	"GET /docs/": true, "GET /docs/{file}": true,
	"GET /api/v1/schema": true, "GET /api/v1/schema/{event_type}": true, "GET /schema/{event_type}": true,
}

// loadDoc decodes the embedded document.
func loadDoc(t *testing.T) map[string]any {
	t.Helper()
	var doc map[string]any
	dec := json.NewDecoder(bytes.NewReader(Spec()))
	if err := dec.Decode(&doc); err != nil {
		t.Fatalf("openapi.json is not valid JSON: %v", err)
	}
	if dec.More() {
		t.Fatal("openapi.json has data after the document")
	}
	return doc
}

// deref follows $ref until it reaches a non-reference object.
func deref(t *testing.T, doc map[string]any, v any) map[string]any {
	t.Helper()
	for range 10 {
		m, ok := v.(map[string]any)
		if !ok {
			t.Fatalf("expected an object, got %T", v)
		}
		ref, ok := m["$ref"].(string)
		if !ok {
			return m
		}
		next, err := openapitest.Pointer(doc, ref)
		if err != nil {
			t.Fatal(err)
		}
		v = next
	}
	t.Fatal("reference chain too long")
	return nil
}

// walk calls fn for every value of the document with its location.
func walk(v any, at string, fn func(at string, v any)) {
	fn(at, v)
	switch n := v.(type) {
	case map[string]any:
		keys := make([]string, 0, len(n))
		for k := range n {
			keys = append(keys, k)
		}
		sort.Strings(keys)
		for _, k := range keys {
			walk(n[k], at+"/"+strings.ReplaceAll(strings.ReplaceAll(k, "~", "~0"), "/", "~1"), fn)
		}
	case []any:
		for i, e := range n {
			walk(e, fmt.Sprintf("%s/%d", at, i), fn)
		}
	}
}

var httpMethods = []string{"get", "put", "post", "delete", "options", "head", "patch", "trace"}

// docOperations returns "METHOD path" for every operation of the document.
func docOperations(doc map[string]any) map[string]map[string]any {
	ops := map[string]map[string]any{}
	for p, item := range doc["paths"].(map[string]any) {
		for m, op := range item.(map[string]any) {
			if slices.Contains(httpMethods, m) {
				ops[strings.ToUpper(m)+" "+p] = op.(map[string]any)
			}
		}
	}
	return ops
}

func TestDocumentIsOpenAPI31(t *testing.T) {
	doc := loadDoc(t)
	if v, _ := doc["openapi"].(string); !regexp.MustCompile(`^3\.1\.\d+$`).MatchString(v) {
		t.Fatalf("openapi = %q, want 3.1.x", v)
	}
	info := doc["info"].(map[string]any)
	if info["title"] != "herald" || info["version"] != "1.0.0" {
		t.Fatalf("info title/version = %v/%v, want herald/1.0.0", info["title"], info["version"])
	}
}

func TestEveryRefResolves(t *testing.T) {
	doc := loadDoc(t)
	used := map[string]bool{}
	refs := 0
	walk(doc, "#", func(at string, v any) {
		m, ok := v.(map[string]any)
		if !ok {
			return
		}
		ref, ok := m["$ref"]
		if !ok {
			return
		}
		s, ok := ref.(string)
		if !ok {
			t.Errorf("%s: $ref is %T, want a string", at, ref)
			return
		}
		if _, err := openapitest.Pointer(doc, s); err != nil {
			t.Errorf("%s: %v", at, err)
		}
		refs++
		used[s] = true
	})
	if refs == 0 {
		t.Fatal("no $ref found")
	}
	// Every component is used: a dead component is a sign of a mistake.
	for kind, group := range doc["components"].(map[string]any) {
		if kind == "securitySchemes" {
			continue
		}
		for name := range group.(map[string]any) {
			if ref := "#/components/" + kind + "/" + name; !used[ref] {
				t.Errorf("%s is never referenced", ref)
			}
		}
	}
}

func TestRoutesDocumentedExactly(t *testing.T) {
	doc := loadDoc(t)
	ops := docOperations(doc)
	var want, got []string
	for _, r := range routes {
		want = append(want, r.method+" "+r.path)
	}
	for k := range ops {
		got = append(got, k)
	}
	sort.Strings(want)
	sort.Strings(got)
	if !reflect.DeepEqual(got, want) {
		t.Fatalf("documented operations\n got %q\nwant %q", got, want)
	}
	for _, r := range routes {
		op := ops[r.method+" "+r.path]
		var codes []string
		for c := range op["responses"].(map[string]any) {
			codes = append(codes, c)
		}
		sort.Strings(codes)
		if !reflect.DeepEqual(codes, r.statuses) {
			t.Errorf("%s %s: statuses %q, want %q", r.method, r.path, codes, r.statuses)
		}
		if s, _ := op["summary"].(string); s == "" {
			t.Errorf("%s %s: no summary", r.method, r.path)
		}
	}
}

func TestOperationIDsUnique(t *testing.T) {
	doc := loadDoc(t)
	seen := map[string]string{}
	for k, op := range docOperations(doc) {
		id, _ := op["operationId"].(string)
		if id == "" {
			t.Errorf("%s: no operationId", k)
			continue
		}
		if prev, dup := seen[id]; dup {
			t.Errorf("operationId %q used by %s and %s", id, prev, k)
		}
		seen[id] = k
	}
}

func TestPathParametersDeclared(t *testing.T) {
	doc := loadDoc(t)
	tmpl := regexp.MustCompile(`\{([^}]+)\}`)
	for k, op := range docOperations(doc) {
		path := strings.SplitN(k, " ", 2)[1]
		var want []string
		for _, m := range tmpl.FindAllStringSubmatch(path, -1) {
			want = append(want, m[1])
		}
		var got, query []string
		params, _ := op["parameters"].([]any)
		for _, p := range params {
			pm := deref(t, doc, p)
			if pm["in"] == "query" && slices.Contains(queryParams[k], pm["name"].(string)) {
				if pm["required"] == true {
					t.Errorf("%s: query parameter %v is required; herald's query parameters are optional", k, pm["name"])
				}
				query = append(query, pm["name"].(string))
				continue
			}
			if pm["in"] != "path" {
				t.Errorf("%s: parameter %v is in %v; herald takes no query, header or cookie parameters", k, pm["name"], pm["in"])
				continue
			}
			if pm["required"] != true {
				t.Errorf("%s: path parameter %v is not required", k, pm["name"])
			}
			got = append(got, pm["name"].(string))
		}
		if !reflect.DeepEqual(got, want) {
			t.Errorf("%s: path parameters %q, want %q", k, got, want)
		}
		if !reflect.DeepEqual(query, queryParams[k]) {
			t.Errorf("%s: query parameters %q, want %q", k, query, queryParams[k])
		}
	}
}

// responseSets returns the responses of every operation by "METHOD path",
// and the global responses under "x-global-responses".
func responseSets(doc map[string]any) map[string]map[string]any {
	sets := map[string]map[string]any{}
	for k, op := range docOperations(doc) {
		sets[k] = op["responses"].(map[string]any)
	}
	if g, ok := doc["x-global-responses"].(map[string]any); ok {
		sets["x-global-responses"] = g
	}
	return sets
}

func TestEveryResponseHasRequestID(t *testing.T) {
	doc := loadDoc(t)
	for k, responses := range responseSets(doc) {
		for code, r := range responses {
			resp := deref(t, doc, r)
			h, _ := resp["headers"].(map[string]any)
			x, ok := h["X-Request-ID"].(map[string]any)
			if !ok {
				t.Errorf("%s %s: no X-Request-ID header", k, code)
				continue
			}
			if x["$ref"] != "#/components/headers/XRequestID" {
				t.Errorf("%s %s: X-Request-ID is %v, want the XRequestID component", k, code, x)
			}
			if d, _ := resp["description"].(string); d == "" {
				t.Errorf("%s %s: no description", k, code)
			}
		}
	}
}

// TestGlobalResponses checks the answers of every path, documented once:
// 404 and 405 with the JSON error body, 405 with its Allow header; and
// that no operation documents a 405 of its own (a request with another
// method is not the operation).
func TestGlobalResponses(t *testing.T) {
	doc := loadDoc(t)
	global, ok := doc["x-global-responses"].(map[string]any)
	if !ok {
		t.Fatal("no x-global-responses")
	}
	var codes []string
	for c := range global {
		codes = append(codes, c)
	}
	sort.Strings(codes)
	if !slices.Equal(codes, globalStatuses) {
		t.Fatalf("x-global-responses has %q, want %q", codes, globalStatuses)
	}
	for code, want := range map[string]string{"404": "NOT_FOUND", "405": "METHOD_NOT_ALLOWED"} {
		resp := deref(t, doc, global[code])
		media, ok := resp["content"].(map[string]any)["application/json"].(map[string]any)
		if !ok {
			t.Errorf("global %s has no JSON body", code)
			continue
		}
		if media["schema"].(map[string]any)["$ref"] != "#/components/schemas/RouteErrorBody" {
			t.Errorf("global %s schema is %v, want RouteErrorBody", code, media["schema"])
		}
		for name, e := range media["examples"].(map[string]any) {
			if c := deref(t, doc, e)["value"].(map[string]any)["code"]; c != want {
				t.Errorf("global %s example %s has code %v, want %s", code, name, c, want)
			}
		}
		allow, _ := resp["headers"].(map[string]any)["Allow"].(map[string]any)
		if (code == "405") != (allow["$ref"] == "#/components/headers/Allow") {
			t.Errorf("global %s: Allow header %v", code, allow)
		}
	}
	if h := doc["components"].(map[string]any)["headers"].(map[string]any)["Allow"].(map[string]any); h["required"] != true {
		t.Error("components.headers.Allow is not required")
	}
	for k, op := range docOperations(doc) {
		if _, ok := op["responses"].(map[string]any)["405"]; ok {
			t.Errorf("%s documents a 405: that is a global response", k)
		}
	}
}

// TestRequestBodiesDocument415 checks that every operation taking a body
// documents the 415 of an unsupported Content-Encoding and the 413 of a
// body over the limit, and that the 415 carries Accept-Encoding.
func TestRequestBodiesDocument415(t *testing.T) {
	doc := loadDoc(t)
	n := 0
	for k, op := range docOperations(doc) {
		_, body := op["requestBody"]
		responses := op["responses"].(map[string]any)
		r415, has := responses["415"].(map[string]any)
		switch {
		case body && !has:
			t.Errorf("%s takes a body but does not document 415", k)
		case !body && has:
			t.Errorf("%s takes no body but documents 415", k)
		case has:
			n++
			if r415["$ref"] != "#/components/responses/UnsupportedMediaType" {
				t.Errorf("%s 415 is %v, want the UnsupportedMediaType component", k, r415)
			}
			if _, ok := responses["413"]; !ok {
				t.Errorf("%s takes a body but does not document 413", k)
			}
		}
	}
	if n == 0 {
		t.Fatal("no operation documents 415")
	}
	resp := deref(t, doc, map[string]any{"$ref": "#/components/responses/UnsupportedMediaType"})
	if h, _ := resp["headers"].(map[string]any)["Accept-Encoding"].(map[string]any); h["$ref"] != "#/components/headers/AcceptEncoding" {
		t.Errorf("415 Accept-Encoding is %v", h)
	}
}

func TestErrorCodes(t *testing.T) {
	doc := loadDoc(t)
	codes := doc["components"].(map[string]any)["schemas"].(map[string]any)["ErrorCode"].(map[string]any)["enum"]
	want := []any{
		// Aviso's error bodies (docs/api.md)
		"INVALID_JSON", "UNKNOWN_FIELD", "INVALID_REQUEST_SHAPE", "UNKNOWN_EVENT_TYPE",
		"INVALID_NOTIFICATION_REQUEST", "INVALID_WATCH_REQUEST", "INVALID_REPLAY_REQUEST",
		"UNAUTHORIZED", "FORBIDDEN",
		// herald
		"REQUEST_TIMEOUT", "PAYLOAD_TOO_LARGE", "TOO_MANY_STREAMS",
		// Aviso's error bodies (docs/api.md)
		"NOTIFICATION_PROCESSING_FAILED", "NOTIFICATION_STORAGE_FAILED",
		"SSE_STREAM_INITIALIZATION_FAILED", "INTERNAL_ERROR", "SERVICE_UNAVAILABLE",
		// herald: routing, decompression, authentication, sessions, reload
		"NOT_FOUND", "METHOD_NOT_ALLOWED", "UNSUPPORTED_MEDIA_TYPE", "INVALID_AUTHORIZATION_HEADER",
		"INVALID_REQUEST", "CONFIG_INVALID", "RELOAD_REFUSED", "NOT_IMPLEMENTED",
	}
	if !reflect.DeepEqual(codes, want) {
		t.Fatalf("ErrorCode enum\n got %v\nwant %v", codes, want)
	}
}

func TestSecurity(t *testing.T) {
	doc := loadDoc(t)
	wantTop := []any{map[string]any{}, map[string]any{"bearerAuth": []any{}}, map[string]any{"basicAuth": []any{}}}
	if !reflect.DeepEqual(doc["security"], wantTop) {
		t.Fatalf("top-level security = %v, want %v (credentials optional)", doc["security"], wantTop)
	}
	schemes := doc["components"].(map[string]any)["securitySchemes"].(map[string]any)
	for name, scheme := range map[string]string{"bearerAuth": "bearer", "basicAuth": "basic"} {
		s := schemes[name].(map[string]any)
		if s["type"] != "http" || s["scheme"] != scheme {
			t.Errorf("securitySchemes.%s = %v, want http %s", name, s, scheme)
		}
	}
	for k, op := range docOperations(doc) {
		sec, has := op["security"]
		switch {
		case publicRoutes[k] && !(has && reflect.DeepEqual(sec, []any{})):
			t.Errorf("%s: security = %v, want [] (never needs credentials)", k, sec)
		case !publicRoutes[k] && has:
			t.Errorf("%s: security = %v, want the top-level optional requirement", k, sec)
		}
	}
}

// TestAuthResponses checks the headers of the authentication and admission
// answers: every 401 offers WWW-Authenticate, every 429 and 503 says
// Retry-After (both headers always sent, so required; /health's 503 asks
// for a restart, not a retry), every route that authenticates documents
// 401, 403 and 503, and the public routes document none of them.
func TestAuthResponses(t *testing.T) {
	doc := loadDoc(t)
	headers := doc["components"].(map[string]any)["headers"].(map[string]any)
	for _, name := range []string{"RetryAfter", "WWWAuthenticate"} {
		if h, _ := headers[name].(map[string]any); h["required"] != true {
			t.Errorf("components.headers.%s is not required", name)
		}
	}
	authStatuses := []string{"401", "403", "429", "503"}
	for k, op := range docOperations(doc) {
		responses := op["responses"].(map[string]any)
		for code, r := range responses {
			resp := deref(t, doc, r)
			h, _ := resp["headers"].(map[string]any)
			want := map[string]string{}
			switch code {
			case "401":
				want["WWW-Authenticate"] = "#/components/headers/WWWAuthenticate"
			case "429", "503":
				if !((k == "GET /health" || k == "HEAD /health") && code == "503") {
					want["Retry-After"] = "#/components/headers/RetryAfter"
				}
			}
			for name, ref := range want {
				if x, _ := h[name].(map[string]any); x["$ref"] != ref {
					t.Errorf("%s %s: %s is %v, want the %s component", k, code, name, h[name], ref)
				}
			}
			// The 503 of /ready and /health is the backend's state, not
			// authentication.
			backend := code == "503" && (k == "GET /ready" || k == "GET /health" || k == "HEAD /ready" || k == "HEAD /health")
			if publicRoutes[k] && slices.Contains(authStatuses, code) && !backend {
				t.Errorf("%s never authenticates but documents %s", k, code)
			}
		}
		if !publicRoutes[k] {
			for _, code := range []string{"401", "403", "503"} {
				if _, ok := responses[code]; !ok {
					t.Errorf("%s authenticates but does not document %s", k, code)
				}
			}
		}
	}
}

// sseEvent is one parsed Server-Sent Event of an example stream.
type sseEvent struct {
	Event string `json:"event"`
	Data  any    `json:"data"`
}

// parseSSE parses a stream in herald's exact framing: `event: <name>`,
// `data: <one line of JSON>`, blank line, nothing else.
func parseSSE(s string) ([]sseEvent, error) {
	if !strings.HasSuffix(s, "\n\n") {
		return nil, fmt.Errorf("stream does not end with a blank line")
	}
	var out []sseEvent
	for i, block := range strings.Split(strings.TrimSuffix(s, "\n\n"), "\n\n") {
		lines := strings.Split(block, "\n")
		if len(lines) != 2 || !strings.HasPrefix(lines[0], "event: ") || !strings.HasPrefix(lines[1], "data: ") {
			return nil, fmt.Errorf("event %d is not `event:` + `data:`: %q", i, block)
		}
		ev := sseEvent{Event: strings.TrimPrefix(lines[0], "event: ")}
		if err := json.Unmarshal([]byte(strings.TrimPrefix(lines[1], "data: ")), &ev.Data); err != nil {
			return nil, fmt.Errorf("event %d data: %v", i, err)
		}
		out = append(out, ev)
	}
	return out, nil
}

func TestExamplesMatchSchemas(t *testing.T) {
	doc := loadDoc(t)
	v := openapitest.NewValidator(doc)
	var schemaExamples, mediaExamples, streamExamples, streamEvents, paramExamples int
	check := func(at string, schema, value any) {
		for _, e := range v.Validate(schema, value, at) {
			t.Error(e)
		}
	}
	walk(doc, "#", func(at string, node any) {
		m, ok := node.(map[string]any)
		if !ok {
			return
		}
		switch ex := m["examples"].(type) {
		case []any: // a schema's own examples
			for i, e := range ex {
				check(fmt.Sprintf("%s/examples/%d", at, i), m, e)
				schemaExamples++
			}
		case map[string]any: // a media type's named examples
			schema, ok := m["schema"]
			if !ok {
				t.Errorf("%s: examples without a schema", at)
				return
			}
			for name, e := range ex {
				val := deref(t, doc, e)["value"]
				where := at + "/examples/" + name
				if !strings.HasSuffix(at, "/text~1event-stream") {
					check(where, schema, val)
					mediaExamples++
					continue
				}
				stream := deref(t, doc, schema)
				check(where, stream, val)
				events, err := parseSSE(val.(string))
				if err != nil {
					t.Errorf("%s: %v", where, err)
					continue
				}
				if len(events) == 0 || events[len(events)-1].Event != "connection-closing" {
					t.Errorf("%s: the stream does not end with connection-closing", where)
				}
				for i, ev := range events {
					raw, _ := json.Marshal(ev)
					var generic any
					_ = json.Unmarshal(raw, &generic)
					check(fmt.Sprintf("%s event %d", where, i), stream["contentSchema"], generic)
					streamEvents++
				}
				streamExamples++
			}
		}
		if e, ok := m["example"]; ok {
			schema, ok := m["schema"]
			if !ok {
				t.Errorf("%s: example without a schema", at)
				return
			}
			check(at+"/example", schema, e)
			paramExamples++
		}
	})
	for name, n := range map[string]int{"schema": schemaExamples, "media type": mediaExamples,
		"stream": streamExamples, "stream event": streamEvents, "parameter/header": paramExamples} {
		if n == 0 {
			t.Errorf("no %s examples were checked", name)
		}
	}
}

// TestValidatorRejects makes sure the example check can fail: a few wrong
// values against document schemas.
func TestValidatorRejects(t *testing.T) {
	doc := loadDoc(t)
	v := openapitest.NewValidator(doc)
	cases := []struct {
		schema string
		value  string
		errs   int
	}{
		{"ErrorBody", `{"code":"NOPE","error":"x","message":"m","details":"d","request_id":"3f1c9a6e-8b2d-4e57-9a41-0c6d2b7e5f18"}`, 1},
		{"ErrorBody", `{"code":"INVALID_JSON","error":"x","message":"m","details":"d"}`, 1},
		{"ErrorBody", `{"code":"UNAUTHORIZED","error":"unauthorized","message":"m","request_id":"3f1c9a6e-8b2d-4e57-9a41-0c6d2b7e5f18"}`, 1},
		// The bodies of authentication and admission answers: code and
		// error fixed, one of the response's messages, no details.
		{"UnauthorizedBody", `{"code":"UNAUTHORIZED","error":"unauthorized","message":"Invalid or expired token","request_id":"3f1c9a6e-8b2d-4e57-9a41-0c6d2b7e5f18"}`, 0},
		{"UnauthorizedBody", `{"code":"UNAUTHORIZED","error":"unauthorized","message":"m","request_id":"3f1c9a6e-8b2d-4e57-9a41-0c6d2b7e5f18"}`, 1},
		{"TooManyStreamsBody", `{"code":"TOO_MANY_STREAMS","error":"too_many_requests","message":"user 'bob' already has 1 open streams, the limit; close one or retry later","request_id":"3f1c9a6e-8b2d-4e57-9a41-0c6d2b7e5f18"}`, 0},
		{"StreamForbiddenBody", `{"code":"FORBIDDEN","error":"forbidden","message":"Token validation was denied","details":"m","request_id":"3f1c9a6e-8b2d-4e57-9a41-0c6d2b7e5f18"}`, 1},
		{"StreamForbiddenBody", `{"code":"FORBIDDEN","error":"unauthorized","message":"Token validation was denied","request_id":"3f1c9a6e-8b2d-4e57-9a41-0c6d2b7e5f18"}`, 1},
		{"UnauthorizedBody", `{"code":"INVALID_JSON","error":"unauthorized","message":"Invalid or expired token","request_id":"3f1c9a6e-8b2d-4e57-9a41-0c6d2b7e5f18"}`, 1},
		// The discriminated 400 of notify: the code selects the body.
		{"NotifyBadRequest", `{"code":"UNKNOWN_EVENT_TYPE","error":"unknown_event_type","message":"unknown event type 'x'","configured_event_types":[],"request_id":"3f1c9a6e-8b2d-4e57-9a41-0c6d2b7e5f18"}`, 0},
		{"NotifyBadRequest", `{"code":"INVALID_WATCH_REQUEST","error":"Invalid Watch Request","message":"m","details":"m","request_id":"3f1c9a6e-8b2d-4e57-9a41-0c6d2b7e5f18"}`, 1},
		{"NotifyBadRequest", `{"code":"UNKNOWN_EVENT_TYPE","error":"x","message":"m","details":"m","request_id":"3f1c9a6e-8b2d-4e57-9a41-0c6d2b7e5f18"}`, 1},
		{"Request", `{"event_type":"x","identifier":{},"foo":1}`, 1},
		{"Request", `{"event_type":"x","identifier":{},"from_id":5}`, 1},
		{"SequenceCursor", `"x@5"`, 1},
		{"LatLon", `[91, 0]`, 1},
		{"LatLon", `[1, 2, 3]`, 1},
		{"Constraint", `{"gte":1,"lte":2}`, 1},
		{"WatchEvent", `{"event":"heartbeat","data":{"timestamp":"2025-07-06T12:00:00Z"}}`, 1},
		{"ReplayEvent", `{"event":"heartbeat","data":{"timestamp":"2025-07-06T12:00:00Z","topic":"t"}}`, 1},
		{"ReplayEvent", `{"event":"replay-control","data":{"type":"replay_completed","topic":"t","timestamp":"2025-07-06T12:00:00Z"}}`, 0},
	}
	for _, c := range cases {
		var val any
		if err := json.Unmarshal([]byte(c.value), &val); err != nil {
			t.Fatal(err)
		}
		schema := any(map[string]any{"$ref": "#/components/schemas/" + c.schema})
		if c.schema == "NotifyBadRequest" {
			schema = doc["paths"].(map[string]any)["/api/v1/notification"].(map[string]any)["post"].(map[string]any)["responses"].(map[string]any)["400"].(map[string]any)["content"].(map[string]any)["application/json"].(map[string]any)["schema"]
		}
		errs := v.Validate(schema, val, c.schema)
		if len(errs) != c.errs {
			t.Errorf("%s %s: %d errors %q, want %d", c.schema, c.value, len(errs), errs, c.errs)
		}
	}
}

func TestDocumentHandler(t *testing.T) {
	rec := httptest.NewRecorder()
	Document(rec, httptest.NewRequest(http.MethodGet, "/api-docs/openapi.json", nil))
	if rec.Code != http.StatusOK {
		t.Fatalf("status %d, want 200", rec.Code)
	}
	if ct := rec.Header().Get("Content-Type"); ct != "application/json" {
		t.Fatalf("Content-Type %q, want application/json", ct)
	}
	if !bytes.Equal(rec.Body.Bytes(), Spec()) {
		t.Fatal("served document differs from Spec()")
	}
}

func TestSpecReturnsCopy(t *testing.T) {
	a := Spec()
	a[0] = 'X'
	if b := Spec(); b[0] != '{' {
		t.Fatalf("Spec() shares its bytes: first byte %q after a caller's write", b[0])
	}
}

func TestOpIDsUnique(t *testing.T) {
	seen := map[string]bool{}
	for _, r := range routes {
		id := opID(r.method, r.path)
		if seen[id] {
			t.Errorf("section id %q is not unique", id)
		}
		seen[id] = true
	}
	if got := opID("GET", "/api/v1/schema/{event_type}"); got != "op-get-api-v1-schema--event-type-" {
		t.Errorf("opID = %q", got)
	}
}

func TestRenderPageRejectsBadDocuments(t *testing.T) {
	cases := []struct {
		doc  string
		want string
	}{
		{`{`, "unexpected end of JSON input"},
		{`{"info":{}}`, "no paths"},
		{`{"paths":[]}`, "paths: not a JSON object"},
		{`{"paths":{"/x":{"get":{"summary":1}}}}`, "get /x: json: cannot unmarshal number into Go struct field .summary of type string"},
	}
	for _, c := range cases {
		_, err := renderPage([]byte(c.doc))
		if err == nil || err.Error() != c.want {
			t.Errorf("renderPage(%s) error = %v, want %q", c.doc, err, c.want)
		}
	}
}

func TestOperationsOrderAndStatuses(t *testing.T) {
	doc := `{"paths":{"/b":{"delete":{"summary":"d","responses":{"500":{"description":"Broke. More."},"200":{"$ref":"#/components/responses/Ok"}}},"get":{"summary":"g"}},"/a":{"post":{"summary":"p"}}}}`
	ops, err := operations([]byte(doc))
	if err != nil {
		t.Fatal(err)
	}
	want := []operation{
		{Method: "GET", Path: "/b", Summary: "g"},
		{Method: "DELETE", Path: "/b", Summary: "d"},
		{Method: "POST", Path: "/a", Summary: "p"},
	}
	if !reflect.DeepEqual(ops, want) {
		t.Fatalf("operations\n got %+v\nwant %+v", ops, want)
	}
}
