package main

import (
	"fmt"
	"strings"
)

// The event types of the run, one JetStream stream each (named after the
// topic base, upper-cased, by both servers): notify load, stored history
// for the replay, live fan-out, and herald's batch notify.
const (
	typeNotify = "bench"
	typeReplay = "replay"
	typeLive   = "live"
	typeBatch  = "batch"
)

// eventTypes lists the event types the config declares.
var eventTypes = []string{typeNotify, typeReplay, typeLive, typeBatch}

// configParams is what the config of a run depends on.
type configParams struct {
	engine string // jetstream or in_memory
	// replayBatch is watch_endpoint.replay_batch_size.
	replayBatch int
	// maxTopics bounds the in-memory backend's subjects; it must exceed
	// every subject a round creates, so that nothing stored is evicted.
	maxTopics int
	// logLevel is logging.level of both servers.
	logLevel string
}

// writeConfig returns the text of the one config file both servers read:
// only keys aviso-server defines, with every key aviso-server requires
// once a block is present (watch_endpoint's six, logging's two). The
// listening port and the NATS URL are placeholders here, set per run
// through the environment overrides both servers honour
// (AVISOSERVER_APPLICATION__PORT and
// AVISOSERVER_NOTIFICATION_BACKEND__JETSTREAM__NATS_URL), so that one
// file serves every side and round.
//
// The replay cap (max_historical_notifications) is far above any replay
// of the run, there is no pause between history pages, and on JetStream
// every notification of a subject is kept (allow_duplicates), so that a
// replay returns everything stored.
func writeConfig(p configParams) (string, error) {
	var b strings.Builder
	fmt.Fprintf(&b, "application:\n  host: 127.0.0.1\n  port: 8000\n  base_url: http://localhost\n")
	fmt.Fprintf(&b, "logging:\n  level: %s\n  format: json\n", p.logLevel)
	switch p.engine {
	case "jetstream":
		fmt.Fprintf(&b, "notification_backend:\n  kind: jetstream\n  jetstream:\n    nats_url: nats://127.0.0.1:4222\n    storage_type: file\n")
	case "in_memory":
		if p.maxTopics < 1 {
			return "", fmt.Errorf("in_memory: max_topics %d: want at least 1", p.maxTopics)
		}
		fmt.Fprintf(&b, "notification_backend:\n  kind: in_memory\n  in_memory:\n    max_history_per_topic: 1\n    max_topics: %d\n", p.maxTopics)
	default:
		return "", fmt.Errorf("engine %q: want jetstream or in_memory", p.engine)
	}
	if p.replayBatch < 1 {
		return "", fmt.Errorf("replay batch %d: want at least 1", p.replayBatch)
	}
	fmt.Fprintf(&b, "watch_endpoint:\n  sse_heartbeat_interval_sec: 30\n  connection_max_duration_sec: 3600\n"+
		"  replay_batch_size: %d\n  max_historical_notifications: 100000000\n  replay_batch_delay_ms: 0\n"+
		"  concurrent_notification_processing: 15\n", p.replayBatch)
	b.WriteString("notification_schema:\n")
	for _, name := range eventTypes {
		fmt.Fprintf(&b, "  %s:\n    payload:\n      required: false\n    topic:\n      base: %s\n      key_order: [class, kind, step]\n", name, name)
		b.WriteString("    identifier:\n" +
			"      class:\n        type: StringHandler\n        required: false\n" +
			"      kind:\n        type: StringHandler\n        required: false\n" +
			"      step:\n        type: IntHandler\n        required: false\n")
		if p.engine == "jetstream" {
			// Not allowed on the in-memory backend.
			b.WriteString("    storage_policy:\n      allow_duplicates: true\n")
		}
	}
	return b.String(), nil
}

// sideEnv returns the environment overrides that place one server of a
// run: its config file, its port and, on JetStream, its nats-server.
func sideEnv(configPath string, port int, natsURL string) []string {
	env := []string{
		"AVISOSERVER_CONFIG_FILE=" + configPath,
		fmt.Sprintf("AVISOSERVER_APPLICATION__PORT=%d", port),
	}
	if natsURL != "" {
		env = append(env, "AVISOSERVER_NOTIFICATION_BACKEND__JETSTREAM__NATS_URL="+natsURL)
	}
	return env
}

// notifyBody is the notify request of notification i of an event type,
// on class i%16 and the given step, with the given payload JSON.
func notifyBody(eventType string, i, step int, payload string) string {
	return fmt.Sprintf(`{"event_type":%q,"identifier":{"class":"c%02d","kind":"k","step":%d},"payload":%s}`, eventType, i%16, step, payload)
}

// loadSubjects is the number of subjects the notify and batch loads
// cycle through (16 classes × 1000 steps each).
const loadSubjects = 16 * 1000
