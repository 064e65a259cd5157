package server

import (
	"os/exec"
	"strings"
	"testing"
	"time"

	"github.com/herald-gateway/herald/configs"
	"github.com/herald-gateway/herald/engine"
	"github.com/herald-gateway/herald/handlers"
	"github.com/herald-gateway/herald/jetstream"
	"github.com/herald-gateway/herald/session"
	"github.com/herald-gateway/herald/stream"
)

// TestDefaultsAgree: the runtime packages own their defaults (a zero
// option takes them), and the config file's defaults are the same values,
// so a key left out of the file and an option left zero in code mean one
// thing.
func TestDefaultsAgree(t *testing.T) {
	d := configs.Default()
	w, s := d.WatchEndpoint, d.Session
	for _, c := range []struct {
		key            string
		config, native int64
	}{
		{"application.max_body_bytes", d.Application.MaxBodyBytes, handlers.DefaultMaxBodyBytes},
		{"application.max_batch_notifications", int64(d.Application.MaxBatchNotifications), handlers.DefaultMaxBatchNotifications},
		{"watch_endpoint.replay_batch_size", int64(w.ReplayBatchSize), stream.DefaultReplayBatchSize},
		{"watch_endpoint.live_queue_size", int64(w.LiveQueueSize), engine.DefaultLiveQueueSize},
		{"watch_endpoint.max_lag_sec", int64(time.Duration(w.MaxLagSec) * time.Second), int64(stream.DefaultMaxLag)},
		{"notification_backend.in_memory.max_history_per_topic", int64(d.NotificationBackend.InMemory.MaxHistoryPerTopic), engine.DefaultMaxHistoryPerTopic},
		{"notification_backend.in_memory.max_topics", int64(d.NotificationBackend.InMemory.MaxTopics), engine.DefaultMaxTopics},
		{"session.max_subscriptions", int64(s.MaxSubscriptions), session.DefaultMaxSubscriptions},
		{"session.max_producers", int64(s.MaxProducers), session.DefaultMaxProducers},
		{"session.max_producer_bytes", s.MaxProducerBytes, session.DefaultMaxProducerBytes},
		{"session.producer_credit", int64(s.ProducerCredit), session.DefaultProducerCredit},
		{"session.producer_max_batch", int64(s.ProducerMaxBatch), session.DefaultProducerMaxBatch},
		{"session.session_queue_frames", int64(s.QueueFrames), session.DefaultQueueFrames},
		{"session.session_queue_bytes", int64(s.QueueBytes), session.DefaultQueueBytes},
		{"session.max_frame_events", int64(s.MaxFrameEvents), session.DefaultMaxFrameEvents},
		{"session.max_frame_bytes", int64(s.MaxFrameBytes), session.DefaultMaxFrameBytes},
		{"session.blocking_timeout_ms", int64(time.Duration(s.BlockingTimeoutMs) * time.Millisecond), int64(session.DefaultBlockingTimeout)},
		{"session.max_sessions_per_user", int64(s.MaxSessionsPerUser), session.DefaultMaxSessionsPerUser},
	} {
		if c.config != c.native {
			t.Errorf("%s: the config file's default is %d, the runtime's %d", c.key, c.config, c.native)
		}
	}
	if got := d.NotificationBackend.JetStream.DataDir; got != jetstream.DefaultDataDir {
		t.Errorf("notification_backend.jetstream.data_dir: the config file's default is %q, the runtime's %q", got, jetstream.DefaultDataDir)
	}
}

// TestRuntimeImportsNoConfig: the runtime packages take options, not the
// YAML config; server maps one onto the other.
func TestRuntimeImportsNoConfig(t *testing.T) {
	for _, pkg := range []string{"github.com/herald-gateway/herald/engine", "github.com/herald-gateway/herald/stream", "github.com/herald-gateway/herald/handlers", "github.com/herald-gateway/herald/jetstream"} {
		out, err := exec.Command("go", "list", "-f", `{{join .Imports "\n"}}`, pkg).CombinedOutput()
		if err != nil {
			t.Fatalf("go list %s: %v\n%s", pkg, err, out)
		}
		for _, imp := range strings.Fields(string(out)) {
			if imp == "github.com/herald-gateway/herald/configs" {
				t.Errorf("%s imports github.com/herald-gateway/herald/configs", pkg)
			}
		}
	}
}
