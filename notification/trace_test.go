package notification

import (
	"encoding/json"
	"testing"
	"time"
)

// TestCloudEventTraceContext: a notification with a trace context
// renders it as the distributed tracing extension's attributes, in their
// alphabetical place between time and type; one without renders exactly
// as before (no attribute at all).
func TestCloudEventTraceContext(t *testing.T) {
	r := mustRegistry(t, registryYAML)
	s, _ := r.Lookup("mars")
	n, err := s.Notify(ident(t, `{"class":"OD","step":"007"}`), json.RawMessage(`{"a":1}`))
	if err != nil {
		t.Fatal(err)
	}
	at := time.Date(2025, 7, 6, 12, 0, 0, 0, time.UTC)
	const head = `{"data":{"identifier":{"class":"od","step":"7"},"payload":{"a":1}},"datacontenttype":"application/json","dataschema":"https://aviso.example/schema/mars","id":"mars@1","source":"https://aviso.example","specversion":"1.0","time":"2025-07-06T12:00:00Z"`
	const tp = "00-0af7651916cd43dd8448eb211c80319c-b7ad6b7169203331-01"
	for _, tc := range []struct {
		name, parent, state, want string
	}{
		{"none", "", "", head + `,"type":"int.ecmwf.aviso.mars"}`},
		{"traceparent", tp, "", head + `,"traceparent":"` + tp + `","type":"int.ecmwf.aviso.mars"}`},
		{"both", tp, "congo=t61rcWkgMzE,rojo=00f067aa0ba902b7", head + `,"traceparent":"` + tp + `","tracestate":"congo=t61rcWkgMzE,rojo=00f067aa0ba902b7","type":"int.ecmwf.aviso.mars"}`},
	} {
		t.Run(tc.name, func(t *testing.T) {
			m := *n
			m.TraceParent, m.TraceState = tc.parent, tc.state
			ce, err := r.CloudEvent(&m, 1, at)
			if err != nil {
				t.Fatal(err)
			}
			if string(ce) != tc.want {
				t.Fatalf("CloudEvent\n%s\nwant\n%s", ce, tc.want)
			}
			if !json.Valid(ce) {
				t.Fatal("not JSON")
			}
		})
	}
}
