package openapi

import (
	"bytes"
	_ "embed"
	"net/http"
)

// The AsyncAPI 3.0 document of the WebSocket session protocol herald.v1
// (asyncapi.json, embedded), and the check of a frame against it.

//go:embed asyncapi.json
var asyncSpec []byte

// AsyncAPIPath is where herald serves the AsyncAPI document.
const AsyncAPIPath = "/api-docs/asyncapi.json"

// AsyncAPISpec returns the raw AsyncAPI document (a copy: callers may
// modify it).
func AsyncAPISpec() []byte { return bytes.Clone(asyncSpec) }

// AsyncAPIDocument serves GET /api-docs/asyncapi.json: the AsyncAPI
// document of the session protocol as application/json.
func AsyncAPIDocument(w http.ResponseWriter, r *http.Request) {
	w.Header().Set("Content-Type", "application/json")
	_, _ = w.Write(asyncSpec)
}
