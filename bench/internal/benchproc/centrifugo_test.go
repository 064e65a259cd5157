package benchproc

import (
	"encoding/json"
	"reflect"
	"testing"
)

// TestCentrifugoConfig checks the generated config's options in
// Centrifugo v6's layout, with a raised queue and with the default one.
func TestCentrifugoConfig(t *testing.T) {
	want := map[string]any{
		"http_server": map[string]any{"address": "127.0.0.1", "port": 18000.0},
		"log":         map[string]any{"level": "warn"},
		"client":      map[string]any{"allow_anonymous_connect_without_token": true, "queue_max_size": float64(3 << 20)},
		"channel": map[string]any{"namespaces": []any{map[string]any{
			"name": "bench", "allow_subscribe_for_anonymous": true, "allow_subscribe_for_client": true}}},
		"http_api":    map[string]any{"key": "bench-api-key"},
		"usage_stats": map[string]any{"disabled": true},
	}
	var cfg map[string]any
	if err := json.Unmarshal(CentrifugoConfig(18000, 3<<20), &cfg); err != nil {
		t.Fatal(err)
	}
	if !reflect.DeepEqual(cfg, want) {
		t.Errorf("config = %v\nwant %v", cfg, want)
	}
	cfg = nil
	if err := json.Unmarshal(CentrifugoConfig(18000, 0), &cfg); err != nil {
		t.Fatal(err)
	}
	want["client"] = map[string]any{"allow_anonymous_connect_without_token": true}
	if !reflect.DeepEqual(cfg, want) {
		t.Errorf("config with the default queue = %v\nwant %v", cfg, want)
	}
}
