package server

import (
	"strings"
	"testing"
	"time"

	"github.com/herald-gateway/herald/configs"
	"github.com/herald-gateway/herald/jetstream"
)

func TestJetStreamOptions(t *testing.T) {
	cfg := configs.Default()
	js := &cfg.NotificationBackend.JetStream
	js.NatsURL = "nats://a:4222,nats://b:4222"
	js.Token = "tok"
	js.TimeoutSeconds, js.RetryAttempts, js.ReconnectDelayMs = 7, 4, 250
	js.MaxReconnectAttempts = 0
	js.PublishRetryAttempts, js.PublishRetryBaseDelayMs = 6, 40
	maxMsgs, replicas := int64(500), 3
	js.MaxMessages, js.Replicas = &maxMsgs, &replicas
	js.RetentionTime = "2d"
	js.StorageType, js.RetentionPolicy, js.DiscardPolicy = "memory", "limits", "new"
	js.DataDir, js.Listen, js.SyncAlways = "/var/lib/herald", "127.0.0.1:4222", true
	age, size, dup, comp := "12h", "2Gi", true, true
	cfg.NotificationSchema = []*configs.Schema{
		{Name: "dissemination", Topic: &configs.Topic{Base: "diss"},
			StoragePolicy: &configs.StoragePolicy{RetentionTime: &age, MaxSize: &size, AllowDuplicates: &dup, Compression: &comp}},
		{Name: "plain"},
	}
	o, err := JetStreamOptions(&cfg)
	if err != nil {
		t.Fatal(err)
	}
	if o.URL != js.NatsURL || o.Token != "tok" || o.ConnectTimeout != 7*time.Second || o.ConnectAttempts != 4 ||
		o.ReconnectDelay != 250*time.Millisecond || o.MaxReconnects != -1 || o.NoReconnect ||
		o.PublishAttempts != 6 || o.PublishRetryBase != 40*time.Millisecond {
		t.Errorf("connection options %+v", o)
	}
	if o.Embedded != (jetstream.EmbeddedOptions{DataDir: "/var/lib/herald", Listen: "127.0.0.1:4222", SyncAlways: true}) {
		t.Errorf("embedded options %+v", o.Embedded)
	}
	want := jetstream.StreamPolicy{MaxAge: 48 * time.Hour, MaxMsgs: 500, MaxBytes: -1, Storage: "memory", Retention: "limits", Discard: "new", Replicas: 3}
	if o.Defaults != want {
		t.Errorf("defaults %+v, want %+v", o.Defaults, want)
	}
	if len(o.Streams) != 2 || o.Streams[0].Base != "diss" || o.Streams[0].EventType != "dissemination" || o.Streams[1].Base != "plain" {
		t.Fatalf("streams %+v", o.Streams)
	}
	p := o.Streams[0].Policy
	if p.MaxAge == nil || *p.MaxAge != 12*time.Hour || p.MaxBytes == nil || *p.MaxBytes != 2<<30 ||
		p.MaxMsgsPerSubject == nil || *p.MaxMsgsPerSubject != -1 || p.Compression == nil || !*p.Compression || p.MaxMsgs != nil {
		t.Errorf("diss policy %+v", p)
	}
	if p := o.Streams[1].Policy; p != (jetstream.PolicyOverride{}) {
		t.Errorf("plain has no storage_policy, got %+v", p)
	}
	bad := "forever"
	cfg.NotificationSchema[0].StoragePolicy.RetentionTime = &bad
	if _, err := JetStreamOptions(&cfg); err == nil || !strings.Contains(err.Error(), "notification_schema.dissemination.storage_policy") {
		t.Errorf("bad retention_time: %v", err)
	}
}

// TestOptionsFromConfigReconnect: as in aviso-server 0.13,
// max_reconnect_attempts unset or 0 reconnects without limit (the
// client library's -1) and N bounds each burst to N, and
// enable_auto_reconnect is accepted and ignored: false does not turn the
// library's reconnection off.
func TestOptionsFromConfigReconnect(t *testing.T) {
	for _, tc := range []struct {
		name    string
		yaml    string
		wantMax int
	}{
		{"unset", "{}", -1},
		{"zero", "{max_reconnect_attempts: 0}", -1},
		{"bounded", "{max_reconnect_attempts: 3}", 3},
		{"enable_auto_reconnect false", "{enable_auto_reconnect: false}", -1},
		{"enable_auto_reconnect true", "{enable_auto_reconnect: true, max_reconnect_attempts: 7}", 7},
	} {
		t.Run(tc.name, func(t *testing.T) {
			cfg, err := configs.Parse([]byte("application: {host: h, port: 1}\nnotification_backend: {kind: jetstream, jetstream: "+tc.yaml+"}\n"), nil)
			if err != nil {
				t.Fatal(err)
			}
			o, err := JetStreamOptions(cfg)
			if err != nil {
				t.Fatal(err)
			}
			if o.MaxReconnects != tc.wantMax || o.NoReconnect {
				t.Errorf("MaxReconnects %d, NoReconnect %v; want %d, false", o.MaxReconnects, o.NoReconnect, tc.wantMax)
			}
		})
	}
}
