package handlers_test

import (
	"context"
	"encoding/json"
	"io"
	"net/http"
	"strconv"
	"strings"
	"testing"
	"time"
)

// FuzzNotifyBatch posts arbitrary bodies to batch notify on the
// JetStream engine: no answer is a 5xx or leaks internals; a refusal
// stores nothing at all; a 200 lists one id per notification, and the
// streams grew by exactly those ids, in order.
func FuzzNotifyBatch(f *testing.F) {
	long := strings.Repeat("日", 1400)
	for _, body := range []string{
		batchBody(evNote("a", ""), `{"event_type":"num","identifier":{"i":1},"payload":1}`, `{"event_type":"gen","identifier":{"c":"b"}}`),
		batchBody(evNote("a", "1"), evNote("a", "2")),
		batchBody(evNote("a", ""), `{"event_type":"nope","identifier":{}}`),
		batchBody(evNote(long, ""), evNote("b", "")),
		batchBody(`{"event_type":"ev","identifier":{"k":"a","point":"1,2"}}`, `[]`, `null`, `1e400`),
		batchBody(`{"event_type":"ev","identifier":{"k":"a"},"payload":{"x":1,"x":2}}`),
		batchBody(`{"event_type":"num","identifier":{"i":"1e3"},"payload":1}`, `{"event_type":"ev","identifier":{"k":"\ud800"}}`),
		batchBody(evNote("1", ""), evNote("2", ""), evNote("3", ""), evNote("4", ""), evNote("5", ""), evNote("6", ""), evNote("7", ""), evNote("8", ""), evNote("9", "")),
		`{"notifications":[]}`,
		`{"notifications":{}}`,
		`{"notifications":[` + evNote("a", "") + `],"x":1}`,
		`{"notifications":[` + evNote("a", "") + `]`,
		`[` + evNote("a", "") + `]`,
		``,
	} {
		f.Add([]byte(body))
	}
	s := startBatchServer(f, batchConfig, nil)
	streams := []string{"ev", "num", "gen"}
	last := func(t *testing.T) map[string]uint64 {
		t.Helper()
		m := map[string]uint64{}
		for _, st := range streams {
			seq, err := s.Engine.LastSeq(context.Background(), st)
			if err != nil {
				t.Fatalf("last sequence of %s: %v", st, err)
			}
			m[st] = seq
		}
		return m
	}
	f.Fuzz(func(t *testing.T, body []byte) {
		before := last(t)
		ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
		defer cancel()
		req, err := http.NewRequestWithContext(ctx, http.MethodPost, s.URL+"/api/v1/notifications", strings.NewReader(string(body)))
		if err != nil {
			t.Fatal(err)
		}
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatalf("%.300q: %v", body, err)
		}
		raw, _ := io.ReadAll(resp.Body)
		resp.Body.Close()
		if resp.StatusCode >= 500 {
			t.Fatalf("%.300q: status %d: %.500s", body, resp.StatusCode, raw)
		}
		for _, leak := range []string{"nats:", "nats-server", "data directory", "/tmp/"} {
			if strings.Contains(string(raw), leak) {
				t.Fatalf("%.300q: the answer leaks %q: %.500s", body, leak, raw)
			}
		}
		after := last(t)
		if resp.StatusCode != http.StatusOK {
			for _, st := range streams {
				if after[st] != before[st] {
					t.Fatalf("%.300q: refused with %d, but stream %s grew from %d to %d: %.300s", body, resp.StatusCode, st, before[st], after[st], raw)
				}
			}
			return
		}
		var ok struct {
			IDs []string `json:"ids"`
		}
		if err := json.Unmarshal(raw, &ok); err != nil {
			t.Fatalf("%.300q: 200 %.300s: %v", body, raw, err)
		}
		var elems []json.RawMessage
		var top struct {
			Notifications *[]json.RawMessage `json:"notifications"`
		}
		if err := json.Unmarshal(body, &top); err == nil && top.Notifications != nil {
			elems = *top.Notifications
		}
		if len(ok.IDs) != len(elems) {
			t.Fatalf("%.300q: %d ids for %d notifications", body, len(ok.IDs), len(elems))
		}
		next := map[string]uint64{}
		for st, seq := range before {
			next[st] = seq
		}
		for _, id := range ok.IDs {
			st, seq, _ := strings.Cut(id, "@")
			next[st]++
			if seq != strconv.FormatUint(next[st], 10) {
				t.Fatalf("%.300q: ids %v do not follow the streams' sequences %v", body, ok.IDs, before)
			}
		}
		for _, st := range streams {
			if after[st] != next[st] {
				t.Fatalf("%.300q: ids %v, but stream %s went from %d to %d", body, ok.IDs, st, before[st], after[st])
			}
		}
	})
}
