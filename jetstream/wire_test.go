package jetstream

import (
	"context"
	"slices"
	"strconv"
	"strings"
	"testing"

	"github.com/nats-io/nats.go"

	"github.com/herald-gateway/herald/engine"
	"github.com/herald-gateway/herald/notification"
	"github.com/herald-gateway/herald/topic"
)

// awkward are token values that NATS cannot carry as they are.
var awkward = []struct {
	name, value, wire string
}{
	{"plain", "od", "od"},
	{"reserved", "1.5*>%", "1%2E5%2A%3E%25"},
	{"space", "new york", "new%20york"},
	{"tab", "a\tb", "a%09b"},
	{"newline and return", "a\r\nb", "a%0D%0Ab"},
	{"NUL and DEL", "a\x00b\x7f", "a%00b%7F"},
	{"form feed", "\f", "%0C"},
	{"replacement character", "x\uFFFDy", "x%EF%BF%BDy"},
	{"unicode", "Zürich 東京", "Zürich%20東京"},
	{"empty", "", "%"},
	{"lone percent", "%", "%25"},
}

func TestWireToken(t *testing.T) {
	for _, c := range awkward {
		got := string(appendWireToken(nil, c.value))
		if got != c.wire {
			t.Errorf("%s: wire %q, want %q", c.name, got, c.wire)
		}
		if strings.ContainsAny(got, " \t\r\n\f\x00") || got == "" {
			t.Errorf("%s: wire %q is not a valid NATS token", c.name, got)
		}
		back, err := decodeToken(got)
		if err != nil || back != c.value {
			t.Errorf("%s: decodeToken(%q) = %q, %v; want %q", c.name, got, back, err, c.value)
		}
	}
}

func TestDecodeSubject(t *testing.T) {
	for _, c := range []struct {
		wire      string
		tokens    []string
		canonical string
	}{
		{"mars.od.1", []string{"mars", "od", "1"}, "mars.od.1"},
		{"mars.1%2E5.a%20b", []string{"mars", "1.5", "a b"}, "mars.1%2E5.a b"},
		{"g.%.x", []string{"g", "", "x"}, "g..x"},
		{"g.%2e", []string{"g", "."}, "g.%2E"}, // non-canonical input is canonicalised
	} {
		tokens, canonical, err := decodeSubject(c.wire)
		if err != nil || !slices.Equal(tokens, c.tokens) || canonical != c.canonical {
			t.Errorf("decodeSubject(%q) = %q, %q, %v; want %q, %q", c.wire, tokens, canonical, err, c.tokens, c.canonical)
		}
		if w := wireSubject(c.tokens); !strings.EqualFold(w, c.wire) {
			t.Errorf("wireSubject(%q) = %q, want %q", c.tokens, w, c.wire)
		}
	}
	if _, _, err := decodeSubject("g.%zz"); err == nil {
		t.Error("decodeSubject accepted a bad escape")
	}
}

func TestWireFilter(t *testing.T) {
	for _, c := range []struct {
		q    engine.Query
		want string
		ok   bool
	}{
		{query("mars", "od", "*", "a b"), "mars.od.*.a%20b", true},
		{query("mars"), "mars", true},
		{query("mars", "*", ""), "mars.*.%", true},
		{engine.Query{Stream: "mars"}, "", true},
		{query("diss", "x"), "", false},
	} {
		q := c.q
		if !c.ok {
			q.Stream = "mars"
		}
		got, ok := historyFilter(q)
		if got != c.want || ok != c.ok {
			t.Errorf("historyFilter(%v) = %q, %v; want %q, %v", q.Filter, got, ok, c.want, c.ok)
		}
	}
}

// TestAwkwardValues stores values with spaces, control characters and
// empty tokens, and checks that history, live delivery and exact-value
// filters all see the canonical tokens.
func TestAwkwardValues(t *testing.T) {
	e := open(t, testOptions(t))
	ctx := context.Background()
	all, err := e.Subscribe(ctx, query("gen", "*"), engine.SubscribeOptions{})
	if err != nil {
		t.Fatal(err)
	}
	defer all.Close()
	for i, c := range awkward {
		n := note("gen", c.value)
		n.Identifier = map[string]string{"k": c.value}
		if seq := mustPublish(t, e, n); seq != uint64(i+1) {
			t.Fatalf("%s: seq %d, want %d", c.name, seq, i+1)
		}
	}
	recs := readAll(t, e, query("gen", "*"), everything, 100)
	if len(recs) != len(awkward) {
		t.Fatalf("history has %d records, want %d", len(recs), len(awkward))
	}
	for i, c := range awkward {
		r := recs[i]
		want := []string{"gen", c.value}
		if !slices.Equal(r.Tokens, want) || r.Subject != topic.Encode(want) || r.Identifier["k"] != c.value {
			t.Errorf("%s: record tokens %q subject %q identifier %q; want %q %q", c.name, r.Tokens, r.Subject, r.Identifier, want, topic.Encode(want))
		}
		got := readAll(t, e, query("gen", c.value), everything, 100)
		if len(got) != 1 || got[0].Seq != uint64(i+1) {
			t.Errorf("%s: exact filter found %v, want [%d]", c.name, seqs(got), i+1)
		}
		select {
		case live := <-all.C():
			if !slices.Equal(live.Tokens, want) {
				t.Errorf("%s: live tokens %q, want %q", c.name, live.Tokens, want)
			}
		case <-all.Done():
			t.Fatalf("subscription ended: %v", all.Err())
		}
	}
}

// TestBareBase stores a schema-less notification without identifier on
// the bare base subject: the lazily created stream holds it, a one-token
// pattern finds it and a longer one does not.
func TestBareBase(t *testing.T) {
	e := open(t, testOptions(t))
	n := &notification.Notification{EventType: "alerts", Subject: "alerts", Tokens: []string{"alerts"},
		Payload: []byte(`"hello"`), ContentType: "text/plain"}
	mustPublish(t, e, n)
	mustPublish(t, e, note("alerts", "x"))
	recs := readAll(t, e, query("alerts"), everything, 10)
	if len(recs) != 1 || recs[0].Seq != 1 || recs[0].Subject != "alerts" || recs[0].ContentType != "text/plain" || recs[0].EventType != "alerts" {
		t.Fatalf("bare base history = %+v", recs)
	}
	if got := seqs(readAll(t, e, query("alerts", "*"), everything, 10)); !slices.Equal(got, []uint64{2}) {
		t.Errorf("two-token history = %v, want [2]", got)
	}
	if got := seqs(readAll(t, e, engine.Query{Stream: "alerts"}, everything, 10)); !slices.Equal(got, []uint64{1, 2}) {
		t.Errorf("unfiltered history = %v, want [1 2]", got)
	}
	info, err := e.cur().js.Stream(context.Background(), "ALERTS")
	if err != nil {
		t.Fatal(err)
	}
	if got := info.CachedInfo().Config.Subjects; !slices.Equal(got, []string{"alerts", "alerts.>"}) {
		t.Errorf("subjects %v", got)
	}
}

// TestEventTypeHeader: a record carries its schema's event type without a
// header, and another event type through the header.
func TestEventTypeHeader(t *testing.T) {
	o := testOptions(t)
	o.Streams = append(o.Streams, StreamSpec{Base: "alert", EventType: "alert_v2"})
	e := open(t, o)
	a := note("alert", "eu")
	a.EventType = "alert_v2"
	b := note("alert", "us")
	b.EventType = "other"
	mustPublish(t, e, a)
	mustPublish(t, e, b)
	recs := readAll(t, e, query("alert", "*"), everything, 10)
	if len(recs) != 2 || recs[0].EventType != "alert_v2" || recs[1].EventType != "other" {
		t.Fatalf("event types %q", []string{recs[0].EventType, recs[1].EventType})
	}
	m, err := e.cur().js.Conn().Request("$JS.API.DIRECT.GET.ALERT", []byte(`{"seq":1}`), wait)
	if err != nil {
		t.Fatal(err)
	}
	if v := m.Header.Get(HeaderEventType); v != "" {
		t.Errorf("schema event type written as header %q", v)
	}
	if v := m.Header.Get(nats.MsgIdHdr); v == "" {
		t.Error("no Nats-Msg-Id header")
	}
}

// TestTraceContextHeaders: a notification's trace context is stored
// under herald's own header names (a NATS server takes a sampled
// traceparent header for its own message tracing) and read back; a
// message stored under the W3C names (development builds of 0.3.0)
// reads alike; a
// notification without one stores no trace header.
func TestTraceContextHeaders(t *testing.T) {
	e := open(t, testOptions(t))
	const tp = "00-0af7651916cd43dd8448eb211c80319c-b7ad6b7169203331-01"
	traced := note("alert", "eu")
	traced.TraceParent, traced.TraceState = tp, "vendor=x"
	mustPublish(t, e, traced)
	mustPublish(t, e, note("alert", "us"))
	js := e.cur().js
	legacy := &nats.Msg{Subject: "alert.fr", Data: []byte(`{}`), Header: nats.Header{legacyTraceParent: {tp}, legacyTraceState: {"vendor=y"}}}
	if _, err := js.PublishMsg(t.Context(), legacy); err != nil {
		t.Fatal(err)
	}
	recs := readAll(t, e, query("alert", "*"), everything, 10)
	if len(recs) != 3 {
		t.Fatalf("%d records, want 3", len(recs))
	}
	for i, want := range [][2]string{{tp, "vendor=x"}, {"", ""}, {tp, "vendor=y"}} {
		if recs[i].TraceParent != want[0] || recs[i].TraceState != want[1] {
			t.Errorf("record %d: trace context %q %q, want %q %q", i, recs[i].TraceParent, recs[i].TraceState, want[0], want[1])
		}
	}
	for seq, want := range map[int]nats.Header{1: {"Herald-Traceparent": {tp}, "Herald-Tracestate": {"vendor=x"}}, 2: {}} {
		m, err := js.Conn().Request("$JS.API.DIRECT.GET.ALERT", []byte(`{"seq":`+strconv.Itoa(seq)+`}`), wait)
		if err != nil {
			t.Fatal(err)
		}
		for _, k := range []string{"Herald-Traceparent", "Herald-Tracestate", "traceparent", "tracestate"} {
			if got, w := m.Header.Get(k), want.Get(k); got != w {
				t.Errorf("message %d: header %s = %q, want %q", seq, k, got, w)
			}
		}
	}
}
