package handlers_test

import (
	"fmt"
	"strings"
	"testing"

	"github.com/herald-gateway/herald/configs"
)

// The tests of the session protocol's rule (docs/sessions.md) "the server
// never sends a frame above max_frame_bytes", with a small limit.

// frameLimit is max_frame_bytes in these tests.
const frameLimit = 4096

// limitsConfig adds to wsConfig an event type whose schema alone is
// larger than frameLimit (an enumeration of 1,000 values).
var limitsConfig = wsConfig + `  big:
    topic: {base: big, key_order: [v]}
    identifier:
      v: {type: EnumHandler, required: false, values: [` + bigValues() + `]}
`

func bigValues() string {
	vs := make([]string, 1000)
	for i := range vs {
		vs[i] = fmt.Sprintf("v%04d", i)
	}
	return strings.Join(vs, ", ")
}

// smallFrames sets max_frame_bytes to frameLimit and producer_max_batch
// to 70, the largest batch of "mars" whose reply fits (70 ids of 28
// bytes at most and 2048 bytes for the rest: 4008).
func smallFrames(c *configs.Config) {
	c.Session.MaxFrameBytes = frameLimit
	c.Session.ProducerMaxBatch = 70
}

// within reads the reply to a request and fails unless it is at most
// frameLimit bytes.
func (w *wsClient) within(op, fields string) (map[string]any, string) {
	w.t.Helper()
	id := w.request(op, fields)
	f, raw := w.nextRaw()
	if f["type"] != "reply" || f["id"] != id {
		w.t.Fatalf("%s: expected its reply, got %.300s", op, raw)
	}
	if len(raw) > frameLimit {
		w.t.Fatalf("%s: a reply of %d bytes: %.300s", op, len(raw), raw)
	}
	return f, raw
}

// exceeded checks a LIMIT_EXCEEDED reply with exactly msg.
func exceeded(t *testing.T, op string, f map[string]any, msg string) {
	t.Helper()
	e, _ := f["error"].(map[string]any)
	if f["ok"] != false || e["code"] != "LIMIT_EXCEEDED" || e["message"] != msg || len(f) != 4 {
		t.Fatalf("%s: %v\nwant LIMIT_EXCEEDED %q", op, f, msg)
	}
}

// rawReply returns the reply to a request as sent, on a server with the
// default limit: the size the small server refuses to send.
func rawReply(t *testing.T, op, fields string) string {
	t.Helper()
	s := startServer(t, limitsConfig, nil)
	c := s.dial(t, nil)
	c.welcome()
	c.request(op, fields)
	f, raw := c.nextRaw()
	if f["ok"] != true {
		t.Fatalf("%s %s on the default limit: %s", op, fields, raw)
	}
	return raw
}

// TestSessionFrameLimitReplies: schema, DESCRIBE and subscribe replies
// that would exceed max_frame_bytes are LIMIT_EXCEEDED naming the limit
// (a refused subscribe opens nothing); the ones that fit are answered.
func TestSessionFrameLimitReplies(t *testing.T) {
	list := rawReply(t, "schema", "")
	one := rawReply(t, "schema", `"event_type":"big"`)
	describe := rawReply(t, "execute", `"statement":"DESCRIBE EVENT TYPE big"`)
	// Generation 1 and boundary big@0 there; the check counts the
	// largest ones (20 digits each).
	subscribe := rawReply(t, "subscribe", `"name":"s","event_type":"big"`)
	if len(list) <= frameLimit || len(one) <= frameLimit || len(describe) <= frameLimit {
		t.Fatalf("the big replies are %d, %d and %d bytes: not above %d", len(list), len(one), len(describe), frameLimit)
	}

	s := startServer(t, limitsConfig, smallFrames)
	c := s.dial(t, nil)
	if lim := c.welcome()["limits"].(map[string]any); lim["max_frame_bytes"] != float64(frameLimit) {
		t.Fatalf("limits %v", lim)
	}
	f, _ := c.within("schema", "")
	exceeded(t, "schema", f, fmt.Sprintf(`the list of every schema would be %d bytes, above max_frame_bytes (4096): ask for one event type's schema with {"op":"schema","event_type":"<name>"} (GET /api/v1/schema serves the whole list)`, len(list)))
	f, _ = c.within("schema", `"event_type":"big"`)
	exceeded(t, "schema big", f, fmt.Sprintf("the schema of 'big' would be %d bytes, above max_frame_bytes (4096): GET /api/v1/schema/big serves it", len(one)))
	if f, _ := c.within("schema", `"event_type":"ev"`); f["ok"] != true {
		t.Fatalf("schema ev %v", f)
	}
	f, _ = c.within("execute", `"statement":"DESCRIBE EVENT TYPE big"`)
	exceeded(t, "describe big", f, fmt.Sprintf("the DESCRIBE EVENT TYPE reply would be %d bytes, above max_frame_bytes (4096): GET /api/v1/schema/big serves the schema", len(describe)))
	f, _ = c.within("subscribe", `"name":"s","event_type":"big"`)
	exceeded(t, "subscribe big", f, fmt.Sprintf("the subscribe reply (its name, topic and the event type's schema) would be %d bytes, above max_frame_bytes (4096): raise session.max_frame_bytes", len(subscribe)+19+19))
	f, _ = c.within("execute", `"statement":"CREATE SUBSCRIPTION s TO big"`)
	exceeded(t, "create subscription big", f, fmt.Sprintf("the subscribe reply (its name, topic and the event type's schema) would be %d bytes, above max_frame_bytes (4096): raise session.max_frame_bytes", len(subscribe)+19+19))
	// Nothing opened: the name is free and the generations start at 1.
	if f, _ := c.within("subscribe", `"name":"s","event_type":"ev"`); f["ok"] != true || f["generation"] != float64(1) {
		t.Fatalf("subscribe ev %v", f)
	}
}

// TestSessionFrameLimitNotAdmitted: a not_admitted reply lists the
// first errors that fit in max_frame_bytes and counts the others in
// errors_truncated; one whose errors all fit has no errors_truncated.
func TestSessionFrameLimitNotAdmitted(t *testing.T) {
	s := startServer(t, limitsConfig, smallFrames)
	c := s.dial(t, nil)
	c.welcome()
	c.ok("open_producer", `"producer":"p","event_type":"mars"`)
	bad := `{"identifier":{"class":"zz"}}`
	msg := `invalid value for identifier 'class': value \"zz\" is not allowed; allowed values (case-insensitive): od, rd`
	errorJSON := func(i int) string {
		return fmt.Sprintf(`{"index":%d,"code":"INVALID_NOTIFICATION_REQUEST","message":"%s"}`, i, msg)
	}
	// The expected reply listing the first k of n errors.
	expected := func(id, n, k int) string {
		errs := make([]string, k)
		for i := range errs {
			errs[i] = errorJSON(i)
		}
		truncated := ""
		if k < n {
			truncated = fmt.Sprintf(`,"errors_truncated":%d`, n-k)
		}
		return fmt.Sprintf(`{"type":"reply","id":%d,"ok":false,"error":{"code":"INVALID_NOTIFICATION_REQUEST","message":"%d of the batch's notifications are invalid; nothing was stored"},"errors":[%s]%s,"outcome":"not_admitted"}`,
			id, n, strings.Join(errs, ","), truncated)
	}
	for _, n := range []int{3, 70} {
		id := c.request("publish", `"producer":"p","batch":[`+strings.TrimSuffix(strings.Repeat(bad+",", n), ",")+`]`)
		_, raw := c.nextRaw()
		// The largest k whose reply fits.
		k := n
		for len(expected(int(id), n, k)) > frameLimit {
			k--
		}
		if want := expected(int(id), n, k); raw != want {
			t.Fatalf("%d invalid: got (%d bytes)\n%s\nwant (%d bytes, %d errors listed)\n%s", n, len(raw), raw, len(want), k, want)
		}
		if n == 70 && (k < 1 || k == n) {
			t.Fatalf("70 invalid: %d errors listed, the test does not truncate", k)
		}
	}
	// An error that alone does not fit (its message quotes a long key of
	// the element) is listed with its message cut to the limit.
	key := strings.Repeat("k", 5000)
	full := "unknown key '" + key + "': an element has identifier and payload"
	for _, n := range []int{1, 2} {
		batch := `{"` + key + `":1}`
		if n == 2 {
			batch += "," + bad
		}
		id := c.request("publish", `"producer":"p","batch":[`+batch+`]`)
		truncated := ""
		if n == 2 {
			truncated = `,"errors_truncated":1`
		}
		frame := func(m string) string {
			return fmt.Sprintf(`{"type":"reply","id":%d,"ok":false,"error":{"code":"INVALID_NOTIFICATION_REQUEST","message":"%d of the batch's notifications are invalid; nothing was stored"},"errors":[{"index":0,"code":"INVALID_REQUEST","message":"%s"}]%s,"outcome":"not_admitted"}`,
				int(id), n, m, truncated)
		}
		want := frame(full[:len(full)-(len(frame(full))-frameLimit)-len("…")] + "…")
		if _, raw := c.nextRaw(); raw != want || len(raw) != frameLimit {
			t.Fatalf("a long error of %d: got (%d bytes)\n%.300s…\nwant\n%.300s…", n, len(raw), raw, want)
		}
	}
}

// TestSessionFrameLimitIDs: open_producer refuses an event type whose
// full-batch reply could exceed max_frame_bytes; the reply of a full
// batch of one it accepts lists every id within the limit.
func TestSessionFrameLimitIDs(t *testing.T) {
	s := startServer(t, limitsConfig, smallFrames)
	c := s.dial(t, nil)
	c.welcome()
	// 70 ids of "dissemination" (37 bytes each at most) and 2048: 4638.
	f, _ := c.within("open_producer", `"producer":"d","event_type":"dissemination"`)
	exceeded(t, "open_producer dissemination", f, "the reply to a full batch (producer_max_batch, 70 ids of 'dissemination') could be 4638 bytes, above max_frame_bytes (4096)")
	c.ok("open_producer", `"producer":"p","event_type":"ev"`)
	one := `{"identifier":{"k":"a"}}`
	f, raw := c.within("publish", `"producer":"p","batch":[`+strings.TrimSuffix(strings.Repeat(one+",", 70), ",")+`]`)
	ids, _ := f["ids"].([]any)
	if f["ok"] != true || f["outcome"] != "completed" || len(ids) != 70 || ids[0] != "ev@1" || ids[69] != "ev@70" {
		t.Fatalf("full batch: %.300s", raw)
	}
}

// TestSessionFrameLimitEchoes: ids and names longer than 1024 bytes are
// refused before anything is done; an error message quoting a long
// value is shortened to fit, ending in "…".
func TestSessionFrameLimitEchoes(t *testing.T) {
	s := startServer(t, limitsConfig, smallFrames)
	c := s.dial(t, nil)
	c.welcome()
	long := `"` + strings.Repeat("i", 1023) + `"` // 1025 bytes as sent
	c.sendRaw(`{"id":` + long + `,"op":"notify","event_type":"ev","identifier":{"k":"a"}}`)
	if _, raw := c.nextRaw(); raw != `{"error":{"code":"INVALID_REQUEST","message":"the request's id is 1025 bytes long; an id is at most 1024 bytes (as sent), since every reply echoes it"},"type":"error"}` {
		t.Fatalf("long id: %s", raw)
	}
	id := `"` + strings.Repeat("i", 1022) + `"` // 1024 bytes: echoed
	c.sendRaw(`{"id":` + id + `,"op":"ping"}`)
	if f, raw := c.nextRaw(); f["ok"] != true || !strings.HasPrefix(raw, `{"type":"reply","id":`+id+`,"ok":true,`) {
		t.Fatalf("1024-byte id: %.100s", raw)
	}
	// Nothing of the refused notify was stored.
	c.ok("replay", `"name":"r","event_type":"ev","from_id":"1"`)
	if end := c.next(); end["type"] != "subscription_ended" || end["reason"] != "end_of_stream" {
		t.Fatalf("replay of ev: %v", end)
	}

	name := strings.Repeat("n", 1025)
	c.fails("subscribe", `"name":"`+name+`","event_type":"ev"`, "INVALID_REQUEST",
		"the subscription name is 1025 bytes long; a name is at most 1024 bytes, since every frame of the subscription carries it")
	c.fails("execute", `"statement":"CREATE SUBSCRIPTION `+name+` TO ev"`, "INVALID_REQUEST",
		"the subscription name is 1025 bytes long; a name is at most 1024 bytes, since every frame of the subscription carries it")
	c.fails("open_producer", `"producer":"`+name+`","event_type":"mars"`, "INVALID_REQUEST",
		"the producer name is 1025 bytes long; a name is at most 1024 bytes, since every frame about the producer carries it")
	if f, _ := c.within("subscribe", `"name":"`+name[1:]+`","event_type":"ev"`); f["ok"] != true {
		t.Fatalf("1024-byte name: %v", f)
	}

	// Messages that quote the request: cut to exactly the limit.
	cut := func(code, full string, id float64) string {
		whole := fmt.Sprintf(`{"type":"reply","id":%d,"ok":false,"error":{"code":"%s","message":"%s"}}`, int(id), code, full)
		keep := len(full) - (len(whole) - frameLimit) - len("…")
		return fmt.Sprintf(`{"type":"reply","id":%d,"ok":false,"error":{"code":"%s","message":"%s…"}}`, int(id), code, full[:keep])
	}
	et := strings.Repeat("e", 5000)
	id1 := c.request("notify", `"event_type":"`+et+`","identifier":{}`)
	if _, raw := c.nextRaw(); raw != cut("UNKNOWN_EVENT_TYPE", "unknown event type '"+et+"'", id1) || len(raw) != frameLimit {
		t.Fatalf("unknown long event type (%d bytes): %.200s…", len(raw), raw)
	}
	id2 := c.request("unsubscribe", `"name":"`+strings.Repeat("u", 5000)+`"`)
	if _, raw := c.nextRaw(); raw != cut("UNKNOWN_SUBSCRIPTION", "the session has no subscription named '"+strings.Repeat("u", 5000)+"'", id2) {
		t.Fatalf("unknown long subscription (%d bytes): %.200s…", len(raw), raw)
	}
}

// TestSessionFrameLimitEventsHeader: whether an event fits in an events
// frame counts the frame's header exactly, with the subscription's name
// as it is escaped (here control characters, 6 bytes each).
func TestSessionFrameLimitEventsHeader(t *testing.T) {
	s := startServer(t, limitsConfig, func(c *configs.Config) {
		smallFrames(c)
		c.Session.MaxFrameEvents = 1
	})
	name := strings.Repeat(`\u0001`, 50)
	header := len(`{"type":"events","sub":"`+name+`","gen":1,"phase":"history","events":[`) + len("]}")
	notify := func(pad int) {
		s.notify(t, fmt.Sprintf(`{"event_type":"ev","identifier":{"k":"k"},"payload":"%s"}`, strings.Repeat("x", pad)))
	}
	// A live subscription with that name, from the start.
	live := s.dial(t, nil)
	live.welcome()
	live.ok("subscribe", `"name":"`+name+`","event_type":"ev"`)
	// Each CloudEvent as sent, from a subscription with a short name.
	short := s.dial(t, nil)
	short.welcome()
	short.ok("subscribe", `"name":"s","event_type":"ev"`)
	sizes := map[string]int{}
	size := func() int {
		f, raw := short.nextRaw()
		if f["type"] != "events" {
			t.Fatalf("short name: %.200s", raw)
		}
		n := len(raw) - len(`{"type":"events","sub":"s","gen":1,"phase":"live","events":[]}`)
		sizes[eventIDs(f)[0]] = n
		return n
	}
	// CloudEvents around the size that just fits under that header: the
	// first one, without payload, measures the rest of a CloudEvent.
	notify(0)
	base := size()
	for i := -20; i <= 20; i++ {
		notify(frameLimit - header - base + i)
		size()
	}
	// Each event of ev@2… is sent if it fits under the header, skipped
	// if not: c reads n of them, in the given phase.
	check := func(c *wsClient, phase string, n int) {
		t.Helper()
		hdr := header
		if phase == "live" {
			hdr -= len("history") - len("live")
		}
		fits, skipped := 0, 0
		for fits+skipped < n {
			f, raw := c.nextRaw()
			if len(raw) > frameLimit {
				t.Fatalf("%s: a frame of %d bytes", phase, len(raw))
			}
			var id string
			switch {
			case f["type"] == "events" && f["phase"] == phase:
				id = eventIDs(f)[0]
				fits++
			case f["type"] == "skipped":
				id = fmt.Sprint(f["ids"].([]any)[0])
				skipped++
			default:
				t.Fatalf("%s: frame %.200s", phase, raw)
			}
			if want := hdr+sizes[id] <= frameLimit; (f["type"] == "events") != want {
				t.Fatalf("%s: %s, a %d-byte CloudEvent under a %d-byte header: got %s", phase, id, sizes[id], hdr, f["type"])
			}
		}
		if fits == 0 || skipped == 0 {
			t.Fatalf("%s: %d events sent, %d skipped: the sizes do not straddle the limit", phase, fits, skipped)
		}
	}
	if f := live.next(); f["type"] != "events" || eventIDs(f)[0] != "ev@1" {
		t.Fatalf("live: first frame %v", f)
	}
	check(live, "live", 41)
	c := s.dial(t, nil)
	c.welcome()
	c.ok("replay", `"name":"`+name+`","event_type":"ev","from_id":"2"`)
	check(c, "history", 41)
	if end := c.next(); end["type"] != "subscription_ended" || end["reason"] != "end_of_stream" {
		t.Fatalf("replay end %v", end)
	}
}
