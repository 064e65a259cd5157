package handlers_test

import (
	"fmt"
	"net/http"
	"strings"
	"testing"
	"time"
)

// TestReplayEndSequence: replay_started carries end_sequence and to_date
// (aviso-server 0.13), always present: the end point a replay with to_id
// or to_date resolved at setup (the aviso client sends it back as to_id
// on every reconnect), null without one and on a watch.
func TestReplayEndSequence(t *testing.T) {
	s := startServer(t, testConfig, nil)
	for i := 1; i <= 6; i++ {
		s.notify(t, marsBody(i, ""))
	}
	// The stored times, to know what a to_date must resolve to.
	all := s.open(t, "/api/v1/replay", `{"event_type":"mars","identifier":{"class":"od"},"from_id":"0"}`).all(wait)
	if len(all) != 9 {
		t.Fatalf("replay of everything: %v", names(all))
	}
	times := make([]time.Time, 7)
	for i := 1; i <= 6; i++ {
		at, err := time.Parse(time.RFC3339Nano, all[i].Data["time"].(string))
		if err != nil {
			t.Fatal(err)
		}
		times[i] = at
	}
	// endAt is the last sequence stored at or before at.
	endAt := func(at time.Time) float64 {
		end := 0
		for i := 1; i <= 6; i++ {
			if !times[i].After(at) {
				end = i
			}
		}
		return float64(end)
	}
	for _, c := range []struct {
		name, body  string
		end, toDate any // want end_sequence and to_date
		ids         string
	}{
		{"no end", `"from_id":"2"`, nil, nil, "2 3 4 5 6"},
		{"to_id", `"from_id":"2","to_id":"4"`, 4.0, nil, "2 3 4"},
		{"to_id beyond the stream", `"from_id":"5","to_id":"100"`, 6.0, nil, "5 6"},
		{"to_id 0", `"from_id":"0","to_id":"0"`, 0.0, nil, ""},
		{"to_date at the third", `"from_id":"1","to_date":"` + times[3].Format(time.RFC3339Nano) + `"`, endAt(times[3]),
			times[3].UTC().Format("2006-01-02T15:04:05Z"), ""},
		{"to_date before everything", `"from_id":"1","to_date":"2001-01-01T00:00:00.25+01:00"`, 0.0, "2000-12-31T23:00:00Z", ""},
		{"to_date in the future", `"from_date":"2001-01-01T00:00:00Z","to_date":"2999-01-01T00:00:00Z"`, 6.0, "2999-01-01T00:00:00Z", "1 2 3 4 5 6"},
	} {
		t.Run(c.name, func(t *testing.T) {
			evs := s.open(t, "/api/v1/replay", `{"event_type":"mars","identifier":{"class":"od"},`+c.body+`}`).all(wait)
			start := evs[0].Data
			if evs[0].Name != "replay-control" || start["type"] != "replay_started" {
				t.Fatalf("opening %s", evs[0].Raw)
			}
			for _, k := range []string{"end_sequence", "to_date"} {
				if _, ok := start[k]; !ok {
					t.Fatalf("replay_started without %s: %s", k, evs[0].Raw)
				}
			}
			if start["end_sequence"] != c.end || start["to_date"] != c.toDate {
				t.Fatalf("end_sequence %v to_date %v, want %v %v: %s", start["end_sequence"], start["to_date"], c.end, c.toDate, evs[0].Raw)
			}
			var ids []string
			for _, ev := range evs[1 : len(evs)-2] {
				ids = append(ids, strings.TrimPrefix(ev.Data["id"].(string), "mars@"))
			}
			want := c.ids
			if strings.HasPrefix(c.name, "to_date at") {
				// Every record stored at or before the third's time.
				var w []string
				for i := 1; i <= int(c.end.(float64)); i++ {
					w = append(w, fmt.Sprint(i))
				}
				want = strings.Join(w, " ")
			}
			if got := strings.Join(ids, " "); got != want {
				t.Fatalf("delivered %q, want %q", got, want)
			}
			if tail := names(evs[len(evs)-2:]); tail[0] != "replay-control:replay_completed" || tail[1] != "connection-closing:end_of_stream" {
				t.Fatalf("tail %v", tail)
			}
		})
	}
	// A watch with a cursor: both keys, both null.
	st := s.open(t, "/api/v1/watch", `{"event_type":"mars","identifier":{"class":"od"},"from_id":"6"}`)
	if ev := st.next(wait); ev.Data["type"] != "replay_started" || ev.Data["end_sequence"] != nil || ev.Data["to_date"] != nil ||
		!strings.Contains(ev.Raw, `"end_sequence":null,"to_date":null`) {
		t.Fatalf("watch replay_started %s", ev.Raw)
	}
}

// TestAviso13Endpoints: /ready answers aviso-server 0.13's body, and the
// CloudEvent dataschema link (<base_url>/schema/<event_type>) resolves to
// the event type's schema, as /api/v1/schema/<event_type> answers.
func TestAviso13Endpoints(t *testing.T) {
	s := startServer(t, testConfig, nil)
	r := s.do(t, http.MethodGet, "/ready", "")
	if r.Status != http.StatusOK || r.Raw != "{\"status\":\"ready\",\"backend_connected\":true}\n" {
		t.Fatalf("/ready: %d %q", r.Status, r.Raw)
	}
	s.notify(t, marsBody(1, ""))
	evs := s.open(t, "/api/v1/replay", `{"event_type":"mars","identifier":{"class":"od"},"from_id":"0"}`).all(wait)
	link, _ := evs[1].Data["dataschema"].(string)
	if !strings.HasSuffix(link, "/schema/mars") || strings.Contains(link, "/api/v1/") {
		t.Fatalf("dataschema %q", link)
	}
	viaLink := s.do(t, http.MethodGet, "/schema/mars", "")
	viaAPI := s.do(t, http.MethodGet, "/api/v1/schema/mars", "")
	if viaLink.Status != http.StatusOK || viaLink.Raw != viaAPI.Raw || viaLink.Body["event_type"] != "mars" {
		t.Fatalf("/schema/mars: %d %s\n/api/v1/schema/mars: %s", viaLink.Status, viaLink.Raw, viaAPI.Raw)
	}
	if r := s.do(t, http.MethodGet, "/schema/nope", ""); r.Status != http.StatusNotFound || r.Body["message"] != "Event type 'nope' not found" {
		t.Fatalf("/schema/nope: %d %s", r.Status, r.Raw)
	}
}

// TestCoordinatesAsFloats: polygons and point clouds come out of
// CloudEvents with every coordinate written as a float, as aviso-server
// 0.13 writes them, whatever the publisher's spelling.
func TestCoordinatesAsFloats(t *testing.T) {
	s := startServer(t, testConfig, nil)
	s.notify(t, `{"event_type":"dissemination","identifier":{"target":"x","date":"2025-07-06","polygon":"(50,10,52,10,52,12.5,50,10)"},"payload":1}`)
	s.notify(t, `{"event_type":"cloud","identifier":{"source":"a","point_cloud":[[1,2],[-0,1e-7],[45.5,-3]]}}`)
	evs := s.open(t, "/api/v1/replay", `{"event_type":"dissemination","identifier":{"target":"x","point":[51,11]},"from_id":"0"}`).all(wait)
	if len(evs) != 4 || !strings.Contains(evs[1].Raw, `"polygon":[[50.0,10.0],[52.0,10.0],[52.0,12.5],[50.0,10.0]]`) {
		t.Fatalf("polygon CloudEvent %v\n%s", names(evs), evs[1].Raw)
	}
	evs = s.open(t, "/api/v1/replay", `{"event_type":"cloud","identifier":{"source":"a","polygon":[[0,0],[0,3],[3,3],[3,0],[0,0]]},"from_id":"0"}`).all(wait)
	if len(evs) != 4 || !strings.Contains(evs[1].Raw, `"point_cloud":[[1.0,2.0],[-0.0,1e-7],[45.5,-3.0]]`) {
		t.Fatalf("point cloud CloudEvent %v\n%s", names(evs), evs[1].Raw)
	}
}
