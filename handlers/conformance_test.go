package handlers_test

import (
	"fmt"
	"net/http"
	"strings"
	"testing"

	"github.com/herald-gateway/herald/engine"
)

// TestAvisoConformance sends the requests where differential testing
// against aviso-server (0.7.1, then 0.13.1) found herald answering
// otherwise, and checks herald's answer now.
func TestAvisoConformance(t *testing.T) {
	s := startServer(t, testConfig+"  mars_x:\n    identifier:\n      a: {type: StringHandler, required: false}\n", nil)
	s.notify(t, `{"event_type":"mars","identifier":{"class":"od","expver":"1","domain":"g","date":"20250706","time":"12","stream":"enfo","step":1}}`)
	s.notify(t, `{"event_type":"dissemination","identifier":{"target":"t","date":"2025-07-06","polygon":[[0,0],[0,1],[1,1],[0,0]]},"payload":{"p":1}}`)

	t.Run("percent-encoded notification id", func(t *testing.T) {
		r := s.do(t, http.MethodDelete, "/api/v1/admin/notification/mars%401", "")
		if r.Status != http.StatusOK || r.Body["message"] != "Notification deleted" || r.Body["notification_id"] != "mars@1" {
			t.Fatalf("%d %s", r.Status, r.Raw)
		}
	})
	t.Run("percent-encoded event type", func(t *testing.T) {
		r := s.do(t, http.MethodGet, "/api/v1/schema/mars%5Fx", "")
		if r.Status != http.StatusOK || r.Body["event_type"] != "mars_x" {
			t.Fatalf("%d %s", r.Status, r.Raw)
		}
	})
	t.Run("wipe resolves an event type", func(t *testing.T) {
		// aviso-server 0.13: an event-type name (exact, else any case) is
		// resolved to its topic base (dissemination's is diss); the
		// answer repeats the name as sent.
		r := s.do(t, http.MethodDelete, "/api/v1/admin/wipe/stream", `{"stream_name":"DISSemination"}`)
		if r.Status != http.StatusOK || r.Body["success"] != true || r.Body["message"] != "Successfully wiped stream: DISSemination" {
			t.Fatalf("%d %s", r.Status, r.Raw)
		}
		st := s.open(t, "/api/v1/replay", `{"event_type":"dissemination","identifier":{},"from_id":"0"}`)
		if got := names(st.all(wait)); len(got) != 3 || got[1] != "replay-control:replay_completed" {
			t.Fatalf("the dissemination stream was not wiped: %v", got)
		}
		// Wiped, the in-memory stream holds nothing: 404 as in aviso
		// 0.13; the JetStream stream still exists and is purged again.
		want := http.StatusNotFound
		if _, memory := s.Engine.(*engine.Memory); !memory {
			want = http.StatusOK
		}
		if r := s.do(t, http.MethodDelete, "/api/v1/admin/wipe/stream", `{"stream_name":"dissemination"}`); r.Status != want {
			t.Fatalf("second wipe: %d %s", r.Status, r.Raw)
		}
	})
	t.Run("wipe of an unknown stream", func(t *testing.T) {
		r := s.do(t, http.MethodDelete, "/api/v1/admin/wipe/stream", `{"stream_name":"no-such-stream"}`)
		want := "Stream not found: no-such-stream. Known event types: cloud, dissemination, extreme, mars, mars_x"
		if r.Status != http.StatusNotFound || r.Body["success"] != false || r.Body["message"] != want {
			t.Fatalf("%d %s\nwant message %q", r.Status, r.Raw, want)
		}
	})
	t.Run("wipe keys are case-sensitive", func(t *testing.T) {
		r := s.do(t, http.MethodDelete, "/api/v1/admin/wipe/stream", `{"Stream_Name":"diss"}`)
		if r.Status != http.StatusBadRequest || r.Body["success"] != false {
			t.Fatalf("%d %s", r.Status, r.Raw)
		}
	})
	// The message is aviso-server 0.13's wording, the details herald's.
	for _, c := range []struct{ path, fromID, code, message, details string }{
		{"/api/v1/replay", " 7", "INVALID_REPLAY_REQUEST", "from_id must be a valid positive integer. Got: ' 7'. Valid examples: '1', '123', '9999'",
			`from_id: sequence " 7" has surrounding whitespace: send only the digits, "7"`},
		{"/api/v1/replay", "7 ", "INVALID_REPLAY_REQUEST", "from_id must be a valid positive integer. Got: '7 '. Valid examples: '1', '123', '9999'",
			`from_id: sequence "7 " has surrounding whitespace: send only the digits, "7"`},
		{"/api/v1/watch", "\\t1", "INVALID_WATCH_REQUEST", "from_id must be a valid positive integer. Got: '\t1'. Valid examples: '1', '123', '9999'",
			`from_id: sequence "\t1" has surrounding whitespace: send only the digits, "1"`},
	} {
		t.Run("from_id "+c.fromID, func(t *testing.T) {
			r := s.do(t, http.MethodPost, c.path, `{"event_type":"mars","identifier":{"class":"od"},"from_id":"`+c.fromID+`"}`)
			if r.Status != http.StatusBadRequest || r.Body["code"] != c.code || r.Body["message"] != c.message || r.Body["details"] != c.details {
				t.Fatalf("%d %s\nwant %q / %q", r.Status, r.Raw, c.message, c.details)
			}
		})
	}
	t.Run("large number in a string identifier", func(t *testing.T) {
		s.notify(t, `{"event_type":"extreme","identifier":{"region":1e16,"anomaly":1}}`)
		st := s.open(t, "/api/v1/replay", `{"event_type":"extreme","identifier":{"region":"1e+16"},"from_id":"0"}`)
		evs := st.all(wait)
		if len(evs) != 4 {
			t.Fatalf("events %v", names(evs))
		}
		ce := evs[1].Data
		ident := ce["data"].(map[string]any)["identifier"].(map[string]any)
		if ident["region"] != "1e+16" || evs[0].Data["topic"] != "extreme.1e+16.*" {
			t.Fatalf("identifier %v topic %v", ident, evs[0].Data["topic"])
		}
	})
	t.Run("payload number out of range", func(t *testing.T) {
		r := s.do(t, http.MethodPost, "/api/v1/notification", `{"event_type":"extreme","identifier":{"region":"r","anomaly":1},"payload":{"v":1e400}}`)
		if r.Status != http.StatusBadRequest || r.Body["code"] != "INVALID_JSON" ||
			r.Body["message"] != `JSON parsing failed: number out of range at line 1 column 85: "1e400" cannot be represented as a 64-bit float` {
			t.Fatalf("%d %s", r.Status, r.Raw)
		}
	})
	// Each element of a batch notify is answered as a notify of it: the
	// same code and message, in the batch's list of refusals.
	t.Run("batch elements as notify", func(t *testing.T) {
		for _, body := range []string{
			`{"event_type":"extreme","identifier":{"region":"r","anomaly":1},"payload":{"v":1e400}}`,
			`{"event_type":"extreme","identifier":{"region":"r","anomaly":1},"to_id":"3"}`,
			`{"event_type":"extreme","identifier":{"region":"r","anomaly":1},"to_date":"3"}`,
			`{"event_type":"mars","identifier":{"class":"od","class":"rd"}}`,
			`{"event_type":"nope","identifier":{}}`,
		} {
			single := s.do(t, http.MethodPost, "/api/v1/notification", body)
			batch := s.do(t, http.MethodPost, "/api/v1/notifications", `{"notifications":[`+body+`]}`)
			errs, _ := batch.Body["errors"].([]any)
			if single.Status != http.StatusBadRequest || batch.Status != http.StatusBadRequest || len(errs) != 1 {
				t.Fatalf("%s: notify %d %s, batch %d %s", body, single.Status, single.Raw, batch.Status, batch.Raw)
			}
			want := map[string]any{"index": 0.0, "code": single.Body["code"], "message": single.Body["message"]}
			if got := errs[0].(map[string]any); fmt.Sprint(got) != fmt.Sprint(want) {
				t.Fatalf("%s: batch refusal %v, notify's %v", body, got, want)
			}
		}
		before := s.do(t, http.MethodPost, "/api/v1/notifications", `{"notifications":[{"event_type":"extreme","identifier":{"region":1e16,"anomaly":1}}]}`)
		if before.Status != http.StatusOK || fmt.Sprint(before.Body["ids"]) != "[extreme@2]" {
			t.Fatalf("batch of a large number in a string identifier: %d %s", before.Status, before.Raw)
		}
		st := s.open(t, "/api/v1/replay", `{"event_type":"extreme","identifier":{"region":"1e+16"},"from_id":"2"}`)
		if got := names(st.all(wait)); len(got) != 4 || got[1] != "replay:extreme@2" {
			t.Fatalf("replay of the batch's notification: %v", got)
		}
	})
	// aviso-server 0.13: the end cursors belong to the request model, and
	// notify and watch refuse them with their own validation code.
	for _, key := range []string{"to_id", "to_date"} {
		t.Run(key+" on notify", func(t *testing.T) {
			r := s.do(t, http.MethodPost, "/api/v1/notification", `{"event_type":"extreme","identifier":{"region":"r","anomaly":1},"`+key+`":"3"}`)
			if r.Status != http.StatusBadRequest || r.Body["code"] != "INVALID_NOTIFICATION_REQUEST" ||
				r.Body["message"] != "to_id and to_date are only supported for the replay endpoint, not /notification" {
				t.Fatalf("%d %s", r.Status, r.Raw)
			}
		})
		t.Run(key+" on watch", func(t *testing.T) {
			r := s.do(t, http.MethodPost, "/api/v1/watch", `{"event_type":"extreme","identifier":{},"`+key+`":"3"}`)
			if r.Status != http.StatusBadRequest || r.Body["code"] != "INVALID_WATCH_REQUEST" ||
				r.Body["message"] != "to_id and to_date are only supported for the replay endpoint, not /watch" {
				t.Fatalf("%d %s", r.Status, r.Raw)
			}
		})
	}
}

// TestWhereOnWatchAndReplay: the herald `where` field selects
// notifications on watch and replay, typed by the schema; a bad one is a
// 400 naming the column.
func TestWhereOnWatchAndReplay(t *testing.T) {
	s := startServer(t, testConfig, nil)
	for step := 1; step <= 6; step++ {
		s.notify(t, fmt.Sprintf(`{"event_type":"mars","identifier":{"class":"od","expver":"1","domain":"g","date":"20250706","time":"12","stream":"enfo","step":%d}}`, step))
	}
	st := s.open(t, "/api/v1/replay", `{"event_type":"mars","identifier":{"class":"od"},"from_id":"0","where":"step >= 3 AND step NOT IN (5) AND expver = '0001'"}`)
	if got := strings.Join(names(st.all(wait)), " "); got != "replay-control:replay_started replay:mars@3 replay:mars@4 replay:mars@6 replay-control:replay_completed connection-closing:end_of_stream" {
		t.Fatalf("replay with where: %s", got)
	}
	live := s.open(t, "/api/v1/watch", `{"event_type":"mars","identifier":{"class":"od"},"where":"step > 10"}`)
	live.next(wait)
	s.notify(t, `{"event_type":"mars","identifier":{"class":"od","expver":"1","domain":"g","date":"20250706","time":"12","stream":"enfo","step":7}}`)
	s.notify(t, `{"event_type":"mars","identifier":{"class":"od","expver":"1","domain":"g","date":"20250706","time":"12","stream":"enfo","step":11}}`)
	if ev := live.skipBeats(wait); ev.Data["id"] != "mars@8" {
		t.Fatalf("live with where: %s %s", ev.Name, ev.Raw)
	}
	for _, c := range []struct{ path, body, code, message string }{
		{"/api/v1/watch", `{"event_type":"mars","identifier":{"class":"od"},"where":"step >"}`, "INVALID_WATCH_REQUEST",
			"where: column 7: expected a field name or a value, found end of the predicate"},
		{"/api/v1/replay", `{"event_type":"mars","identifier":{"class":"od"},"from_id":"0","where":"nope = 1"}`, "INVALID_REPLAY_REQUEST",
			"where: column 1: unknown field 'nope' for event type 'mars'; its fields are 'class', 'expver', 'domain', 'date', 'time', 'stream', 'step'"},
		{"/api/v1/notification", `{"event_type":"mars","identifier":{},"where":"step > 1"}`, "UNKNOWN_FIELD",
			"Request contains unknown fields: 'where' (allowed: event_type, identifier, from_id, from_date, to_id, to_date, payload)"},
	} {
		r := s.do(t, http.MethodPost, c.path, c.body)
		if r.Status != http.StatusBadRequest || r.Body["code"] != c.code || r.Body["message"] != c.message {
			t.Fatalf("%s: %d %s", c.body, r.Status, r.Raw)
		}
	}
}
