package notification

import (
	"encoding/json"
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/herald-gateway/herald/configs"
	"github.com/herald-gateway/herald/topic"
)

const registryYAML = `
application: {host: 127.0.0.1, port: 0, base_url: "https://aviso.example"}
notification_backend: {kind: in_memory}
notification_schema:
  mars:
    topic: {base: mars, key_order: [class, step]}
    identifier:
      class: {type: EnumHandler, values: [od, rd], required: true}
      step: {type: IntHandler, range: [0, 100], required: false}
  area:
    topic: {base: area, key_order: [name, polygon]}
    identifier:
      name: {type: StringHandler, required: true}
      polygon: {type: PolygonHandler, required: false}
  bare:
    identifier:
      b: {type: StringHandler, required: false}
      a: {type: StringHandler, required: false}
`

func mustRegistry(t testing.TB, yaml string) *Registry {
	t.Helper()
	cfg, err := configs.Parse([]byte(yaml), nil)
	if err != nil {
		t.Fatalf("config: %v", err)
	}
	r, err := NewRegistry(cfg)
	if err != nil {
		t.Fatalf("registry: %v", err)
	}
	return r
}

func ident(t testing.TB, s string) map[string]json.RawMessage {
	t.Helper()
	m := map[string]json.RawMessage{}
	if err := json.Unmarshal([]byte(s), &m); err != nil {
		t.Fatal(err)
	}
	return m
}

func TestRegistryHandlerParameterErrors(t *testing.T) {
	cases := []struct{ field, want string }{
		{`x: {type: IntHandler, range: [5, 1], required: true}`, "notification_schema.e.identifier.x (IntHandler, line "},
		{`x: {type: DateHandler, canonical_format: "%d/%m/%Y", required: true}`, "notification_schema.e.identifier.x (DateHandler, line "},
		{`x: {type: FloatHandler, range: [a, 1], required: true}`, "notification_schema.e.identifier.x (FloatHandler, line "},
	}
	for _, c := range cases {
		y := "application: {host: h, port: 0}\nnotification_backend: {kind: in_memory}\nnotification_schema:\n  e:\n    topic: {base: e, key_order: [x]}\n    identifier:\n      " + c.field + "\n"
		cfg, err := configs.Parse([]byte(y), nil)
		if err != nil {
			t.Fatalf("config %s: %v", c.field, err)
		}
		_, err = NewRegistry(cfg)
		if err == nil || !strings.HasPrefix(err.Error(), c.want) {
			t.Fatalf("%s: error %v, want prefix %q", c.field, err, c.want)
		}
	}
}

func TestNotifyAndRender(t *testing.T) {
	r := mustRegistry(t, registryYAML)
	s, err := r.Lookup("mars")
	if err != nil {
		t.Fatal(err)
	}
	n, err := s.Notify(ident(t, `{"class":"OD","step":"007"}`), json.RawMessage(`{ "a" : [1, 2] }`))
	if err != nil {
		t.Fatal(err)
	}
	if n.Subject != "mars.od.7" || string(n.Payload) != `{"a":[1,2]}` || n.ContentType != "application/json" {
		t.Fatalf("notification %+v", n)
	}
	at := time.Date(2025, 7, 6, 12, 0, 0, 5_000_000, time.UTC)
	ce, err := r.CloudEvent(n, 42, at)
	if err != nil {
		t.Fatal(err)
	}
	want := `{"data":{"identifier":{"class":"od","step":"7"},"payload":{"a":[1,2]}},"datacontenttype":"application/json","dataschema":"https://aviso.example/schema/mars","id":"mars@42","source":"https://aviso.example","specversion":"1.0","time":"2025-07-06T12:00:00.005Z","type":"int.ecmwf.aviso.mars"}`
	if string(ce) != want {
		t.Fatalf("CloudEvent\n%s\nwant\n%s", ce, want)
	}

	// A routed polygon: its token is the canonical array, and the
	// CloudEvent shows the geometry once.
	s, _ = r.Lookup("area")
	n, err = s.Notify(ident(t, `{"name":"a.b*","polygon":"(0,0,0,1,1,1,0,0)"}`), nil)
	if err != nil {
		t.Fatal(err)
	}
	if n.Subject != "area.a%2Eb%2A.[[0%2E0,0%2E0],[0%2E0,1%2E0],[1%2E0,1%2E0],[0%2E0,0%2E0]]" || string(n.Payload) != "null" {
		t.Fatalf("subject %q payload %q", n.Subject, n.Payload)
	}
	ce, _ = r.CloudEvent(n, 1, time.Unix(0, 0))
	if !strings.HasPrefix(string(ce), `{"data":{"identifier":{"name":"a.b*","polygon":[[0.0,0.0],[0.0,1.0],[1.0,1.0],[0.0,0.0]]},"payload":null}`) {
		t.Fatalf("area CloudEvent %s", ce)
	}

	// No topic block: fields routed in name order under the event name.
	s, _ = r.Lookup("bare")
	n, err = s.Notify(ident(t, `{"b":"2","a":"1"}`), json.RawMessage(`"text"`))
	if err != nil || n.Subject != "bare.1.2" {
		t.Fatalf("bare %v %+v", err, n)
	}
	ce, _ = r.CloudEvent(n, 3, time.Unix(0, 0))
	if !strings.HasPrefix(string(ce), `{"data":{"identifier":{"a":"1","b":"2"},"payload":"text"}`) {
		t.Fatalf("bare CloudEvent %s", ce)
	}
}

func TestGenericFallback(t *testing.T) {
	strict := mustRegistry(t, registryYAML)
	var ue *UnknownEventTypeError
	if _, err := strict.Lookup("other"); !errors.As(err, &ue) || strings.Join(ue.Configured, ",") != "area,bare,mars" {
		t.Fatalf("strict lookup: %v", err)
	}
	loose := mustRegistry(t, strings.Replace(registryYAML, "notification_schema:\n", "notification_schema_strict: false\nnotification_schema:\n", 1))
	s, err := loose.Lookup("legacy")
	if err != nil {
		t.Fatal(err)
	}
	n, err := s.Notify(ident(t, `{"z":"last","a":5}`), nil)
	if err != nil || n.Subject != "legacy.5.last" {
		t.Fatalf("generic notify %v %+v", err, n)
	}
	ce, err := loose.CloudEvent(n, 9, time.Unix(1, 0))
	want := `{"data":{"identifier":{"a":"5","z":"last"},"payload":null},"datacontenttype":"application/json","dataschema":"https://aviso.example/schema/legacy","id":"legacy@9","source":"https://aviso.example","specversion":"1.0","time":"1970-01-01T00:00:01Z","type":"int.ecmwf.aviso.legacy"}`
	if err != nil || string(ce) != want {
		t.Fatalf("generic CloudEvent %v\n%s\nwant\n%s", err, ce, want)
	}
	f, err := s.Filter(ident(t, `{"a":"5","z":"last"}`), OpWatch)
	if err != nil || !f.Match(n.Tokens, nil) || f.Pattern.Display() != "legacy.5.last" {
		t.Fatalf("generic filter %v", err)
	}
	for _, bad := range []string{"bad.name", "-x", ""} {
		if _, err := loose.Lookup(bad); err == nil {
			t.Fatalf("generic %q accepted", bad)
		}
	}
	if _, err := loose.Lookup("area"); err != nil {
		t.Fatalf("configured type in non-strict mode: %v", err)
	}
}

// TestNamesNeverNil: with no schema configured the event type list is
// empty, not nil, so that the schema list and the unknown-event-type error
// carry "event_types": [] / "configured_event_types": [] (Aviso's error and
// schema bodies, docs/api.md); pyaviso's client.schema() fails to decode null.
func TestNamesNeverNil(t *testing.T) {
	for _, yaml := range []string{
		"application: {host: 127.0.0.1, port: 0}\nnotification_backend: {kind: in_memory}\n",
		"application: {host: 127.0.0.1, port: 0}\nnotification_backend: {kind: in_memory}\nnotification_schema_strict: true\n",
	} {
		r := mustRegistry(t, yaml)
		names := r.Names()
		if b, err := json.Marshal(names); err != nil || string(b) != "[]" {
			t.Fatalf("Names() encodes as %s (%v), want []", b, err)
		}
		var ue *UnknownEventTypeError
		if _, err := r.Lookup("x"); r.Strict() && (!errors.As(err, &ue) || ue.Configured == nil) {
			t.Fatalf("strict lookup with no schema: %v (configured %#v)", err, ue)
		}
	}
	if got := mustRegistry(t, registryYAML).Names(); strings.Join(got, ",") != "area,bare,mars" {
		t.Fatalf("Names() = %v", got)
	}
}

func TestAppendTime(t *testing.T) {
	base := time.Date(2025, 1, 2, 3, 4, 5, 0, time.FixedZone("x", 3600))
	for _, c := range []struct {
		ns   int
		want string
	}{
		{0, "2025-01-02T02:04:05Z"},
		{120_000_000, "2025-01-02T02:04:05.120Z"},
		{123_456_000, "2025-01-02T02:04:05.123456Z"},
		{123_456_789, "2025-01-02T02:04:05.123456789Z"},
		{1, "2025-01-02T02:04:05.000000001Z"},
	} {
		if got := string(AppendTime(nil, base.Add(time.Duration(c.ns)))); got != c.want {
			t.Fatalf("%d: %s want %s", c.ns, got, c.want)
		}
	}
}

func TestAppendPayloadAndStrings(t *testing.T) {
	for _, c := range []struct{ in, want string }{
		{``, `null`},
		{`{"a":1}`, `{"a":1}`},
		{"{\n \"a\": 1\n}", `{"a":1}`},
		{`legacy text`, `"legacy text"`},
		{"tab\tand \"quote\" \u0001", `"tab\tand \"quote\" \u0001"`},
	} {
		if got := string(appendPayload(nil, []byte(c.in))); got != c.want {
			t.Fatalf("%q: %s want %s", c.in, got, c.want)
		}
	}
}

func FuzzParseRequest(f *testing.F) {
	for _, s := range []string{
		``, `{}`, `[]`, `{"event_type":"mars","identifier":{}}`,
		`{"event_type":"mars","identifier":{"a":1},"from_id":"5","payload":{"x":[1,2]}}`,
		`{"event_type":1}`, `{"foo":1}`, `{"event_type":"a","event_type":"b","identifier":{}}`,
		`{"event_type":"x","identifier":{"p":null},"from_date":null,"to_id":"3"}`,
		"{\"event_type\":\"\\ud800\",\"identifier\":{}}",
		`{"event_type":"mars","identifier":{"class":"od","class":"rd"}}`,
		`{"event_type":"mars","identifier":{"step":{"gte":1,"gte":5}}}`,
		`{"event_type":"mars","identifier":{},"payload":{"a":{"b":1,"b":2}}}`,
		`{"event_type":"mars","identifier":{"name":"` + strings.Repeat("日", 1400) + `"}}`,
	} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, body []byte) {
		req, err := ParseRequest(body)
		if err != nil {
			var pe *ParseError
			if !errors.As(err, &pe) || pe.Kind < InvalidJSON || pe.Kind > InvalidShape {
				t.Fatalf("error of wrong type %T: %v", err, err)
			}
			return
		}
		if req.Identifier == nil {
			t.Fatal("nil identifier on success")
		}
		if req.Payload != nil && !json.Valid(req.Payload) {
			t.Fatal("invalid payload accepted")
		}
	})
}

func FuzzNotify(f *testing.F) {
	r := mustRegistry(f, registryYAML)
	for _, s := range []string{`{"class":"od","step":1}`, `{"name":"x","polygon":[[0,0],[0,1],[1,1],[0,0]]}`, `{"a":"1","b":"2"}`, `{"class":{"eq":1}}`,
		`{"a":"` + strings.Repeat("x", 4100) + `"}`, `{"name":"` + strings.Repeat("日", 1400) + `"}`, `{"a":"` + strings.Repeat(".", 1100) + `"}`} {
		f.Add("mars", s)
		f.Add("area", s)
		f.Add("bare", s)
	}
	f.Fuzz(func(t *testing.T, et, body string) {
		s, err := r.Lookup(et)
		if err != nil {
			return
		}
		m := map[string]json.RawMessage{}
		if json.Unmarshal([]byte(body), &m) != nil {
			return
		}
		if f, err := s.Filter(m, OpWatch); err == nil && f.Pattern.SubjectLen() > topic.MaxSubjectBytes {
			t.Fatalf("filter of %d bytes accepted", f.Pattern.SubjectLen())
		}
		n, err := s.Notify(m, nil)
		if err != nil {
			var ve *ValidationError
			if !errors.As(err, &ve) {
				t.Fatalf("error of wrong type %T: %v", err, err)
			}
			return
		}
		if len(n.Subject) > topic.MaxSubjectBytes {
			t.Fatalf("subject of %d bytes accepted", len(n.Subject))
		}
		ce, err := r.CloudEvent(n, 1, time.Unix(0, 0))
		if err != nil || !json.Valid(ce) {
			t.Fatalf("render: %v %s", err, ce)
		}
		if _, err := s.Filter(m, OpWatch); err != nil && !strings.Contains(err.Error(), "identifier") {
			t.Fatalf("filter: %v", err)
		}
	})
}
