package main

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/herald-gateway/herald/configs"
)

// TestConfigLoads loads the config of each engine with herald's config
// loader, with the environment overrides the tool gives each server, and
// checks what the measurements rely on.
func TestConfigLoads(t *testing.T) {
	for _, engine := range []string{"jetstream", "in_memory"} {
		t.Run(engine, func(t *testing.T) {
			text, err := writeConfig(configParams{engine: engine, replayBatch: 250, maxTopics: 150000, logLevel: "warn"})
			if err != nil {
				t.Fatal(err)
			}
			path := filepath.Join(t.TempDir(), "config.yaml")
			if err := os.WriteFile(path, []byte(text), 0o600); err != nil {
				t.Fatal(err)
			}
			url := ""
			if engine == "jetstream" {
				url = "nats://127.0.0.1:4999"
			}
			env := sideEnv(path, 18123, url)
			if env[0] != "AVISOSERVER_CONFIG_FILE="+path {
				t.Errorf("env[0] = %q, want the config file", env[0])
			}
			cfg, err := configs.Load(path, env)
			if err != nil {
				t.Fatalf("herald refused the config: %v\n%s", err, text)
			}
			if cfg.Application.Host != "127.0.0.1" || cfg.Application.Port != 18123 {
				t.Errorf("listens on %s:%d, want 127.0.0.1:18123", cfg.Application.Host, cfg.Application.Port)
			}
			if cfg.Logging.Level != "warn" || cfg.Logging.Format != "json" {
				t.Errorf("logging %+v, want level warn, format json", cfg.Logging)
			}
			b := cfg.NotificationBackend
			if b.Kind != engine {
				t.Errorf("backend kind %q, want %q", b.Kind, engine)
			}
			if engine == "jetstream" && b.JetStream.NatsURL != url {
				t.Errorf("nats_url %q, want %q", b.JetStream.NatsURL, url)
			}
			if engine == "in_memory" && (b.InMemory.MaxTopics != 150000 || b.InMemory.MaxHistoryPerTopic != 1) {
				t.Errorf("in_memory %+v, want max_topics 150000, max_history_per_topic 1", b.InMemory)
			}
			w := cfg.WatchEndpoint
			if w.ReplayBatchSize != 250 || w.ReplayBatchDelayMs != 0 || w.MaxHistoricalNotifications != 100000000 {
				t.Errorf("watch_endpoint %+v, want batch 250, no delay, cap 100000000", w)
			}
			var names []string
			for _, s := range cfg.NotificationSchema {
				names = append(names, s.Name)
				if s.Topic == nil || s.Topic.Base != s.Name || strings.Join(s.Topic.KeyOrder, ",") != "class,kind,step" {
					t.Errorf("%s: topic %+v, want base %s, key_order class,kind,step", s.Name, s.Topic, s.Name)
				}
				if len(s.Identifier) != 3 {
					t.Errorf("%s: %d identifier fields, want 3", s.Name, len(s.Identifier))
				}
				dup := s.StoragePolicy != nil && s.StoragePolicy.AllowDuplicates != nil && *s.StoragePolicy.AllowDuplicates
				if dup != (engine == "jetstream") {
					t.Errorf("%s: allow_duplicates %v on %s", s.Name, dup, engine)
				}
			}
			if strings.Join(names, ",") != strings.Join(eventTypes, ",") {
				t.Errorf("event types %v, want %v", names, eventTypes)
			}
		})
	}
}

// TestConfigRefusals checks that the writer refuses what would make a
// config neither server accepts.
func TestConfigRefusals(t *testing.T) {
	for _, p := range []configParams{
		{engine: "kafka", replayBatch: 1, maxTopics: 1, logLevel: "info"},
		{engine: "jetstream", replayBatch: 0, maxTopics: 1, logLevel: "info"},
		{engine: "in_memory", replayBatch: 1, maxTopics: 0, logLevel: "info"},
	} {
		if text, err := writeConfig(p); err == nil {
			t.Errorf("writeConfig(%+v) gave no error:\n%s", p, text)
		}
	}
}
