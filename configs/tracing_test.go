package configs

import (
	"reflect"
	"testing"
)

// TestTracingConfig loads tracing blocks: the defaults, the rules of
// each key (the endpoint checked only when tracing is on), the
// environment overrides and metrics.pprof.
func TestTracingConfig(t *testing.T) {
	const head = "application: {host: h, port: 1}\nnotification_backend: {kind: in_memory}\n"
	for _, tc := range []struct {
		name     string
		yaml     string
		env      []string
		want     *Tracing
		url      string
		problems string
	}{
		{name: "absent", want: nil},
		{name: "null", yaml: "tracing:\n", want: nil},
		{name: "empty", yaml: "tracing: {}\n", want: &Tracing{Protocol: "grpc", SampleRatio: 1, MaxQueueSize: 2048}},
		{name: "grpc", yaml: "tracing: {enabled: true, endpoint: 'otel:4317'}\n",
			want: &Tracing{Enabled: true, Endpoint: "otel:4317", Protocol: "grpc", SampleRatio: 1, MaxQueueSize: 2048}, url: "http://otel:4317"},
		{name: "http", yaml: "tracing:\n  enabled: true\n  endpoint: https://otel:4318/\n  protocol: http\n  sample_ratio: 0.25\n  max_queue_size: 100\n",
			want: &Tracing{Enabled: true, Endpoint: "https://otel:4318/", Protocol: "http", SampleRatio: 0.25, MaxQueueSize: 100}, url: "https://otel:4318/v1/traces"},
		{name: "ratio integer", yaml: "tracing: {sample_ratio: 0}\n", want: &Tracing{Protocol: "grpc", MaxQueueSize: 2048}},
		{name: "disabled endpoint not checked", yaml: "tracing: {endpoint: 'ftp://u:p@'}\n",
			want: &Tracing{Endpoint: "ftp://u:p@", Protocol: "grpc", SampleRatio: 1, MaxQueueSize: 2048}},
		{name: "environment", env: []string{"HERALD_TRACING__ENABLED=true", "HERALD_TRACING__ENDPOINT=c:4318", "HERALD_TRACING__PROTOCOL=http", "HERALD_TRACING__SAMPLE_RATIO=0.5"},
			want: &Tracing{Enabled: true, Endpoint: "c:4318", Protocol: "http", SampleRatio: 0.5, MaxQueueSize: 2048}, url: "http://c:4318/v1/traces"},
		{name: "enabled without endpoint", yaml: "tracing: {enabled: true}\n",
			problems: "tracing.endpoint: required when tracing.enabled is true: the collector's address, e.g. otel-collector:4317 (grpc) or otel-collector:4318 (http) (line 3)"},
		{name: "protocol", yaml: "tracing: {protocol: udp}\n", problems: `tracing.protocol: must be grpc or http, got "udp" (line 3)`},
		{name: "ratio above 1", yaml: "tracing: {sample_ratio: 1.5}\n",
			problems: "tracing.sample_ratio: must be between 0 and 1 (the share of new traces recorded), got 1.5 (line 3)"},
		{name: "ratio negative", yaml: "tracing: {sample_ratio: -0.1}\n",
			problems: "tracing.sample_ratio: must be between 0 and 1 (the share of new traces recorded), got -0.1 (line 3)"},
		{name: "ratio not a number", yaml: "tracing: {sample_ratio: half}\n",
			problems: `tracing.sample_ratio: expected a number, got "half" (line 3)`},
		{name: "ratio infinite", yaml: "tracing: {sample_ratio: .inf}\n",
			problems: `tracing.sample_ratio: expected a number, got ".inf" (line 3)`},
		{name: "queue", yaml: "tracing: {max_queue_size: 0}\n", problems: "tracing.max_queue_size: must be greater than 0, got 0 (line 3)"},
		{name: "scheme", yaml: "tracing: {enabled: true, endpoint: 'grpc://c:4317'}\n",
			problems: `tracing.endpoint: must be host:port or an http:// or https:// URL, got scheme "grpc" in "grpc://c:4317" (line 3)`},
		{name: "credentials", yaml: "tracing: {enabled: true, endpoint: 'http://u:p@c:4317'}\n",
			problems: "tracing.endpoint: must not carry a user name or password; the exporter sends no credentials from the URL (line 3)"},
		{name: "unknown key", yaml: "tracing: {enabled: false, headers: {a: b}}\n",
			problems: "tracing.headers: unknown key (line 3)"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			c, err := Parse([]byte(head+tc.yaml), tc.env)
			if tc.problems != "" {
				if err == nil || err.Error() != tc.problems {
					t.Fatalf("error:\n%v\nwant:\n%s", err, tc.problems)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if !reflect.DeepEqual(c.Tracing, tc.want) {
				t.Errorf("tracing = %+v, want %+v", c.Tracing, tc.want)
			}
			if tc.url != "" && (!c.Tracing.On() || c.Tracing.ExportURL() != tc.url) {
				t.Errorf("On %v, ExportURL %q; want on, %q", c.Tracing.On(), c.Tracing.ExportURL(), tc.url)
			}
		})
	}
}

// TestMetricsPprof: metrics.pprof is off by default, on with the
// listener, and refused without it.
func TestMetricsPprof(t *testing.T) {
	const head = "application: {host: h, port: 1}\nnotification_backend: {kind: in_memory}\n"
	c, err := Parse([]byte(head+"metrics: {enabled: true, port: 9090}\n"), nil)
	if err != nil || c.Metrics.Pprof {
		t.Fatalf("default: pprof %v, err %v; want false, nil", c != nil && c.Metrics.Pprof, err)
	}
	c, err = Parse([]byte(head+"metrics: {enabled: true, port: 9090, pprof: true}\n"), nil)
	if err != nil || !c.Metrics.Pprof {
		t.Fatalf("on: pprof %v, err %v; want true, nil", c != nil && c.Metrics.Pprof, err)
	}
	_, err = Parse([]byte(head+"metrics: {enabled: false, pprof: true}\n"), nil)
	const want = "metrics.pprof: needs metrics.enabled true: the profiles are served on the metrics listener (line 3)"
	if err == nil || err.Error() != want {
		t.Fatalf("error %v, want %s", err, want)
	}
}
