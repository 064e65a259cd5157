package benchproc

import (
	"debug/buildinfo"
	"encoding/json"
)

// CentrifugoAPIKey is the HTTP API key of CentrifugoConfig (sent in the
// X-API-Key header).
const CentrifugoAPIKey = "bench-api-key"

// CentrifugoNamespace is the channel namespace CentrifugoConfig opens to
// anonymous subscribers: channels named "bench:...".
const CentrifugoNamespace = "bench"

// CentrifugoConfig is a config for Centrifugo v6 (its JSON layout) as
// the load tools run it beside herald: listening on 127.0.0.1:port only,
// logging warnings only, accepting connections without a token
// (anonymous), with the namespace CentrifugoNamespace open to anonymous
// and authenticated subscribers, the HTTP API behind CentrifugoAPIKey,
// no usage statistics sent. queueBytes is the outgoing queue of each
// client connection (client.queue_max_size; 0 keeps Centrifugo's
// default, 1 MiB): a connection whose queue grows beyond it is
// disconnected as slow. Everything else is Centrifugo's default.
func CentrifugoConfig(port, queueBytes int) []byte {
	client := map[string]any{"allow_anonymous_connect_without_token": true}
	if queueBytes > 0 {
		client["queue_max_size"] = queueBytes
	}
	cfg := map[string]any{
		"http_server": map[string]any{"address": "127.0.0.1", "port": port},
		"log":         map[string]any{"level": "warn"},
		"client":      client,
		"channel": map[string]any{
			"namespaces": []map[string]any{{
				"name":                          CentrifugoNamespace,
				"allow_subscribe_for_anonymous": true,
				"allow_subscribe_for_client":    true,
			}},
		},
		"http_api":    map[string]any{"key": CentrifugoAPIKey},
		"usage_stats": map[string]any{"disabled": true},
	}
	b, err := json.MarshalIndent(cfg, "", "  ")
	if err != nil {
		panic(err) // maps of strings, numbers and booleans always encode
	}
	return b
}

// CentrifugoVersion returns the module path and version the Go binary at
// path was built from (a Centrifugo built with go install says v0.0.0 to
// its version command, but its build information holds the module's
// version).
func CentrifugoVersion(path string) string {
	bi, err := buildinfo.ReadFile(path)
	if err != nil {
		return "unknown version (" + err.Error() + ")"
	}
	return bi.Main.Path + " " + bi.Main.Version
}
