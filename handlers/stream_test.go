package handlers_test

import (
	"fmt"
	"net/http"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/herald-gateway/herald/configs"
)

func marsBody(step int, extra string) string {
	return fmt.Sprintf(`{"event_type":"mars","identifier":{"class":"od","expver":"1","domain":"g","date":"20250706","time":"0","stream":"enfo","step":%d}%s}`, step, extra)
}

func TestWatchLiveOnly(t *testing.T) {
	s := startServer(t, testConfig, nil)
	s.notify(t, marsBody(1, ""))
	st := s.open(t, "/api/v1/watch", `{"event_type":"mars","identifier":{"class":"od"}}`)
	first := st.next(wait)
	if first.Name != "live-notification" || first.Data["type"] != "connection_established" ||
		first.Data["request_id"] != st.resp.Header.Get("X-Request-ID") ||
		first.Data["topic"] != "mars.od.*.*.*.*.*.*" || first.Data["connection_will_close_in_seconds"] != float64(3600) {
		t.Fatalf("first event %s %s", first.Name, first.Raw)
	}
	for _, h := range []string{"Cache-Control:no-cache", "Connection:keep-alive", "Access-Control-Allow-Origin:*", "X-Accel-Buffering:no"} {
		k, v, _ := strings.Cut(h, ":")
		if st.resp.Header.Get(k) != v {
			t.Fatalf("header %s = %q", k, st.resp.Header.Get(k))
		}
	}
	beat := st.next(wait)
	if beat.Name != "heartbeat" || len(beat.Data) != 2 || beat.Data["topic"] != "mars.od.*.*.*.*.*.*" {
		t.Fatalf("second event %s %s", beat.Name, beat.Raw)
	}
	s.notify(t, marsBody(2, ""))
	ev := st.next(wait)
	if ev.Name != "live-notification" || ev.Data["id"] != "mars@2" {
		t.Fatalf("live event %s %s", ev.Name, ev.Raw)
	}
	s.Handlers.Shutdown()
	closing := st.next(wait)
	if closing.Name != "connection-closing" || closing.Data["reason"] != "server_shutdown" ||
		closing.Data["message"] != "Server is shutting down gracefully" || closing.Data["request_id"] != first.Data["request_id"] {
		t.Fatalf("closing %s", closing.Raw)
	}
	st.expectEnd(wait)
}

func TestWatchWithCursorThenLive(t *testing.T) {
	s := startServer(t, testConfig, nil)
	for i := 1; i <= 5; i++ {
		s.notify(t, marsBody(i, ""))
	}
	st := s.open(t, "/api/v1/watch", `{"event_type":"mars","identifier":{"class":"od","step":{"gte":2}},"from_id":"3"}`)
	first := st.next(wait)
	if first.Name != "replay-control" || first.Data["type"] != "replay_started" || first.Data["from_sequence"] != float64(3) ||
		first.Data["from_date"] != nil || first.Data["batch_size"] != float64(3) || first.Data["request_id"] != st.resp.Header.Get("X-Request-ID") {
		t.Fatalf("first %s", first.Raw)
	}
	if ev := st.next(wait); ev.Name != "heartbeat" {
		t.Fatalf("expected the immediate heartbeat, got %s", ev.Name)
	}
	var got []string
	for len(got) < 4 {
		ev := st.skipBeats(wait)
		got = append(got, names([]event{ev})[0])
		if ev.Name == "replay-control" {
			s.notify(t, marsBody(1, ""))  // filtered out by the constraint
			s.notify(t, marsBody(10, "")) // delivered live
		}
	}
	want := "replay:mars@3 replay:mars@4 replay:mars@5 replay-control:replay_completed"
	if strings.Join(got, " ") != want {
		t.Fatalf("got %s\nwant %s", strings.Join(got, " "), want)
	}
	if ev := st.skipBeats(wait); ev.Name != "live-notification" || ev.Data["id"] != "mars@7" {
		t.Fatalf("live %s %s", ev.Name, ev.Raw)
	}
}

func TestReplayCursorsAndFilters(t *testing.T) {
	s := startServer(t, testConfig, nil)
	for i := 1; i <= 6; i++ {
		s.notify(t, marsBody(i, ""))
	}
	s.notify(t, `{"event_type":"mars","identifier":{"class":"rd","expver":"prod","domain":"m","date":"20250707","time":"12:30","stream":"a.b","step":7}}`)
	cases := []struct{ name, body, want string }{
		{"all", `{"event_type":"mars","identifier":{"class":"od"},"from_id":"0"}`, "1 2 3 4 5 6"},
		{"from middle", `{"event_type":"mars","identifier":{"class":"od"},"from_id":"4"}`, "4 5 6"},
		{"plus sign", `{"event_type":"mars","identifier":{"class":"od"},"from_id":"+5"}`, "5 6"},
		{"past end", `{"event_type":"mars","identifier":{"class":"od"},"from_id":"100"}`, ""},
		{"to_id", `{"event_type":"mars","identifier":{"class":"od"},"from_id":"2","to_id":"4"}`, "2 3 4"},
		{"scalar int eq", `{"event_type":"mars","identifier":{"class":"od","step":4},"from_id":"0"}`, "4"},
		{"int in", `{"event_type":"mars","identifier":{"class":"od","step":{"in":[1,6]}},"from_id":"0"}`, "1 6"},
		{"int between", `{"event_type":"mars","identifier":{"class":"od","step":{"between":[2,3]}},"from_id":"0"}`, "2 3"},
		{"int lt", `{"event_type":"mars","identifier":{"class":"od","step":{"lt":3}},"from_id":"0"}`, "1 2"},
		{"enum in", `{"event_type":"mars","identifier":{"class":"RD","domain":{"in":["M"]}},"from_id":"0"}`, "7"},
		{"dotted value", `{"event_type":"mars","identifier":{"class":"rd","stream":"a.b"},"from_id":"0"}`, "7"},
		{"expver canonical", `{"event_type":"mars","identifier":{"class":"rd","expver":"PROD","time":"1230"},"from_id":"0"}`, "7"},
		{"string wildcard quirk", `{"event_type":"mars","identifier":{"class":"od","stream":"*"},"from_id":"5"}`, "5 6"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			evs := s.open(t, "/api/v1/replay", c.body).all(wait)
			var ids []string
			for _, ev := range evs[1 : len(evs)-2] {
				if ev.Name != "replay" {
					t.Fatalf("unexpected %s", ev.Raw)
				}
				ids = append(ids, strings.TrimPrefix(ev.Data["id"].(string), "mars@"))
			}
			if strings.Join(ids, " ") != c.want {
				t.Fatalf("got %q want %q", strings.Join(ids, " "), c.want)
			}
			if evs[len(evs)-2].Data["type"] != "replay_completed" || evs[len(evs)-1].Data["reason"] != "end_of_stream" ||
				evs[len(evs)-1].Data["message"] != "Stream completed" {
				t.Fatalf("tail %v", names(evs))
			}
		})
	}
	// The dotted value and canonical identifiers come back in the CloudEvent.
	evs := s.open(t, "/api/v1/replay", `{"event_type":"mars","identifier":{"class":"rd"},"from_id":"7"}`).all(wait)
	if got := jsonString(evs[1].Data["data"]); got != `{"identifier":{"class":"rd","date":"20250707","domain":"m","expver":"prod","step":"7","stream":"a.b","time":"1230"},"payload":null}` {
		t.Fatalf("data %s", got)
	}
}

func TestReplayFromDate(t *testing.T) {
	s := startServer(t, testConfig, nil)
	s.notify(t, marsBody(1, ""))
	cut := time.Now().UTC()
	// Store times are taken by the engine; wait until the clock has moved
	// past the cut so that the next notification is strictly later.
	for !time.Now().UTC().After(cut) {
	}
	s.notify(t, marsBody(2, ""))
	for _, c := range []struct{ from, want string }{
		{cut.Format(time.RFC3339Nano), "2"},
		{"2000-01-01T00:00:00Z", "1 2"},
		{"946684800000", "1 2"},
		{"2999-01-01 00:00:00", ""},
	} {
		evs := s.open(t, "/api/v1/replay", `{"event_type":"mars","identifier":{"class":"od"},"from_date":"`+c.from+`"}`).all(wait)
		var ids []string
		for _, ev := range evs {
			if ev.Name == "replay" {
				ids = append(ids, strings.TrimPrefix(ev.Data["id"].(string), "mars@"))
			}
		}
		if strings.Join(ids, " ") != c.want {
			t.Fatalf("from_date %s: got %q want %q", c.from, strings.Join(ids, " "), c.want)
		}
		if evs[0].Data["from_sequence"] != nil || evs[0].Data["from_date"] == nil {
			t.Fatalf("replay_started %s", evs[0].Raw)
		}
	}
}

// TestCursorValidation: cursor, spatial and identifier refusals of watch
// and replay, in aviso-server 0.13's order. The message is aviso's wording
// (clients may match it), the details herald's explanation.
func TestCursorValidation(t *testing.T) {
	s := startServer(t, testConfig, nil)
	cases := []struct{ path, body, message, details string }{
		{"/api/v1/replay", `{"event_type":"mars","identifier":{}}`,
			"Replay endpoint requires either from_id or from_date parameter. Use from_id for sequence-based replay or from_date for time-based replay.",
			"replay needs a start cursor: send from_id (\"0\" for the beginning) or from_date"},
		{"/api/v1/replay", `{"event_type":"mars","identifier":{},"from_id":" "}`,
			"from_id cannot be empty. Provide a valid sequence number or omit the field",
			`from_id: sequence " " is empty: send a decimal sequence number such as "1" ("0" means from the beginning), or omit the field`},
		{"/api/v1/watch", `{"event_type":"mars","identifier":{},"from_id":"1","from_date":"2025-01-01T00:00:00Z"}`,
			"Cannot specify both from_id and from_date. Please provide only one replay parameter. Use from_id for sequence-based replay or from_date for time-based replay.",
			"from_id and from_date cannot be used together: send one start cursor"},
		{"/api/v1/watch", `{"event_type":"mars","identifier":{},"from_id":"1","to_id":"4"}`,
			"to_id and to_date are only supported for the replay endpoint, not /watch",
			"to_id and to_date are only accepted on /api/v1/replay: a watch has no end"},
		{"/api/v1/replay", `{"event_type":"mars","identifier":{},"from_id":"5","to_id":"4"}`,
			"to_id (4) must not be lower than from_id (5)", "to_id 4 is before from_id 5"},
		{"/api/v1/replay", `{"event_type":"mars","identifier":{},"from_date":"2025-06-09T13:15:00.5Z","to_date":"2025-06-09T13:15:00Z"}`,
			"to_date (2025-06-09T13:15:00+00:00) must not be earlier than from_date (2025-06-09T13:15:00.500+00:00)", "to_date is before from_date"},
		{"/api/v1/replay", `{"event_type":"mars","identifier":{},"from_id":"1","to_id":"4","to_date":"2025-01-01T00:00:00Z"}`,
			"Cannot specify both to_id and to_date. Please provide only one replay end parameter. Use to_id for a sequence-based end or to_date for a time-based end.",
			"to_id and to_date cannot be used together: send one end cursor"},
		{"/api/v1/replay", `{"event_type":"mars","identifier":{},"from_date":""}`,
			"from_date cannot be empty. Provide a valid datetime/timestamp or omit the field", ""},
		{"/api/v1/replay", `{"event_type":"mars","identifier":{},"from_id":"0","to_id":"x"}`,
			"to_id must be a valid positive integer. Got: 'x'. Valid examples: '1', '123', '9999'", ""},
		{"/api/v1/replay", `{"event_type":"mars","identifier":{"step":{"gte":1001}},"from_id":"1"}`, "", ""},
		{"/api/v1/replay", `{"event_type":"mars","identifier":{"class":"od","stream":{"eq":"x"}},"from_id":"1"}`, "invalid value for identifier 'stream': constraint objects are not supported by StringHandler; only IntHandler, FloatHandler and EnumHandler fields accept them", ""},
		{"/api/v1/replay", `{"event_type":"mars","identifier":{},"from_id":"x@5"}`, "", ""},
		{"/api/v1/replay", `{"event_type":"mars","identifier":{},"from_date":"2025-06-09"}`, "", ""},
		{"/api/v1/watch", `{"event_type":"mars","identifier":{}}`, "Required field 'class' missing for watch operation", "required field 'class' is missing"},
		{"/api/v1/replay", `{"event_type":"mars","identifier":{},"from_id":"1"}`, "Required field 'class' missing for replay operation", "required field 'class' is missing"},
		{"/api/v1/watch", `{"event_type":"dissemination","identifier":{"polygon":[[0,0],[0,1],[1,1],[0,0]],"point":[0.2,0.5]}}`,
			"Cannot specify both identifier.polygon and identifier.point. Provide only one spatial filter.",
			"identifier cannot contain both 'polygon' and 'point': send one spatial filter"},
		{"/api/v1/replay", `{"event_type":"dissemination","identifier":{"target":"x","point":"91,0"},"from_id":"0"}`, "", ""},
		{"/api/v1/watch", `{"event_type":"dissemination","identifier":{"target":"x","polygon":[[0,0],[0,1],[1,1]]}}`,
			"field 'polygon' must be a valid polygon: it has 3 [lat,lon] pair(s) but needs at least 4 (3 vertices plus the closing repeat of the first vertex)", ""},
		// A typo never widens a subscription (aviso-server 0.13): any key
		// the schema does not declare is refused, the first in sorted order
		// named.
		{"/api/v1/watch", `{"event_type":"mars","identifier":{"class":"od","stpe":1,"nope":"x"}}`,
			"Unknown field 'nope' provided for watch operation",
			"'nope' is not an identifier field of event type 'mars'; its fields are 'class', 'expver', 'domain', 'date', 'time', 'stream', 'step'"},
		{"/api/v1/replay", `{"event_type":"mars","identifier":{"class":"od","nope":{"gt":1}},"from_id":"0"}`,
			"Unknown field 'nope' provided for replay operation", ""},
		{"/api/v1/watch", `{"event_type":"mars","identifier":{"nope":"x"}}`, "Unknown field 'nope' provided for watch operation", ""},
		{"/api/v1/watch", `{"event_type":"mars","identifier":{"class":"od","point":"1,1"}}`, "Unknown field 'point' provided for watch operation",
			"identifier 'point' is only available on event types with a polygon field; 'mars' has none"},
		{"/api/v1/watch", `{"event_type":"mars","identifier":{"class":"od","polygon":[[0,0],[0,1],[1,1],[0,0]]}}`, "Unknown field 'polygon' provided for watch operation", ""},
		{"/api/v1/watch", `{"event_type":"cloud","identifier":{"source":"a","point_cloud":[[0,0]]}}`, "identifier.point_cloud is only supported for notify operations",
			"subscribers must not send 'point_cloud'; send a closed 'polygon' to select notifications with a point inside it"},
		{"/api/v1/watch", `{"event_type":"mars","identifier":{"class":"od","point_cloud":[[0,0]]}}`, "identifier.point_cloud is only supported for notify operations", ""},
		{"/api/v1/watch", `{"event_type":"cloud","identifier":{"source":"a","point":[0,0]}}`, "identifier.point is not supported for point-cloud schemas; use identifier.polygon", ""},
		{"/api/v1/watch", `{"event_type":"cloud","identifier":{"source":"a"}}`, "Required field 'point_cloud' missing for watch operation",
			"required field 'point_cloud' is missing: subscribers send a closed 'polygon' to select point clouds"},
	}
	for _, c := range cases {
		r := s.do(t, http.MethodPost, c.path, c.body)
		code := "INVALID_WATCH_REQUEST"
		if strings.HasSuffix(c.path, "replay") {
			code = "INVALID_REPLAY_REQUEST"
		}
		if r.Status != 400 || r.Body["code"] != code {
			t.Fatalf("%s %s: %d %s", c.path, c.body, r.Status, r.Raw)
		}
		if c.message != "" && r.Body["message"] != c.message {
			t.Fatalf("%s: message %q\nwant %q", c.body, r.Body["message"], c.message)
		}
		if c.details != "" && r.Body["details"] != c.details {
			t.Fatalf("%s: details %q\nwant %q", c.body, r.Body["details"], c.details)
		}
	}
}

func TestHistoricalCap(t *testing.T) {
	s := startServer(t, testConfig, nil) // extreme has max_historical_notifications: 3
	for i := 1; i <= 3; i++ {
		s.notify(t, fmt.Sprintf(`{"event_type":"extreme","identifier":{"region":"eu","anomaly":%d}}`, i))
	}
	// Exactly filling the cap is a normal completion.
	evs := s.open(t, "/api/v1/replay", `{"event_type":"extreme","identifier":{},"from_id":"0"}`).all(wait)
	if got := strings.Join(names(evs), " "); got != "replay-control:replay_started replay:extreme@1 replay:extreme@2 replay:extreme@3 replay-control:replay_completed connection-closing:end_of_stream" {
		t.Fatalf("exact fill: %s", got)
	}
	// Filtered-out notifications never consume quota.
	for i := 0; i < 10; i++ {
		s.notify(t, fmt.Sprintf(`{"event_type":"extreme","identifier":{"region":"us","anomaly":%d}}`, i))
	}
	evs = s.open(t, "/api/v1/replay", `{"event_type":"extreme","identifier":{"region":"eu"},"from_id":"0"}`).all(wait)
	if len(evs) != 6 || evs[4].Data["type"] != "replay_completed" {
		t.Fatalf("filtered: %v", names(evs))
	}
	s.notify(t, `{"event_type":"extreme","identifier":{"region":"eu","anomaly":50}}`)
	for _, path := range []string{"/api/v1/replay", "/api/v1/watch"} {
		st := s.open(t, path, `{"event_type":"extreme","identifier":{"region":"eu"},"from_id":"0"}`)
		var got []string
		for _, ev := range st.all(wait) {
			if ev.Name == "heartbeat" {
				continue
			}
			got = append(got, names([]event{ev})[0])
			if ev.Data["type"] == "notification_replay_limit_reached" {
				if ev.Data["max_allowed"] != float64(3) || ev.Data["message"] != "Historical replay limited to 3 messages. Additional historical messages may be available but were not retrieved." {
					t.Fatalf("limit event %s", ev.Raw)
				}
			}
		}
		want := "replay-control:replay_started replay:extreme@1 replay:extreme@2 replay:extreme@3 replay-control:notification_replay_limit_reached connection-closing:end_of_stream"
		if strings.Join(got, " ") != want {
			t.Fatalf("%s truncated:\n%s\nwant\n%s", path, strings.Join(got, " "), want)
		}
	}
}

func TestSpatialFilters(t *testing.T) {
	s := startServer(t, testConfig, nil)
	// 1: unit square at the origin; 2: square far away; 3: no polygon.
	s.notify(t, `{"event_type":"dissemination","identifier":{"target":"a","date":"20250101","polygon":[[0,0],[0,10],[10,10],[10,0],[0,0]]},"payload":{"n":1}}`)
	s.notify(t, `{"event_type":"dissemination","identifier":{"target":"b","date":"20250101","polygon":"(50,50,50,60,60,60,60,50,50,50)"},"payload":{"n":2}}`)
	cases := []struct{ name, ident, want string }{
		{"point inside", `"point":[5,5]`, "1"},
		{"point string", `"point":"(55, 55)"`, "2"},
		{"point on boundary excluded", `"point":[0,5]`, ""},
		{"polygon overlap", `"polygon":[[8,8],[8,52],[52,52],[52,8],[8,8]]`, "1 2"},
		{"polygon touching edge", `"polygon":"10,0,10,5,20,5,20,0,10,0"`, "1"},
		{"no spatial", `"target":"b"`, "2"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			evs := s.open(t, "/api/v1/replay", `{"event_type":"dissemination","identifier":{`+c.ident+`},"from_id":"0"}`).all(wait)
			var ids []string
			for _, ev := range evs {
				if ev.Name == "replay" {
					ids = append(ids, strings.TrimPrefix(ev.Data["id"].(string), "dissemination@"))
				}
			}
			if strings.Join(ids, " ") != c.want {
				t.Fatalf("got %q want %q", strings.Join(ids, " "), c.want)
			}
		})
	}
	evs := s.open(t, "/api/v1/replay", `{"event_type":"dissemination","identifier":{"target":"b"},"from_id":"0"}`).all(wait)
	if got := jsonString(evs[1].Data["data"]); got != `{"identifier":{"date":"2025-01-01","polygon":[[50,50],[50,60],[60,60],[60,50],[50,50]],"target":"b"},"payload":{"n":2}}` {
		t.Fatalf("polygon round trip %s", got)
	}
	// Point clouds: any point inside the subscriber's polygon or on its edge.
	s.notify(t, `{"event_type":"cloud","identifier":{"source":"s1","point_cloud":[[80,80],[5,5]]}}`)
	s.notify(t, `{"event_type":"cloud","identifier":{"source":"s2","point_cloud":[[0,10]]}}`)
	s.notify(t, `{"event_type":"cloud","identifier":{"source":"s3","point_cloud":[[-5,-5]]}}`)
	evs = s.open(t, "/api/v1/replay", `{"event_type":"cloud","identifier":{"polygon":[[0,0],[0,10],[10,10],[10,0],[0,0]]},"from_id":"0"}`).all(wait)
	var ids []string
	for _, ev := range evs {
		if ev.Name == "replay" {
			ids = append(ids, ev.Data["id"].(string))
		}
	}
	if strings.Join(ids, " ") != "cloud@1 cloud@2" {
		t.Fatalf("cloud matches %v", ids)
	}
	if got := jsonString(evs[1].Data["data"].(map[string]any)["identifier"]); got != `{"point_cloud":[[80,80],[5,5]],"source":"s1"}` {
		t.Fatalf("cloud identifier %s", got)
	}
}

// TestBoundaryNoGapNoDuplicate publishes concurrently while watchers with a
// cursor join: each must see every sequence exactly once, in order.
func TestBoundaryNoGapNoDuplicate(t *testing.T) {
	s := startServer(t, testConfig, nil)
	const total = 300
	for i := 1; i <= 50; i++ {
		s.notify(t, marsBody(i, ""))
	}
	var wg sync.WaitGroup
	wg.Add(1)
	go func() {
		defer wg.Done()
		for i := 51; i <= total; i++ {
			r := s.do(t, http.MethodPost, "/api/v1/notification", marsBody(i, ""))
			if r.Status != 200 {
				t.Errorf("notify %d: %d", i, r.Status)
				return
			}
		}
	}()
	var streams []*eventStream
	for i := 0; i < 5; i++ {
		streams = append(streams, s.open(t, "/api/v1/watch", `{"event_type":"mars","identifier":{"class":"od"},"from_id":"1"}`))
	}
	wg.Wait()
	for n, st := range streams {
		want := uint64(1)
		for want <= total {
			ev := st.skipBeats(wait)
			if ev.Name != "replay" && ev.Name != "live-notification" {
				continue
			}
			id := ev.Data["id"].(string)
			seq, _ := strconv.ParseUint(strings.TrimPrefix(id, "mars@"), 10, 64)
			if seq != want {
				t.Fatalf("stream %d: got %s, want sequence %d", n, id, want)
			}
			want++
		}
	}
}

func TestMaxDuration(t *testing.T) {
	s := startServer(t, testConfig, func(c *configs.Config) { c.WatchEndpoint.ConnectionMaxDurationSec = 1 })
	st := s.open(t, "/api/v1/watch", `{"event_type":"mars","identifier":{"class":"od"}}`)
	if ev := st.next(wait); ev.Data["connection_will_close_in_seconds"] != float64(1) {
		t.Fatalf("first %s", ev.Raw)
	}
	ev := st.skipBeats(wait)
	if ev.Name != "connection-closing" || ev.Data["reason"] != "max_duration_reached" || ev.Data["message"] != "Connection reached maximum duration" {
		t.Fatalf("closing %s", ev.Raw)
	}
	st.expectEnd(wait)
}

// TestSlowWatcherIsClosed fills a watcher's queue while its client does
// not read: it must end with connection-closing end_of_stream naming the
// resume cursor, never silently skip notifications, and never send an
// `error` event: the aviso client (pyaviso) ends a listener for good on any
// `error` event, while on end_of_stream it reconnects from its last
// sequence (interop/pyaviso/test_reconnect.py).
func TestSlowWatcherIsClosed(t *testing.T) {
	s := startServer(t, testConfig, func(c *configs.Config) { c.WatchEndpoint.LiveQueueSize = 4 })
	st := s.openPaused(t, "/api/v1/watch", `{"event_type":"extreme","identifier":{}}`)
	st.next(wait)
	big := strings.Repeat("x", 64<<10)
	// The client reads nothing more while the publisher outruns the socket
	// buffers and the watcher's queue.
	const published = 400
	for i := 1; i <= published; i++ {
		s.notify(t, fmt.Sprintf(`{"event_type":"extreme","identifier":{"region":"r","anomaly":1},"payload":"%s"}`, big))
	}
	st.resume()
	want := uint64(1)
	for {
		ev := st.skipBeats(30 * time.Second)
		if ev.Name == "live-notification" {
			if ev.Data["id"] != fmt.Sprintf("extreme@%d", want) {
				t.Fatalf("got %v, want extreme@%d", ev.Data["id"], want)
			}
			want++
			continue
		}
		if want > published {
			t.Fatalf("all %d delivered: the queue never overflowed", published)
		}
		if ev.Name != "connection-closing" || ev.Data["reason"] != "end_of_stream" || ev.Data["cause"] != "overflow" ||
			ev.Data["message"] != "The watcher fell behind the live notifications; reconnect from resume_from_id to continue" ||
			ev.Data["resume_from_id"] != strconv.FormatUint(want, 10) {
			t.Fatalf("after %d live events: %s %s", want-1, ev.Name, ev.Raw)
		}
		st.expectEnd(wait)
		return
	}
}
