package openapi_test

import (
	"context"
	"encoding/json"
	"net/http/httptest"
	"slices"
	"sort"
	"testing"

	"herald/configs"
	"herald/handlers"
	"herald/openapi"
	"herald/server"
)

// TestNotifyExamplesSuitTheShippedConfig checks the examples a new user
// tries first (the docs page prefills notify with the first one) against
// the default config, configs/config.yaml: every notify request example,
// the Request schema's and the event_type parameter's name an event type
// it configures, and herald running it stores every notify example (200,
// as documented).
func TestNotifyExamplesSuitTheShippedConfig(t *testing.T) {
	// As shipped: the embedded JetStream (storing under a temporary
	// directory), which its storage_policy needs.
	cfg, err := configs.Load("../configs/config.yaml", []string{
		"HERALD_NOTIFICATION_BACKEND__JETSTREAM__DATA_DIR=" + t.TempDir(), "HERALD_APPLICATION__PORT=0"})
	if err != nil {
		t.Fatal(err)
	}
	var shipped []string
	for _, s := range cfg.NotificationSchema {
		shipped = append(shipped, s.Name)
	}
	sort.Strings(shipped)
	if !slices.Equal(shipped, []string{"alert", "mars"}) {
		t.Fatalf("the shipped config's event types are %v; the examples are written for alert and mars", shipped)
	}

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
		Components struct {
			Schemas struct {
				Request struct {
					Examples []struct {
						EventType string `json:"event_type"`
					} `json:"examples"`
					Properties struct {
						EventType struct{ Examples []string } `json:"event_type"`
					} `json:"properties"`
				} `json:"Request"`
			} `json:"schemas"`
			Parameters struct {
				EventType struct{ Example string } `json:"EventType"`
			} `json:"parameters"`
		} `json:"components"`
	}
	if err := json.Unmarshal(openapi.Spec(), &doc); err != nil {
		t.Fatal(err)
	}
	names := map[string]string{"the event_type parameter's example": doc.Components.Parameters.EventType.Example}
	for i, e := range doc.Components.Schemas.Request.Examples {
		names["Request example "+string(rune('0'+i))] = e.EventType
	}
	for i, e := range doc.Components.Schemas.Request.Properties.EventType.Examples {
		names["Request.event_type example "+string(rune('0'+i))] = e
	}
	examples := doc.Paths["/api/v1/notification"]["post"].RequestBody.Content["application/json"].Examples
	if len(examples) < 3 {
		t.Fatalf("only %d notify request examples", len(examples))
	}
	for name, e := range examples {
		var req struct {
			EventType string `json:"event_type"`
		}
		if err := json.Unmarshal(e.Value, &req); err != nil {
			t.Fatalf("notify example %s: %v", name, err)
		}
		names["notify example "+name] = req.EventType
	}
	for where, et := range names {
		if !slices.Contains(shipped, et) {
			t.Errorf("%s names event type %q, which configs/config.yaml does not configure", where, et)
		}
	}

	srv, err := server.New(context.Background(), cfg, server.Options{Version: "test"})
	if err != nil {
		t.Fatal(err)
	}
	ts := httptest.NewUnstartedServer(srv)
	ts.Config.ConnContext = handlers.ConnContext
	ts.Start()
	t.Cleanup(ts.Close)
	t.Cleanup(srv.Close)
	for name, e := range examples {
		r := send(t, ts.URL, "POST", "/api/v1/notification", nil, e.Value)
		conform(t, r, "POST", "/api/v1/notification", 200)
		if t.Failed() {
			t.Logf("notify example %s: %s", name, r.body)
		}
	}
}
