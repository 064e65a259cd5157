package handlers_test

import (
	"fmt"
	"net/http"
	"os"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/herald-gateway/herald/internal/testkit"
)

// reloadBase is the config of the reload tests: three event types that
// the cases add to, remove and change.
const reloadBase = `
application: {host: 127.0.0.1, port: 8000}
notification_backend:
  kind: in_memory
  in_memory: {max_history_per_topic: 100000, max_topics: 1000}
watch_endpoint: {replay_batch_size: 50, replay_batch_delay_ms: 0}
notification_schema:
  steady:
    topic: {base: steady, key_order: [k]}
    identifier:
      k: {type: StringHandler, required: false}
  doomed:
    topic: {base: doomed, key_order: [k]}
    identifier:
      k: {type: StringHandler, required: false}
  shifting:
    topic: {base: shifting, key_order: [k]}
    identifier:
      k: {type: StringHandler, required: false}
`

// reload rewrites the server's config file and asks for a reload.
func (s *server) reload(t *testing.T, yaml string) response {
	t.Helper()
	if err := os.WriteFile(s.path, []byte(yaml), 0o600); err != nil {
		t.Fatal(err)
	}
	return s.do(t, http.MethodPost, "/api/v1/admin/reload", "")
}

// TestReload reloads the configuration while watchers are open: each sees
// exactly the end its event type's change calls for, or nothing.
func TestReload(t *testing.T) {
	s := startServer(t, reloadBase, nil)
	watch := func(et string) *eventStream {
		st := s.open(t, "/api/v1/watch", `{"event_type":"`+et+`","identifier":{}}`)
		if ev := st.next(wait); ev.Data["type"] != "connection_established" {
			t.Fatalf("%s opening %s", et, ev.Raw)
		}
		return st
	}
	steady, doomed, shifting := watch("steady"), watch("doomed"), watch("shifting")
	s.notify(t, `{"event_type":"shifting","identifier":{"k":"a"}}`)
	if ev := shifting.skipBeats(wait); ev.Data["id"] != "shifting@1" {
		t.Fatalf("shifting %s", ev.Raw)
	}
	fingerprint := func() string {
		return s.Server.Runtime().Fingerprint
	}
	before := fingerprint()

	// An invalid file changes nothing and says what is wrong, as startup
	// would.
	r := s.reload(t, reloadBase+"  broken:\n    identifier:\n      x: {type: NopeHandler}\n")
	if r.Status != http.StatusBadRequest || r.Body["code"] != "CONFIG_INVALID" ||
		!strings.Contains(r.Body["message"].(string), `notification_schema.broken (line 20): identifier.x.type: unknown handler "NopeHandler"`) ||
		fingerprint() != before {
		t.Fatalf("invalid reload: %d %s", r.Status, r.Raw)
	}
	// A setting that needs a restart is refused by name, with nothing
	// else applied.
	r = s.reload(t, strings.Replace(reloadBase, "port: 8000", "port: 8001", 1)+
		"  added:\n    identifier:\n      k: {type: StringHandler, required: false}\n")
	if r.Status != http.StatusConflict || r.Body["code"] != "RELOAD_REFUSED" ||
		fmt.Sprint(r.Body["refused"]) != "[application.port]" || fingerprint() != before {
		t.Fatalf("refused reload: %d %s", r.Status, r.Raw)
	}
	if r := s.do(t, http.MethodPost, "/api/v1/notification", `{"event_type":"added","identifier":{"k":"x"}}`); r.Body["code"] != "UNKNOWN_EVENT_TYPE" {
		t.Fatalf("a refused reload added an event type: %s", r.Raw)
	}

	// Add one, remove one, change one.
	next := strings.Replace(reloadBase, `  doomed:
    topic: {base: doomed, key_order: [k]}
    identifier:
      k: {type: StringHandler, required: false}
`, "", 1)
	next = strings.Replace(next, "  shifting:\n    topic: {base: shifting, key_order: [k]}\n    identifier:\n      k: {type: StringHandler, required: false}\n",
		"  shifting:\n    topic: {base: shifting, key_order: [k, n]}\n    identifier:\n      k: {type: StringHandler, required: false}\n      n: {type: IntHandler, required: false}\n", 1)
	next += "  added:\n    identifier:\n      k: {type: StringHandler, required: false}\n"
	r = s.reload(t, next)
	if r.Status != http.StatusOK || fmt.Sprint(r.Body["added"], r.Body["removed"], r.Body["changed"]) != "[added] [doomed] [shifting]" ||
		r.Body["streams_ended"] != float64(2) || r.Body["previous_fingerprint"] != before || r.Body["fingerprint"] != fingerprint() || fingerprint() == before {
		t.Fatalf("reload: %d %s", r.Status, r.Raw)
	}
	// The aviso client accepts only its three reasons (any other ends its
	// listener): herald's cause travels in "cause", the reason is
	// end_of_stream, on which the client reconnects by itself.
	if ev := doomed.skipBeats(wait); ev.Name != "connection-closing" || ev.Data["reason"] != "end_of_stream" || ev.Data["cause"] != "schema_removed" ||
		ev.Data["message"] != "The event type was removed from the configuration" || ev.Data["resume_from_id"] != nil {
		t.Fatalf("removed event type's watcher got %s %s", ev.Name, ev.Raw)
	}
	doomed.expectEnd(wait)
	if ev := shifting.skipBeats(wait); ev.Name != "connection-closing" || ev.Data["reason"] != "end_of_stream" || ev.Data["cause"] != "schema_changed" ||
		ev.Data["message"] != "The event type's schema changed; reconnect from resume_from_id to continue under the new schema" || ev.Data["resume_from_id"] != "2" {
		t.Fatalf("changed event type's watcher got %s %s", ev.Name, ev.Raw)
	}
	shifting.expectEnd(wait)

	// The unchanged event type's watcher goes on; the added one serves;
	// the removed one is unknown; the changed one uses its new schema.
	s.notify(t, `{"event_type":"steady","identifier":{"k":"a"}}`)
	if ev := steady.skipBeats(wait); ev.Data["id"] != "steady@1" {
		t.Fatalf("steady after reload: %s %s", ev.Name, ev.Raw)
	}
	s.notify(t, `{"event_type":"added","identifier":{"k":"a"}}`)
	if r := s.do(t, http.MethodPost, "/api/v1/notification", `{"event_type":"doomed","identifier":{"k":"a"}}`); r.Body["code"] != "UNKNOWN_EVENT_TYPE" {
		t.Fatalf("removed event type still served: %s", r.Raw)
	}
	s.notify(t, `{"event_type":"shifting","identifier":{"k":"a","n":3}}`)
	resumed := s.open(t, "/api/v1/watch", `{"event_type":"shifting","identifier":{"n":3},"from_id":"2"}`)
	got := []string{}
	for len(got) < 3 {
		got = append(got, names([]event{resumed.skipBeats(wait)})...)
	}
	if strings.Join(got, " ") != "replay-control:replay_started replay:shifting@2 replay-control:replay_completed" {
		t.Fatalf("resumed watch of the changed event type: %v", got)
	}
}

// TestReloadDuringNotifyBurst reloads repeatedly, changing other event
// types, while a publisher notifies an unchanged one: its watcher gets
// every acknowledged notification once, in order.
func TestReloadDuringNotifyBurst(t *testing.T) {
	s := startServer(t, reloadBase, nil)
	st := s.open(t, "/api/v1/watch", `{"event_type":"steady","identifier":{}}`)
	st.next(wait)
	var (
		mu    sync.Mutex
		acked int
		stop  = make(chan struct{})
		done  = make(chan struct{})
	)
	go func() {
		defer close(done)
		client := &http.Client{Timeout: 10 * time.Second}
		for i := 1; ; i++ {
			select {
			case <-stop:
				return
			default:
			}
			resp, err := client.Post(s.URL+"/api/v1/notification", "application/json",
				strings.NewReader(fmt.Sprintf(`{"event_type":"steady","identifier":{"k":"v%d"}}`, i)))
			if err != nil {
				t.Errorf("notify %d: %v", i, err)
				return
			}
			resp.Body.Close()
			if resp.StatusCode != http.StatusOK {
				t.Errorf("notify %d: status %d", i, resp.StatusCode)
				return
			}
			mu.Lock()
			acked = i
			mu.Unlock()
		}
	}()
	ackedNow := func() int {
		mu.Lock()
		defer mu.Unlock()
		return acked
	}
	// The reloads happen between notifications, not before or after.
	testkit.WaitFor(t, wait, "a notify burst under way", func() bool { return ackedNow() >= 50 })
	for i := range 6 {
		yaml := reloadBase
		if i%2 == 0 {
			yaml += fmt.Sprintf("  extra%d:\n    identifier:\n      k: {type: StringHandler, required: false}\n", i)
		}
		if r := s.reload(t, yaml); r.Status != http.StatusOK {
			t.Fatalf("reload %d: %d %s", i, r.Status, r.Raw)
		}
	}
	last := ackedNow()
	testkit.WaitFor(t, wait, "notifications after the reloads", func() bool { return ackedNow() >= last+50 })
	close(stop)
	<-done
	mu.Lock()
	n := acked
	mu.Unlock()
	if n == 0 {
		t.Fatal("nothing was published during the reloads")
	}
	for want := 1; want <= n; want++ {
		ev := st.skipBeats(wait)
		if ev.Data["id"] != fmt.Sprintf("steady@%d", want) {
			t.Fatalf("after %d of %d: %s %s", want-1, n, ev.Name, ev.Raw)
		}
	}
	select {
	case ev := <-st.events:
		if ev.Name != "heartbeat" {
			t.Fatalf("more than the %d acknowledged: %s %s", n, ev.Name, ev.Raw)
		}
	default:
	}
}
