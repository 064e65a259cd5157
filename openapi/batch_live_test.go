package openapi_test

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/herald-gateway/herald/engine"
	"github.com/herald-gateway/herald/notification"
	"github.com/herald-gateway/herald/openapi"
)

// failAfter is the in-memory engine storing its first ok publishes, then
// failing every publish with err.
type failAfter struct {
	engine.Engine
	ok  int64
	n   atomic.Int64
	err error
}

func (e *failAfter) Publish(ctx context.Context, n *notification.Notification) (uint64, time.Time, error) {
	if e.n.Add(1) > e.ok {
		return 0, time.Time{}, e.err
	}
	return e.Engine.Publish(ctx, n)
}

// TestNotifyBatchAnswersMatchDocument runs batch notify on the default
// config (on the in-memory engine, or one that fails part-way) and checks
// each answer against the document and its examples: the request example
// stores as the 200 example says, and the refusals, limits and storage
// failures are the examples' answers.
func TestNotifyBatchAnswersMatchDocument(t *testing.T) {
	const path = "/api/v1/notifications"
	shipped, err := os.ReadFile("../configs/config.yaml")
	if err != nil {
		t.Fatal(err)
	}
	// startLive writes the text in a temporary directory: the codecs path,
	// relative to the config file, becomes the shipped file's absolute one.
	defs, err := filepath.Abs("../configs/codecs/sensor.nspl")
	if err != nil {
		t.Fatal(err)
	}
	const rel = "definitions: codecs/sensor.nspl\n"
	if !bytes.Contains(shipped, []byte(rel)) {
		t.Fatalf("configs/config.yaml has no %q", rel)
	}
	shipped = bytes.Replace(shipped, []byte(rel), []byte("definitions: "+defs+"\n"), 1)
	var doc struct {
		Paths map[string]map[string]struct {
			RequestBody struct {
				Content map[string]struct {
					Examples map[string]struct {
						Value json.RawMessage `json:"value"`
					} `json:"examples"`
				} `json:"content"`
			} `json:"requestBody"`
		} `json:"paths"`
	}
	if err := json.Unmarshal(openapi.Spec(), &doc); err != nil {
		t.Fatal(err)
	}
	example := doc.Paths[path]["post"].RequestBody.Content["application/json"].Examples["batch"].Value
	if len(example) == 0 {
		t.Fatal("no batch request example")
	}
	memory := func() engine.Engine {
		return engine.NewMemory(engine.MemoryOptions{MaxHistoryPerTopic: 10, MaxTopics: 100})
	}
	processedAt := func(got reply) func(map[string]any) {
		return func(ex map[string]any) {
			var b map[string]any
			_ = json.Unmarshal(got.body, &b)
			ex["processed_at"] = b["processed_at"]
		}
	}

	l := startLive(t, string(shipped), memory())
	r := send(t, l.ts.URL, "POST", path, nil, example)
	conform(t, r, "POST", path, 200)
	sameAsExample(t, r, "POST", path, "stored", processedAt(r))

	var elems []json.RawMessage
	var req struct{ Notifications []json.RawMessage }
	if err := json.Unmarshal(example, &req); err != nil || len(req.Notifications) != 3 {
		t.Fatalf("the request example: %v", err)
	}
	for _, e := range req.Notifications {
		var b bytes.Buffer
		if err := json.Compact(&b, e); err != nil {
			t.Fatal(err)
		}
		elems = append(elems, b.Bytes())
	}
	alertNoPayload := strings.Replace(string(elems[0]), `,"payload":{"headline":"Severe thunderstorms","url":"https://example.org/alerts/4711"}`, "", 1)
	if alertNoPayload == string(elems[0]) {
		t.Fatal("the alert example has no payload to remove")
	}
	invalid := `{"notifications":[` + string(elems[0]) + `,{"event_type":"alerts","identifier":{}},` +
		strings.Replace(string(elems[1]), `"step":12`, `"step":400`, 1) + `,` + alertNoPayload + `]}`
	r = send(t, l.ts.URL, "POST", path, nil, []byte(invalid))
	conform(t, r, "POST", path, 400)
	sameAsExample(t, r, "POST", path, "invalid", nil)
	for _, c := range []struct{ name, body string }{
		{"invalid_json", ""},
		{"unknown_field", `{"event_type":"alert","identifier":{}}`},
		{"empty", `{"notifications":[]}`},
	} {
		r = send(t, l.ts.URL, "POST", path, nil, []byte(c.body))
		conform(t, r, "POST", path, 400)
		sameAsExample(t, r, "POST", path, c.name, nil)
	}
	many := make([]string, 1001)
	for i := range many {
		many[i] = string(elems[1])
	}
	r = send(t, l.ts.URL, "POST", path, nil, []byte(`{"notifications":[`+strings.Join(many, ",")+`]}`))
	conform(t, r, "POST", path, 413)
	sameAsExample(t, r, "POST", path, "too_many", nil)

	// Storage failures: refused from the first notification (500), and
	// unavailable after two were stored (503).
	l = startLive(t, string(shipped), &failAfter{Engine: memory(), ok: 0, err: errors.New("jetstream: secret backend detail")})
	r = send(t, l.ts.URL, "POST", path, nil, []byte(`{"notifications":[`+string(elems[1])+`,`+string(elems[2])+`]}`))
	conform(t, r, "POST", path, 500)
	sameAsExample(t, r, "POST", path, "storage", nil)
	l = startLive(t, string(shipped), &failAfter{Engine: memory(), ok: 2, err: fmt.Errorf("jetstream: nats://secret:4222 is down: %w", engine.ErrUnavailable)})
	r = send(t, l.ts.URL, "POST", path, nil, example)
	conform(t, r, "POST", path, 503)
	sameAsExample(t, r, "POST", path, "partial", nil)
	if strings.Contains(string(r.body), "secret") {
		t.Errorf("the 503 carries the backend's error: %s", r.body)
	}
}
