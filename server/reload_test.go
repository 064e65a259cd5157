package server

import (
	"fmt"
	"testing"

	"github.com/herald-gateway/herald/configs"
)

// TestFixedChangesOTLP: a reload that changes the log's OTLP export is
// refused by name (the pipeline is built at startup), judged by effect:
// adding a disabled block, or changing a key the block ignores or the
// endpoint's spelling of the same URL, is no change; so is
// enable_auto_reconnect, which is ignored.
func TestFixedChangesOTLP(t *testing.T) {
	base := "application: {host: 127.0.0.1, port: 0}\nnotification_backend: {kind: in_memory}\n"
	for _, tc := range []struct {
		name, old, next string
		want            string
	}{
		{"enabled", "", "logging: {otlp: {enabled: true, endpoint: c:4317}}\n", "[logging.otlp]"},
		{"disabled", "logging: {otlp: {enabled: true, endpoint: c:4317}}\n", "logging: {otlp: {enabled: false, endpoint: c:4317}}\n", "[logging.otlp]"},
		{"endpoint", "logging: {otlp: {enabled: true, endpoint: c:4317}}\n", "logging: {otlp: {enabled: true, endpoint: d:4317}}\n", "[logging.otlp]"},
		{"protocol", "logging: {otlp: {enabled: true, endpoint: c:4317}}\n", "logging: {otlp: {enabled: true, endpoint: c:4317, protocol: http}}\n", "[logging.otlp]"},
		{"disabled block added", "", "logging: {otlp: {enabled: false, endpoint: c:4317}}\n", "[]"},
		{"same URL", "logging: {otlp: {enabled: true, endpoint: c:4317}}\n", "logging: {otlp: {enabled: true, endpoint: ' http://c:4317', headers: x}}\n", "[]"},
		{"tracing enabled", "", "tracing: {enabled: true, endpoint: c:4317}\n", "[tracing]"},
		{"tracing ratio", "tracing: {enabled: true, endpoint: c:4317}\n", "tracing: {enabled: true, endpoint: c:4317, sample_ratio: 0.5}\n", "[tracing]"},
		{"tracing disabled block added", "", "tracing: {enabled: false, endpoint: c:4317}\n", "[]"},
		{"tracing same URL", "tracing: {enabled: true, endpoint: c:4317}\n", "tracing: {enabled: true, endpoint: 'http://c:4317'}\n", "[]"},
		{"metrics.pprof", "metrics: {enabled: true, port: 9000}\n", "metrics: {enabled: true, port: 9000, pprof: true}\n", "[metrics]"},
		{"enable_auto_reconnect", "", "notification_backend: {kind: in_memory, jetstream: {enable_auto_reconnect: false}}\n", "[]"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			old, err := configs.Parse([]byte(base+tc.old), nil)
			if err != nil {
				t.Fatal(err)
			}
			nextText := base + tc.next
			if tc.name == "enable_auto_reconnect" {
				nextText = "application: {host: 127.0.0.1, port: 0}\n" + tc.next
			}
			next, err := configs.Parse([]byte(nextText), nil)
			if err != nil {
				t.Fatal(err)
			}
			if got := fmt.Sprint(fixedChanges(old, next)); got != tc.want {
				t.Errorf("fixedChanges = %s, want %s", got, tc.want)
			}
		})
	}
}
