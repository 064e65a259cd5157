package handlers_test

import (
	"context"
	"fmt"
	"net/http"
	"strings"
	"testing"

	"github.com/nats-io/nats.go"
	natsjs "github.com/nats-io/nats.go/jetstream"

	"github.com/herald-gateway/herald/configs"
	"github.com/herald-gateway/herald/engine"
	"github.com/herald-gateway/herald/jetstream"
	"github.com/herald-gateway/herald/jetstream/jetstreamtest"
	herald "github.com/herald-gateway/herald/server"
)

// storageBase is the config of the storage reload test: a JetStream
// backend with file streams and two event types, one of them with a
// storage policy.
const storageBase = `
application: {host: 127.0.0.1, port: 8000}
notification_backend:
  kind: jetstream
  jetstream: {storage_type: file}
watch_endpoint: {replay_batch_size: 50, replay_batch_delay_ms: 0}
notification_schema:
  steady:
    topic: {base: steady, key_order: [k]}
    storage_policy: {max_messages: 100, allow_duplicates: true}
    identifier:
      k: {type: StringHandler, required: false}
  other:
    topic: {base: other, key_order: [k]}
    identifier:
      k: {type: StringHandler, required: false}
`

// startJetStreamServer starts herald on an embedded JetStream engine
// opened with the config's own stream options (defaults included), as
// herald's main does, so that a reload compares like with like.
func startJetStreamServer(t *testing.T, yaml string) (*server, *jetstream.Engine) {
	t.Helper()
	var eng *jetstream.Engine
	s := start(t, yaml, startOptions{engine: func(t testing.TB, cfg *configs.Config) engine.Engine {
		opts, err := herald.JetStreamOptions(cfg)
		if err != nil {
			t.Fatalf("jetstream options: %v", err)
		}
		eng = jetstreamtest.Open(t, opts.Streams, func(o *jetstream.Options) { o.Defaults = opts.Defaults })
		return eng
	}})
	return s, eng
}

// streamInfo reads a stream's configuration and state from the engine's
// embedded server.
func streamInfo(t *testing.T, eng *jetstream.Engine, name string) (*natsjs.StreamInfo, error) {
	t.Helper()
	nc, err := nats.Connect("", nats.InProcessServer(eng.Server()))
	if err != nil {
		t.Fatal(err)
	}
	defer nc.Close()
	js, err := natsjs.New(nc)
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), wait)
	defer cancel()
	s, err := js.Stream(ctx, name)
	if err != nil {
		return nil, err
	}
	return s.CachedInfo(), nil
}

// TestReloadStorage: a reload that changes an event type's storage
// policy reconciles its stream (listed under storage_reconciled) without
// ending its watchers, and creates the stream of an added event type
// before it answers; a reload asking for a storage change JetStream
// cannot make changes nothing.
func TestReloadStorage(t *testing.T) {
	s, eng := startJetStreamServer(t, storageBase)
	info := func(name string) *natsjs.StreamInfo {
		t.Helper()
		i, err := streamInfo(t, eng, name)
		if err != nil {
			t.Fatalf("stream %s: %v", name, err)
		}
		return i
	}
	if c := info("STEADY").Config; c.MaxMsgs != 100 || c.Storage != natsjs.FileStorage {
		t.Fatalf("STEADY at startup: %+v", c)
	}
	watcher := s.open(t, "/api/v1/watch", `{"event_type":"steady","identifier":{}}`)
	if ev := watcher.next(wait); ev.Data["type"] != "connection_established" {
		t.Fatalf("watch: %s", ev.Raw)
	}
	for i := range 5 {
		s.notify(t, fmt.Sprintf(`{"event_type":"steady","identifier":{"k":"v%d"}}`, i))
		if ev := watcher.skipBeats(wait); ev.Data["id"] != fmt.Sprintf("steady@%d", i+1) {
			t.Fatalf("watcher: %s %s", ev.Name, ev.Raw)
		}
	}

	// max_messages 100 → 3, and an added event type.
	next := strings.Replace(storageBase, "max_messages: 100", "max_messages: 3", 1) +
		"  fresh:\n    topic: {base: fresh, key_order: [k]}\n    storage_policy: {max_messages: 7}\n    identifier:\n      k: {type: StringHandler, required: false}\n"
	r := s.reload(t, next)
	if r.Status != http.StatusOK || fmt.Sprint(r.Body["storage_reconciled"], r.Body["added"], r.Body["changed"]) != "[steady] [fresh] []" ||
		r.Body["streams_ended"] != float64(0) {
		t.Fatalf("reload: %d %s", r.Status, r.Raw)
	}
	if i := info("STEADY"); i.Config.MaxMsgs != 3 || i.State.Msgs != 3 || i.State.FirstSeq != 3 {
		t.Errorf("STEADY after the reload: max_msgs %d, %d messages from %d", i.Config.MaxMsgs, i.State.Msgs, i.State.FirstSeq)
	}
	if c := info("FRESH").Config; c.MaxMsgs != 7 || c.Metadata[jetstream.MetadataBase] != "fresh" {
		t.Errorf("FRESH after the reload: %+v", c)
	}
	if c := info("OTHER").Config; c.MaxMsgs != -1 {
		t.Errorf("OTHER after the reload: %+v", c)
	}
	s.notify(t, `{"event_type":"fresh","identifier":{"k":"a"}}`)
	if seq, err := eng.LastSeq(context.Background(), "fresh"); err != nil || seq != 1 {
		t.Errorf("FRESH last sequence %d, %v", seq, err)
	}
	// The watcher of the reconciled event type goes on.
	s.notify(t, `{"event_type":"steady","identifier":{"k":"after"}}`)
	if ev := watcher.skipBeats(wait); ev.Data["id"] != "steady@6" {
		t.Fatalf("watcher after the reload: %s %s", ev.Name, ev.Raw)
	}

	// file → memory is refused by JetStream for existing streams: the
	// reload changes nothing, not even the parts it could apply.
	fingerprint := s.Server.Runtime().Fingerprint
	refused := strings.Replace(next, "storage_type: file", "storage_type: memory", 1)
	refused = strings.Replace(refused, "max_messages: 3", "max_messages: 50", 1)
	refused += "  late:\n    topic: {base: late, key_order: [k]}\n    identifier:\n      k: {type: StringHandler, required: false}\n"
	r = s.reload(t, refused)
	// Refused by name, like a setting that cannot change live.
	if r.Status != http.StatusConflict || r.Body["code"] != "RELOAD_REFUSED" || s.Server.Runtime().Fingerprint != fingerprint {
		t.Fatalf("refused storage reload: %d %s", r.Status, r.Raw)
	}
	const why = ": storage cannot change from File to Memory: JetStream cannot change the storage type of an existing stream (notification_backend.jetstream.storage_type); keep the current one, or move the notifications to a new stream by hand"
	if got, want := fmt.Sprint(r.Body["refused"]), "[event type steady (stream STEADY)"+why+" event type other (stream OTHER)"+why+" event type fresh (stream FRESH)"+why+"]"; got != want {
		t.Errorf("refused list\n%s\nwant\n%s", got, want)
	}
	if _, err := s.Server.Reload(context.Background(), herald.ReloadOptions{}); err == nil {
		t.Fatal("direct reload accepted")
	} else if msg := err.Error(); !strings.Contains(msg, "event type steady (stream STEADY): storage cannot change from File to Memory") ||
		!strings.Contains(msg, "nothing was applied") {
		t.Errorf("refusal does not name the event type and the setting: %v", err)
	}
	if i := info("STEADY"); i.Config.MaxMsgs != 3 || i.Config.Storage != natsjs.FileStorage {
		t.Errorf("STEADY after the refused reload: %+v", i.Config)
	}
	if _, err := streamInfo(t, eng, "LATE"); err == nil {
		t.Error("the refused reload created LATE")
	}
	if r := s.do(t, http.MethodPost, "/api/v1/notification", `{"event_type":"late","identifier":{"k":"x"}}`); r.Body["code"] != "UNKNOWN_EVENT_TYPE" {
		t.Errorf("the refused reload added an event type: %s", r.Raw)
	}
	s.notify(t, `{"event_type":"steady","identifier":{"k":"last"}}`)
	if ev := watcher.skipBeats(wait); ev.Data["id"] != "steady@7" {
		t.Fatalf("watcher after the refused reload: %s %s", ev.Name, ev.Raw)
	}
}
