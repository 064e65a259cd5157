package openapi

import (
	"bytes"
	"encoding/json"
	"fmt"
	"net/http"
	"net/http/httptest"
	"reflect"
	"slices"
	"sort"
	"strings"
	"testing"

	"github.com/herald-gateway/herald/openapi/openapitest"
)

// sendMessages are the requests of the protocol (docs/sessions.md),
// in the order of handlers' opNames: the messages of operation send.
var sendMessages = []string{"auth", "ping", "schema", "notify", "subscribe", "unsubscribe", "replay", "execute", "open_producer", "publish", "close_producer"}

// receiveMessages are the frames a server sends: the messages of
// operation receive.
var receiveMessages = []string{"welcome", "reply_ok", "reply_error", "events", "batch", "history_completed", "dropped", "skipped",
	"subscription_ended", "producer_ended", "producer_suspended", "producer_resumed", "error"}

// loadAsyncDoc decodes the embedded AsyncAPI document.
func loadAsyncDoc(t *testing.T) map[string]any {
	t.Helper()
	var doc map[string]any
	dec := json.NewDecoder(bytes.NewReader(AsyncAPISpec()))
	if err := dec.Decode(&doc); err != nil {
		t.Fatalf("asyncapi.json is not valid JSON: %v", err)
	}
	if dec.More() {
		t.Fatal("asyncapi.json has data after the document")
	}
	return doc
}

// schemaKeywords are the keywords a schema of the AsyncAPI document may
// use: what the validator checks, and annotations. prefixItems is not
// among them: the AsyncAPI Schema Object is draft 07 (tuples are items
// arrays with additionalItems).
var schemaKeywords = map[string]bool{
	"$ref": true, "type": true, "const": true, "enum": true, "properties": true, "required": true,
	"additionalProperties": true, "items": true, "additionalItems": true, "minItems": true, "maxItems": true,
	"minProperties": true, "maxProperties": true, "minLength": true, "maxLength": true, "pattern": true,
	"minimum": true, "maximum": true, "oneOf": true, "anyOf": true, "allOf": true, "not": true,
	"description": true, "examples": true, "format": true, "title": true,
}

// walkSchema calls fn for every schema object inside schema (itself
// included), following the keywords that hold subschemas.
func walkSchema(schema any, at string, fn func(at string, s map[string]any)) {
	s, ok := schema.(map[string]any)
	if !ok {
		return
	}
	fn(at, s)
	if props, ok := s["properties"].(map[string]any); ok {
		for k, p := range props {
			walkSchema(p, at+"/properties/"+k, fn)
		}
	}
	switch it := s["items"].(type) {
	case []any:
		for i, x := range it {
			walkSchema(x, fmt.Sprintf("%s/items/%d", at, i), fn)
		}
	default:
		walkSchema(it, at+"/items", fn)
	}
	for _, k := range []string{"additionalProperties", "additionalItems", "not"} {
		walkSchema(s[k], at+"/"+k, fn)
	}
	for _, k := range []string{"oneOf", "anyOf", "allOf"} {
		alts, _ := s[k].([]any)
		for i, x := range alts {
			walkSchema(x, fmt.Sprintf("%s/%s/%d", at, k, i), fn)
		}
	}
}

// toDraft07 rewrites a 2020-12 schema of openapi.json the way the AsyncAPI
// document holds it: prefixItems with items become an items array with
// additionalItems.
func toDraft07(v any) any {
	switch x := v.(type) {
	case []any:
		out := make([]any, len(x))
		for i, e := range x {
			out[i] = toDraft07(e)
		}
		return out
	case map[string]any:
		out := map[string]any{}
		for k, e := range x {
			switch {
			case k == "prefixItems":
			case k == "items" && x["prefixItems"] != nil:
				out["items"] = toDraft07(x["prefixItems"])
				out["additionalItems"] = toDraft07(e)
			case k == "examples" || k == "description":
				out[k] = e
			case k == "properties":
				props := map[string]any{}
				for name, p := range e.(map[string]any) {
					props[name] = toDraft07(p)
				}
				out[k] = props
			default:
				out[k] = toDraft07(e)
			}
		}
		return out
	}
	return v
}

func TestAsyncAPIDocumentIs30(t *testing.T) {
	doc := loadAsyncDoc(t)
	if doc["asyncapi"] != "3.0.0" || doc["defaultContentType"] != "application/json" {
		t.Fatalf("asyncapi %v, defaultContentType %v; want 3.0.0 and application/json", doc["asyncapi"], doc["defaultContentType"])
	}
	info := doc["info"].(map[string]any)
	if info["title"] != "herald session protocol" || info["version"] != "1.0.0" {
		t.Errorf("info title/version %v/%v", info["title"], info["version"])
	}
	closes := []string{"1000", "1001", "1002", "1003", "1008", "1009"}

	// One server: the WebSocket endpoint.
	servers := doc["servers"].(map[string]any)
	if len(servers) != 1 {
		t.Fatalf("%d servers, want 1", len(servers))
	}
	for name, s := range servers {
		srv := s.(map[string]any)
		if srv["protocol"] != "ws" || srv["pathname"] != "/api/v1/session" || srv["protocolVersion"] != "13" {
			t.Errorf("server %s: protocol %v pathname %v version %v", name, srv["protocol"], srv["pathname"], srv["protocolVersion"])
		}
		if _, ok := srv["bindings"].(map[string]any)["ws"]; !ok {
			t.Errorf("server %s has no ws binding", name)
		}
		for _, c := range closes {
			if !strings.Contains(srv["description"].(string), "| "+c+" ") {
				t.Errorf("server %s: the description does not list close status %s", name, c)
			}
		}
	}

	// One channel: the connection, with the subprotocol in its binding.
	channels := doc["channels"].(map[string]any)
	if len(channels) != 1 {
		t.Fatalf("%d channels, want 1", len(channels))
	}
	ch := channels["session"].(map[string]any)
	ws := ch["bindings"].(map[string]any)["ws"].(map[string]any)
	proto := ws["headers"].(map[string]any)["properties"].(map[string]any)["Sec-WebSocket-Protocol"].(map[string]any)
	if ws["method"] != "GET" || proto["const"] != "herald.v1" || ws["bindingVersion"] != "0.1.0" {
		t.Errorf("channel ws binding %v", ws)
	}
	for _, c := range closes {
		if !strings.Contains(ch["description"].(string), "| "+c+" ") {
			t.Errorf("channel: the description does not list close status %s", c)
		}
	}
	chMsgs := ch["messages"].(map[string]any)
	var names []string
	for name, m := range chMsgs {
		names = append(names, name)
		if ref := m.(map[string]any)["$ref"]; ref != "#/components/messages/"+name {
			t.Errorf("channel message %s is %v, want a reference to #/components/messages/%s", name, m, name)
		}
	}
	want := append(slices.Clone(sendMessages), receiveMessages...)
	sort.Strings(names)
	sort.Strings(want)
	if !slices.Equal(names, want) {
		t.Errorf("channel messages\n got %q\nwant %q", names, want)
	}

	// Two operations: send (the requests) and receive (the server frames).
	ops := doc["operations"].(map[string]any)
	if len(ops) != 2 {
		t.Errorf("%d operations, want send and receive", len(ops))
	}
	for dir, list := range map[string][]string{openapitest.Send: sendMessages, openapitest.Receive: receiveMessages} {
		op := ops[dir].(map[string]any)
		if op["action"] != dir || op["channel"].(map[string]any)["$ref"] != "#/channels/session" {
			t.Errorf("operation %s: action %v channel %v", dir, op["action"], op["channel"])
		}
		var got []string
		for _, r := range op["messages"].([]any) {
			ref := r.(map[string]any)["$ref"].(string)
			got = append(got, strings.TrimPrefix(ref, "#/channels/session/messages/"))
		}
		if !slices.Equal(got, list) {
			t.Errorf("operation %s messages\n got %q\nwant %q", dir, got, list)
		}
		for _, name := range list {
			m := doc["components"].(map[string]any)["messages"].(map[string]any)[name].(map[string]any)
			if m["name"] != name || m["title"] == nil || m["summary"] == nil || m["contentType"] != "application/json" || m["payload"] == nil {
				t.Errorf("message %s: name %v title %v summary %v contentType %v", name, m["name"], m["title"], m["summary"], m["contentType"])
			}
			if exs, _ := m["examples"].([]any); len(exs) == 0 {
				t.Errorf("message %s has no example", name)
			}
			// The discriminator: a request's op is its message's name;
			// a server frame's type is its message's name (replies:
			// reply, told apart by ok).
			keys := openapitest.Discriminants(doc, m["payload"], openapitest.Discriminator(dir), 0)
			wantKey := strings.TrimPrefix(strings.TrimPrefix(name, "reply_ok"), "reply_error")
			if wantKey == "" {
				wantKey = "reply"
			}
			if !reflect.DeepEqual(keys, []any{wantKey}) {
				t.Errorf("message %s: %s %v, want %q", name, openapitest.Discriminator(dir), keys, wantKey)
			}
		}
	}
	reply := ops[openapitest.Send].(map[string]any)["reply"].(map[string]any)
	if fmt.Sprint(reply["messages"]) != "[map[$ref:#/channels/session/messages/reply_ok] map[$ref:#/channels/session/messages/reply_error]]" {
		t.Errorf("send's reply %v", reply)
	}

	// Every $ref resolves and every component is used.
	used := map[string]bool{}
	walk(doc, "#", func(at string, v any) {
		m, ok := v.(map[string]any)
		if !ok {
			return
		}
		ref, ok := m["$ref"].(string)
		if !ok {
			if _, has := m["$ref"]; has {
				t.Errorf("%s: $ref is not a string", at)
			}
			return
		}
		if _, err := openapitest.Pointer(doc, ref); err != nil {
			t.Errorf("%s: %v", at, err)
		}
		used[ref] = true
	})
	for kind, group := range doc["components"].(map[string]any) {
		for name := range group.(map[string]any) {
			if ref := "#/components/" + kind + "/" + name; !used[ref] {
				t.Errorf("%s is never referenced", ref)
			}
		}
	}

	// Schemas use only the keywords the validator checks, in draft 07
	// form; and the schemas shared with openapi.json are its own.
	schemas := doc["components"].(map[string]any)["schemas"].(map[string]any)
	for name, s := range schemas {
		walkSchema(s, "#/components/schemas/"+name, func(at string, s map[string]any) {
			for k := range s {
				if !schemaKeywords[k] {
					t.Errorf("%s: keyword %q", at, k)
				}
			}
		})
	}
	oa := loadDoc(t)["components"].(map[string]any)["schemas"].(map[string]any)
	shared := 0
	for name, s := range schemas {
		o, ok := oa[name]
		if !ok {
			continue
		}
		shared++
		if want := toDraft07(o); !reflect.DeepEqual(s, want) {
			got, _ := json.Marshal(s)
			w, _ := json.Marshal(want)
			t.Errorf("schema %s differs from openapi.json's:\n got %s\nwant %s", name, got, w)
		}
	}
	if shared < 10 {
		t.Errorf("only %d schemas are shared with openapi.json", shared)
	}

	// The welcome frame lists every limit of the session block (and the producer
	// defaults and the request size).
	limits := schemas["Limits"].(map[string]any)
	wantLimits := []string{"max_subscriptions", "max_producers", "max_producer_bytes", "producer_credit", "producer_max_batch",
		"session_queue_frames", "max_frame_events", "max_frame_bytes", "blocking_timeout_ms", "max_sessions_per_user", "max_request_bytes"}
	if fmt.Sprint(limits["required"]) != fmt.Sprint(wantLimits) || limits["additionalProperties"] != false {
		t.Errorf("Limits required %v, want %v", limits["required"], wantLimits)
	}
	if ref := schemas["Welcome"].(map[string]any)["properties"].(map[string]any)["limits"].(map[string]any)["$ref"]; ref != "#/components/schemas/Limits" {
		t.Errorf("welcome limits %v", ref)
	}

	// The enums of the protocol.
	enum := func(schema, prop string) []any {
		return schemas[schema].(map[string]any)["properties"].(map[string]any)[prop].(map[string]any)["enum"].([]any)
	}
	for _, c := range []struct {
		schema, prop string
		want         []string
	}{
		{"SubscriptionEnded", "reason", []string{"end_of_stream", "history_limit", "max_duration", "overflow", "gap", "schema_changed", "schema_removed", "server_shutdown", "unauthorized"}},
		{"EventsFrame", "phase", []string{"history", "live"}},
		{"Skipped", "reason", []string{"too_large", "unrenderable"}},
		{"ProducerEnded", "reason", []string{"protocol_violation", "schema_changed", "schema_removed"}},
		{"SubscribeRequest", "mode", []string{"blocking", "dropping"}},
		{"PublishFailedReply", "outcome", []string{"failed", "unknown"}},
	} {
		if got := enum(c.schema, c.prop); fmt.Sprint(got) != fmt.Sprint(c.want) {
			t.Errorf("%s.%s enum %v, want %v", c.schema, c.prop, got, c.want)
		}
	}
	// Every reply code of the protocol, and the HTTP API's codes only as
	// openapi.json lists them.
	codes := schemas["ReplyErrorCode"].(map[string]any)["enum"].([]any)
	for _, c := range []string{"INVALID_NOTIFICATION_REQUEST", "INVALID_WATCH_REQUEST", "INVALID_REPLAY_REQUEST", "UNKNOWN_EVENT_TYPE",
		"UNAUTHORIZED", "FORBIDDEN", "SERVICE_UNAVAILABLE", "INVALID_REQUEST", "DUPLICATE_NAME", "UNKNOWN_SUBSCRIPTION",
		"UNKNOWN_PRODUCER", "LIMIT_EXCEEDED", "CREDIT_EXCEEDED", "BUSY"} {
		if !slices.Contains(codes, any(c)) {
			t.Errorf("ReplyErrorCode lacks %s", c)
		}
	}
	httpCodes := oa["ErrorCode"].(map[string]any)["enum"].([]any)
	session := []any{"DUPLICATE_NAME", "UNKNOWN_SUBSCRIPTION", "UNKNOWN_PRODUCER", "LIMIT_EXCEEDED", "CREDIT_EXCEEDED", "BUSY"}
	for _, c := range codes {
		if !slices.Contains(httpCodes, c) && !slices.Contains(session, c) {
			t.Errorf("ReplyErrorCode %v is neither the HTTP API's nor the session's", c)
		}
	}
}

func TestAsyncAPIExamplesMatchSchemas(t *testing.T) {
	doc := loadAsyncDoc(t)
	v := openapitest.NewValidator(doc)
	messages := doc["components"].(map[string]any)["messages"].(map[string]any)
	n := 0
	for dir, list := range map[string][]string{openapitest.Send: sendMessages, openapitest.Receive: receiveMessages} {
		for _, name := range list {
			exs, _ := messages[name].(map[string]any)["examples"].([]any)
			for i, e := range exs {
				ex := e.(map[string]any)
				if ex["name"] == nil || ex["summary"] == nil {
					t.Errorf("message %s example %d has no name or summary", name, i)
				}
				frame, _ := json.Marshal(ex["payload"])
				got, err := sessionMessage(dir, frame)
				if err != nil || got != name {
					t.Errorf("message %s example %v: matched %q, %v", name, ex["name"], got, err)
				}
				n++
			}
		}
	}
	schemaExamples := 0
	for name, s := range doc["components"].(map[string]any)["schemas"].(map[string]any) {
		walkSchema(s, "#/components/schemas/"+name, func(at string, s map[string]any) {
			exs, _ := s["examples"].([]any)
			for i, e := range exs {
				for _, msg := range v.Validate(s, e, fmt.Sprintf("%s/examples/%d", at, i)) {
					t.Error(msg)
				}
				schemaExamples++
			}
		})
	}
	if n < len(sendMessages)+len(receiveMessages) || schemaExamples == 0 {
		t.Errorf("%d message examples and %d schema examples checked", n, schemaExamples)
	}
}

// TestCheckSessionFrameRejects makes sure the frame check can fail: frames
// the protocol does not have, or with a member too many, too few or of
// the wrong type.
func TestCheckSessionFrameRejects(t *testing.T) {
	welcome := `{"type":"welcome","session_id":"0b0d4c4e-52a7-4bb5-9a34-5f0c8a7d8e11","protocol":"herald.v1","server":"herald test","limits":{"max_subscriptions":32,"max_producers":32,"max_producer_bytes":33554432,"producer_credit":16,"producer_max_batch":1000,"session_queue_frames":1024,"max_frame_events":256,"max_frame_bytes":4194304,"blocking_timeout_ms":1000,"max_sessions_per_user":64,"max_request_bytes":1048576}}`
	event := `{"data":{"identifier":{"k":"a"},"payload":null},"datacontenttype":"application/json","dataschema":"http://localhost/schema/ev","id":"ev@1","source":"http://localhost","specversion":"1.0","time":"2025-07-06T12:00:00Z","type":"int.ecmwf.aviso.ev"}`
	cases := []struct {
		dir, frame, want string // want: the message name, or "" for a refusal
	}{
		{openapitest.Receive, welcome, "welcome"},
		{openapitest.Receive, strings.Replace(welcome, `"protocol":"herald.v1"`, `"protocol":"herald.v2"`, 1), ""},
		{openapitest.Receive, strings.Replace(welcome, `,"max_request_bytes":1048576`, ``, 1), ""},
		{openapitest.Receive, strings.Replace(welcome, `"max_request_bytes":1048576`, `"max_request_bytes":1048576,"more":1`, 1), ""},
		{openapitest.Receive, `{"type":"reply","id":1,"ok":true,"time":"2025-07-06T12:00:00.123456789Z"}`, "reply_ok"},
		{openapitest.Receive, `{"type":"reply","id":"a","ok":true,"name":"s1"}`, "reply_ok"},
		{openapitest.Receive, `{"type":"reply","id":1.5,"ok":true,"time":"2025-07-06T12:00:00Z"}`, ""},
		{openapitest.Receive, `{"type":"reply","id":1,"ok":true,"time":"x","extra":1}`, ""},
		{openapitest.Receive, `{"type":"reply","id":1,"ok":false,"error":{"code":"UNKNOWN_PRODUCER","message":"m"}}`, "reply_error"},
		{openapitest.Receive, `{"type":"reply","id":1,"ok":false,"error":{"code":"NOPE","message":"m"}}`, ""},
		{openapitest.Receive, `{"type":"reply","id":1,"ok":false,"error":{"code":"INVALID_REQUEST","message":"m"},"outcome":"completed"}`, ""},
		{openapitest.Receive, `{"type":"reply","id":1,"ok":false,"error":{"code":"INVALID_NOTIFICATION_REQUEST","message":"m"},"outcome":"not_admitted","errors":[{"index":0,"code":"INVALID_NOTIFICATION_REQUEST","message":"m"}]}`, "reply_error"},
		{openapitest.Receive, `{"type":"reply","id":1,"ok":false,"error":{"code":"SERVICE_UNAVAILABLE","message":"m"},"outcome":"failed","ids":[]}`, "reply_error"},
		{openapitest.Receive, `{"type":"reply","id":1,"ok":false,"error":{"code":"SERVICE_UNAVAILABLE","message":"m"},"outcome":"failed"}`, ""},
		{openapitest.Receive, `{"type":"events","sub":"s","gen":1,"phase":"live","events":[` + event + `]}`, "events"},
		{openapitest.Receive, `{"type":"events","sub":"s","gen":1,"phase":"later","events":[` + event + `]}`, ""},
		{openapitest.Receive, `{"type":"events","sub":"s","gen":1,"phase":"live","events":[]}`, ""},
		{openapitest.Receive, `{"type":"events","sub":"s","gen":0,"phase":"live","events":[` + event + `]}`, ""},
		{openapitest.Receive, `{"type":"events","sub":"s","gen":1,"phase":"live","events":[` + strings.Replace(event, `"ev@1"`, `"1"`, 1) + `]}`, ""},
		{openapitest.Receive, `{"type":"subscription_ended","sub":"s","gen":1,"reason":"overflow","resume_from_id":"ev@3"}`, "subscription_ended"},
		{openapitest.Receive, `{"type":"subscription_ended","sub":"s","gen":1,"reason":"bored"}`, ""},
		{openapitest.Receive, `{"type":"dropped","sub":"s","gen":1,"count":0}`, ""},
		{openapitest.Receive, `{"type":"skipped","sub":"s","gen":1,"ids":["ev@8"],"reason":"too_large"}`, "skipped"},
		{openapitest.Receive, `{"type":"producer_ended","producer":"p","reason":"protocol_violation"}`, "producer_ended"},
		{openapitest.Receive, `{"type":"error","error":{"code":"INVALID_REQUEST","message":"m"}}`, "error"},
		{openapitest.Receive, `{"type":"error","error":{"code":"INVALID_REQUEST"}}`, ""},
		{openapitest.Receive, `{"type":"hello"}`, ""},
		{openapitest.Receive, `{"id":1,"op":"ping"}`, ""},
		{openapitest.Receive, `[1]`, ""},
		{openapitest.Receive, `{"type":"error","error":{"code":"INVALID_REQUEST","message":"m"}} {}`, ""},
		{openapitest.Send, `{"id":1,"op":"ping"}`, "ping"},
		{openapitest.Send, `{"op":"ping"}`, ""},
		{openapitest.Send, `{"id":1,"op":"ping","x":1}`, ""},
		{openapitest.Send, `{"id":1,"op":"pong"}`, ""},
		{openapitest.Send, `{"id":1,"op":"subscribe","name":"s","event_type":"ev","mode":"dropping","from_id":"1"}`, "subscribe"},
		{openapitest.Send, `{"id":1,"op":"subscribe","name":"s","event_type":"ev","from_id":1}`, ""},
		{openapitest.Send, `{"id":1,"op":"subscribe","name":"s","event_type":"ev","from_id":"1","from_date":"2025-07-06T00:00:00Z"}`, ""},
		{openapitest.Send, `{"id":1,"op":"subscribe","name":"s","event_type":"ev","to_id":"1"}`, ""},
		{openapitest.Send, `{"id":1,"op":"replay","name":"s","event_type":"ev"}`, ""},
		{openapitest.Send, `{"id":1,"op":"replay","name":"s","event_type":"ev","from_id":"1","to_id":"2"}`, "replay"},
		{openapitest.Send, `{"id":1,"op":"auth","token":"t","basic":"b"}`, ""},
		{openapitest.Send, `{"id":1,"op":"publish","producer":"p","batch":[{"identifier":{"k":"a"},"extra":1}]}`, ""},
		{openapitest.Send, `{"id":1,"op":"publish","producer":"p","batch":[{"identifier":{"k":"a"},"payload":[1]}]}`, "publish"},
		{"sideways", `{"id":1,"op":"ping"}`, ""},
	}
	for _, c := range cases {
		got, err := sessionMessage(c.dir, []byte(c.frame))
		if c.want == "" && err == nil {
			t.Errorf("%s %s: accepted as %s", c.dir, c.frame, got)
		}
		if c.want != "" && (err != nil || got != c.want) {
			t.Errorf("%s %s: %q, %v; want %s", c.dir, c.frame, got, err, c.want)
		}
	}
}

func TestAsyncAPIDocumentHandler(t *testing.T) {
	rec := httptest.NewRecorder()
	AsyncAPIDocument(rec, httptest.NewRequest(http.MethodGet, AsyncAPIPath, nil))
	if rec.Code != http.StatusOK || rec.Header().Get("Content-Type") != "application/json" {
		t.Fatalf("status %d, Content-Type %q; want 200 application/json", rec.Code, rec.Header().Get("Content-Type"))
	}
	if !bytes.Equal(rec.Body.Bytes(), AsyncAPISpec()) {
		t.Fatal("served document differs from AsyncAPISpec()")
	}
	a := AsyncAPISpec()
	a[0] = 'X'
	if AsyncAPISpec()[0] != '{' {
		t.Fatal("AsyncAPISpec() shares its bytes")
	}
	// The docs page links it.
	rec = httptest.NewRecorder()
	DocsPage(rec, httptest.NewRequest(http.MethodGet, "/swagger-ui/", nil))
	if !strings.Contains(rec.Body.String(), `<a href="/api-docs/asyncapi.json">AsyncAPI 3.0 document</a>`) {
		t.Error("the docs page does not link the AsyncAPI document")
	}
}
