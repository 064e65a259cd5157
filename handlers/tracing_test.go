package handlers_test

import (
	"context"
	"encoding/json"
	"net"
	"net/http"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/herald-gateway/herald/engine"
	"github.com/herald-gateway/herald/tracing"
	"github.com/herald-gateway/herald/tracing/tracingtest"
)

// startCollector starts an in-process OTLP collector and a tracer
// exporting to it every 10 ms.
func startCollector(t *testing.T) (*tracingtest.Collector, *tracing.Telemetry) {
	t.Helper()
	c := tracingtest.StartGRPC(t)
	tel, err := tracing.New(t.Context(), tracing.Options{Version: "test",
		Traces:         &tracing.TraceExport{Protocol: tracing.ProtocolGRPC, URL: "http://" + c.Endpoint(), SampleRatio: 1},
		ExportInterval: 10 * time.Millisecond})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
		defer cancel()
		_ = tel.Shutdown(ctx)
	})
	return c, tel
}

// spanNamed returns the spans called name.
func spansNamed(spans []tracingtest.Span, name string) []tracingtest.Span {
	var out []tracingtest.Span
	for _, s := range spans {
		if s.Name == name {
			out = append(out, s)
		}
	}
	return out
}

// linksTo reports whether s links to the span id of trace tid.
func linksTo(s tracingtest.Span, tid, sid string) bool {
	return slices.ContainsFunc(s.Links, func(l tracingtest.Link) bool { return l.TraceID == tid && l.SpanID == sid })
}

// marsIdent is a complete mars identifier but for its step.
const marsIdent = `"class":"od","expver":"1","domain":"g","date":"20250706","time":"12","stream":"enfo"`

// marsNotify is the body of a mars notify at step 1.
const marsNotify = `{"event_type":"mars","identifier":{` + marsIdent + `,"step":1},"payload":{"p":1}}`

const (
	publisherTrace  = "0af7651916cd43dd8448eb211c80319c"
	publisherParent = "00-" + publisherTrace + "-b7ad6b7169203331-01"
)

// TestTracingEndToEnd: a notify sent with a traceparent produces, in the
// collector, the server span, its publish span (producer, messaging
// attributes) and the store beneath it, and a delivery span of each
// subscriber (SSE watch, WebSocket subscription, SSE replay) linked to
// the publish span, all under the publisher's trace id; each
// subscriber's CloudEvent carries the publish span's traceparent and the
// publisher's tracestate. A session notify with traceparent fields
// continues that trace; a notify without one starts a trace and is
// still delivered with its traceparent.
func TestTracingEndToEnd(t *testing.T) {
	c, tel := startCollector(t)
	s := start(t, testConfig, startOptions{tracer: tel.Tracer()})
	watch := s.open(t, "/api/v1/watch", `{"event_type":"mars","identifier":{"class":"od"}}`)
	defer watch.close()
	if ev := watch.next(wait); ev.Data["type"] != "connection_established" {
		t.Fatalf("first event %s", ev.Raw)
	}
	ws := s.dial(t, nil)
	ws.welcome()
	ws.ok("subscribe", `"name":"s","event_type":"mars","identifier":{"class":"od"}`)

	req, err := http.NewRequest(http.MethodPost, s.URL+"/api/v1/notification",
		strings.NewReader(marsNotify))
	if err != nil {
		t.Fatal(err)
	}
	req.Header.Set("traceparent", publisherParent)
	req.Header.Set("tracestate", "vendor=abc")
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		t.Fatalf("notify: %d", resp.StatusCode)
	}

	spans := c.WaitSpans(t, wait, "the notify's spans", func(s []tracingtest.Span) bool {
		return len(spansNamed(s, "publish mars")) == 1 && len(spansNamed(s, "process mars")) == 2
	})
	srv := spansNamed(spans, "POST /api/v1/notification")
	pub := spansNamed(spans, "publish mars")[0]
	store := spansNamed(spans, "store mars")
	if len(srv) != 1 || srv[0].TraceID != publisherTrace || srv[0].ParentSpanID != "b7ad6b7169203331" || srv[0].Kind != tracingtest.KindServer {
		t.Fatalf("server spans %+v", srv)
	}
	if pub.TraceID != publisherTrace || pub.ParentSpanID != srv[0].SpanID || pub.Kind != tracingtest.KindProducer ||
		pub.Attributes["messaging.system"] != "herald" || pub.Attributes["messaging.destination.name"] != "mars" ||
		pub.Attributes["messaging.message.id"] != "mars@1" || pub.Attributes["messaging.message.body.size"] != int64(len(marsNotify)) {
		t.Fatalf("publish span %+v", pub)
	}
	if len(store) != 1 || store[0].ParentSpanID != pub.SpanID || store[0].TraceID != publisherTrace {
		t.Fatalf("store spans %+v, want one under %s", store, pub.SpanID)
	}
	transports := map[string]bool{}
	for _, d := range spansNamed(spans, "process mars") {
		if d.Kind != tracingtest.KindConsumer || !linksTo(d, publisherTrace, pub.SpanID) || d.Attributes["messaging.batch.message_count"] != int64(1) {
			t.Fatalf("delivery span %+v, want a consumer linked to %s", d, pub.SpanID)
		}
		transports[d.Attributes["herald.transport"].(string)] = true
	}
	if !transports["sse"] || !transports["websocket"] {
		t.Fatalf("delivery transports %v", transports)
	}

	wantParent := "00-" + publisherTrace + "-" + pub.SpanID + "-01"
	ev := watch.skipBeats(wait)
	if ev.Data["traceparent"] != wantParent || ev.Data["tracestate"] != "vendor=abc" {
		t.Fatalf("SSE CloudEvent %s, want traceparent %s", ev.Raw, wantParent)
	}
	f := ws.next()
	wsEv := f["events"].([]any)[0].(map[string]any)
	if wsEv["traceparent"] != wantParent || wsEv["tracestate"] != "vendor=abc" {
		t.Fatalf("WebSocket CloudEvent %v, want traceparent %s", wsEv, wantParent)
	}

	// Replay: a receive span linked to the same publish span, and the
	// same trace context in the replayed CloudEvent.
	replay := s.open(t, "/api/v1/replay", `{"event_type":"mars","identifier":{"class":"od"},"from_id":"1"}`)
	defer replay.close()
	evs := replay.all(wait)
	if len(evs) != 4 || evs[1].Data["traceparent"] != wantParent || evs[1].Data["tracestate"] != "vendor=abc" {
		t.Fatalf("replay events %v", names(evs))
	}
	spans = c.WaitSpans(t, wait, "the replay's receive span", func(s []tracingtest.Span) bool { return len(spansNamed(s, "receive mars")) == 1 })
	if r := spansNamed(spans, "receive mars")[0]; !linksTo(r, publisherTrace, pub.SpanID) || r.Attributes["herald.transport"] != "sse" {
		t.Fatalf("receive span %+v", r)
	}

	// A session notify with traceparent fields continues its trace.
	const sessionTrace = "11111111111111111111111111111111"
	r, _ := ws.replyAmid("notify", `"event_type":"mars","identifier":{`+marsIdent+`,"step":2},"payload":null,"traceparent":"00-`+sessionTrace+`-2222222222222222-01"`)
	if r["ok"] != true {
		t.Fatalf("session notify %v", r)
	}
	spans = c.WaitSpans(t, wait, "the session notify's publish span", func(s []tracingtest.Span) bool { return len(spansNamed(s, "publish mars")) == 2 })
	p2 := spansNamed(spans, "publish mars")[1]
	if p2.TraceID != sessionTrace || p2.ParentSpanID != "2222222222222222" || p2.Attributes["messaging.message.id"] != "mars@2" {
		t.Fatalf("session publish span %+v", p2)
	}
	if ev := watch.skipBeats(wait); ev.Data["traceparent"] != "00-"+sessionTrace+"-"+p2.SpanID+"-01" || ev.Data["tracestate"] != nil {
		t.Fatalf("SSE CloudEvent of the session notify %s", ev.Raw)
	}

	// Without incoming context herald starts the trace.
	s.notify(t, `{"event_type":"mars","identifier":{`+marsIdent+`,"step":3},"payload":null}`)
	ev = watch.skipBeats(wait)
	tp, _ := ev.Data["traceparent"].(string)
	if len(tp) != 55 || strings.Contains(tp, publisherTrace) || strings.Contains(tp, sessionTrace) || !strings.HasSuffix(tp, "-01") {
		t.Fatalf("CloudEvent of a notify without context: traceparent %q", tp)
	}
	c.WaitSpans(t, wait, "the new trace's publish span", func(s []tracingtest.Span) bool {
		return slices.ContainsFunc(spansNamed(s, "publish mars"), func(p tracingtest.Span) bool { return p.TraceID == tp[3:35] && p.SpanID == tp[36:52] })
	})
}

// TestNoTraceContextWithoutTracing: without tracing, a notify carrying a
// traceparent is stored and delivered exactly as without one: no
// traceparent in the stored record, nor in the CloudEvent on SSE,
// WebSocket and replay; a session notify's traceparent field is
// accepted and ignored.
func TestNoTraceContextWithoutTracing(t *testing.T) {
	s := startServer(t, testConfig, nil)
	watch := s.open(t, "/api/v1/watch", `{"event_type":"mars","identifier":{"class":"od"}}`)
	defer watch.close()
	if ev := watch.next(wait); ev.Data["type"] != "connection_established" {
		t.Fatalf("first event %s", ev.Raw)
	}
	ws := s.dial(t, nil)
	ws.welcome()
	ws.ok("subscribe", `"name":"s","event_type":"mars","identifier":{"class":"od"}`)
	req, err := http.NewRequest(http.MethodPost, s.URL+"/api/v1/notification",
		strings.NewReader(marsNotify))
	if err != nil {
		t.Fatal(err)
	}
	req.Header.Set("traceparent", publisherParent)
	req.Header.Set("tracestate", "vendor=abc")
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		t.Fatalf("notify: %d", resp.StatusCode)
	}
	r, before := ws.replyAmid("notify", `"event_type":"mars","identifier":{`+marsIdent+`,"step":2},"payload":null,"traceparent":"`+publisherParent+`"`)
	if r["ok"] != true {
		t.Fatalf("session notify %v", r)
	}
	for i := range 2 {
		ev := watch.skipBeats(wait)
		if strings.Contains(ev.Raw, "trace") {
			t.Fatalf("SSE CloudEvent %d carries trace context: %s", i, ev.Raw)
		}
	}
	// Both notifications reach subscription s, in one events frame or
	// two, before or after the notify's reply.
	events := 0
	for _, f := range before {
		raw, err := json.Marshal(f)
		if err != nil {
			t.Fatal(err)
		}
		if strings.Contains(string(raw), "trace") {
			t.Fatalf("WebSocket frame carries trace context: %s", raw)
		}
		events += len(eventIDs(f))
	}
	for events < 2 {
		f, raw := ws.nextRaw()
		if strings.Contains(raw, "trace") {
			t.Fatalf("WebSocket frame carries trace context: %s", raw)
		}
		events += len(eventIDs(f))
	}
	if events != 2 {
		t.Fatalf("subscription s got %d events, want 2", events)
	}
	replay := s.open(t, "/api/v1/replay", `{"event_type":"mars","identifier":{"class":"od"},"from_id":"1"}`)
	defer replay.close()
	for _, ev := range replay.all(wait) {
		if strings.Contains(ev.Raw, "trace") {
			t.Fatalf("replayed event carries trace context: %s", ev.Raw)
		}
	}
	rd, err := s.Engine.History(t.Context(), engine.Query{Stream: "mars"}, engine.Range{ToSeq: ^uint64(0)})
	if err != nil {
		t.Fatal(err)
	}
	defer rd.Close()
	recs, _, err := rd.Next(t.Context(), 10)
	if err != nil || len(recs) != 2 {
		t.Fatalf("history: %d records, %v", len(recs), err)
	}
	for _, rec := range recs {
		if rec.TraceParent != "" || rec.TraceState != "" {
			t.Fatalf("record %d stored with trace context %q %q", rec.Seq, rec.TraceParent, rec.TraceState)
		}
	}
}

// TestTracingCollectorDown: with the collector's address refusing
// connections, notifies are answered as without tracing (every one
// stored, none waiting for the export), and the failed exports are
// counted. (The exact count of dropped spans is tracing's test.)
func TestTracingCollectorDown(t *testing.T) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	addr := ln.Addr().String()
	ln.Close() // connections to addr are refused from now on
	tel, err := tracing.New(t.Context(), tracing.Options{
		Traces:        &tracing.TraceExport{Protocol: tracing.ProtocolGRPC, URL: "http://" + addr, SampleRatio: 1, MaxQueueSize: 4},
		ExportTimeout: time.Second})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = tel.Shutdown(context.Background()) })
	s := start(t, testConfig, startOptions{tracer: tel.Tracer()})
	start := time.Now()
	for i := range 50 {
		s.notify(t, `{"event_type":"mars","identifier":{`+marsIdent+`,"step":`+strconv.Itoa(i)+`},"payload":null}`)
	}
	if d := time.Since(start); d > 10*time.Second {
		t.Fatalf("50 notifies took %s with the collector down", d)
	}
	ctx, cancel := context.WithTimeout(context.Background(), wait)
	defer cancel()
	if err := tel.ForceFlush(ctx); err != nil {
		t.Fatal(err)
	}
	if tel.TraceExportFailures() == 0 || tel.TraceSpansExported() != 0 {
		t.Fatalf("export failures %d, exported %d; want failures and nothing exported", tel.TraceExportFailures(), tel.TraceSpansExported())
	}
}
