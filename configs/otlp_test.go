package configs

import (
	"reflect"
	"strings"
	"testing"
)

// TestOTLPExportURL: the endpoint becomes the export URL as
// aviso-server makes it (its own normalize_endpoint cases first).
func TestOTLPExportURL(t *testing.T) {
	for _, tc := range []struct {
		endpoint, protocol, want string
	}{
		{"collector:4317", OTLPGRPC, "http://collector:4317"},
		{"http://collector:4317", OTLPGRPC, "http://collector:4317"},
		{"https://collector:4317", OTLPGRPC, "https://collector:4317"},
		{"http://collector:4318", OTLPHTTP, "http://collector:4318/v1/logs"},
		{"http://collector:4318/", OTLPHTTP, "http://collector:4318/v1/logs"},
		{"http://collector:4318/v1/logs", OTLPHTTP, "http://collector:4318/v1/logs"},
		{"collector:4318", OTLPHTTP, "http://collector:4318/v1/logs"},
		{" collector:4318 ", OTLPHTTP, "http://collector:4318/v1/logs"},
		{"https://collector/otlp//", OTLPHTTP, "https://collector/otlp/v1/logs"},
		{"http://collector:4318/v1/logs/", OTLPHTTP, "http://collector:4318/v1/logs"},
		{"http://collector:4317/", OTLPGRPC, "http://collector:4317/"},
		{"", OTLPHTTP, ""},
		{"  ", OTLPGRPC, ""},
	} {
		o := &OTLP{Endpoint: tc.endpoint, Protocol: tc.protocol}
		if got := o.ExportURL(); got != tc.want {
			t.Errorf("ExportURL(%q, %s) = %q, want %q", tc.endpoint, tc.protocol, got, tc.want)
		}
	}
}

// TestOTLPConfig loads logging.otlp blocks: aviso-server's rules (the
// protocol lower-case grpc or http whether enabled or not, the endpoint
// required when enabled and unchecked when not, unknown keys ignored),
// herald's refusal of endpoints the exporter cannot use, the warnings,
// and the environment overrides.
func TestOTLPConfig(t *testing.T) {
	const head = "application: {host: h, port: 1}\nnotification_backend: {kind: in_memory}\nlogging:\n  level: info\n  format: json\n"
	for _, tc := range []struct {
		name     string
		otlp     string // written after head (indented two spaces)
		env      []string
		want     *OTLP
		export   string // "protocol URL", "" for none
		problems string
		warnings []string
	}{
		{name: "absent", want: nil},
		{name: "null", otlp: "  otlp:\n", want: nil},
		{name: "empty", otlp: "  otlp: {}\n", want: &OTLP{Protocol: "grpc"}},
		{name: "disabled by default", otlp: "  otlp:\n    endpoint: collector:4317\n",
			want: &OTLP{Endpoint: "collector:4317", Protocol: "grpc"}},
		{name: "grpc", otlp: "  otlp:\n    enabled: true\n    endpoint: \"http://otel-collector:4317\"\n    protocol: grpc\n",
			want: &OTLP{Enabled: true, Endpoint: "http://otel-collector:4317", Protocol: "grpc"}, export: "grpc http://otel-collector:4317"},
		{name: "http", otlp: "  otlp: {enabled: true, endpoint: 'otel-collector:4318', protocol: http}\n",
			want: &OTLP{Enabled: true, Endpoint: "otel-collector:4318", Protocol: "http"}, export: "http http://otel-collector:4318/v1/logs"},
		{name: "https", otlp: "  otlp: {enabled: true, endpoint: 'https://collector.example:443/'}\n",
			want: &OTLP{Enabled: true, Endpoint: "https://collector.example:443/", Protocol: "grpc"}, export: "grpc https://collector.example:443/"},
		{name: "unknown keys ignored", otlp: "  otlp:\n    enabled: false\n    headers: {x-api-key: k}\n    timeout: 5\n",
			want: &OTLP{Protocol: "grpc", Ignored: []string{"logging.otlp.headers (line 8)", "logging.otlp.timeout (line 9)"}},
			warnings: []string{
				"logging.otlp.headers (line 8) is not a key of logging.otlp (enabled, endpoint, protocol) and is ignored, as aviso-server ignores it",
				"logging.otlp.timeout (line 9) is not a key of logging.otlp (enabled, endpoint, protocol) and is ignored, as aviso-server ignores it"}},
		{name: "disabled endpoint not checked", otlp: "  otlp: {enabled: false, endpoint: 'ftp://user:pw@'}\n",
			want: &OTLP{Endpoint: "ftp://user:pw@", Protocol: "grpc"}},
		{name: "enabled without endpoint", otlp: "  otlp: {enabled: true}\n",
			problems: "logging.otlp.endpoint: required when logging.otlp.enabled is true: the collector's address, e.g. otel-collector:4317 (grpc) or otel-collector:4318 (http) (line 6)"},
		{name: "blank endpoint", otlp: "  otlp:\n    enabled: true\n    endpoint: '  '\n",
			problems: "logging.otlp.endpoint: required when logging.otlp.enabled is true: the collector's address, e.g. otel-collector:4317 (grpc) or otel-collector:4318 (http) (line 8)"},
		{name: "protocol in upper case", otlp: "  otlp:\n    protocol: HTTP\n",
			problems: `logging.otlp.protocol: must be grpc or http, got "HTTP" (line 7)`},
		{name: "unknown protocol while disabled", otlp: "  otlp: {protocol: udp}\n",
			problems: `logging.otlp.protocol: must be grpc or http, got "udp" (line 6)`},
		{name: "not a URL", otlp: "  otlp: {enabled: true, endpoint: 'http://coll ector:4317'}\n",
			problems: `logging.otlp.endpoint: must be host:port or an http(s) URL, got "http://coll ector:4317": invalid character " " in host name (line 6)`},
		{name: "other scheme", otlp: "  otlp: {enabled: true, endpoint: 'grpc://collector:4317'}\n",
			problems: `logging.otlp.endpoint: must be host:port or an http:// or https:// URL, got scheme "grpc" in "grpc://collector:4317" (line 6)`},
		{name: "no host", otlp: "  otlp: {enabled: true, endpoint: 'http://:4317'}\n",
			problems: `logging.otlp.endpoint: must name a host, got "http://:4317" (line 6)`},
		{name: "credentials", otlp: "  otlp: {enabled: true, endpoint: 'http://user:pass@collector:4317'}\n",
			problems: "logging.otlp.endpoint: must not carry a user name or password; the exporter sends no credentials from the URL (line 6)"},
		{name: "types", otlp: "  otlp: {enabled: 'true', endpoint: [a], protocol: 1}\n",
			problems: "2 problems:\n  logging.otlp.enabled: expected true or false, got \"true\" (line 6)\n  logging.otlp.endpoint: expected a string, got a list (line 6)"},
		{name: "environment", env: []string{"AVISOSERVER_LOGGING__OTLP__ENABLED=true", "AVISOSERVER_LOGGING__OTLP__ENDPOINT=otel:4318", "HERALD_LOGGING__OTLP__PROTOCOL=http"},
			want: &OTLP{Enabled: true, Endpoint: "otel:4318", Protocol: "http"}, export: "http http://otel:4318/v1/logs"},
		{name: "environment overrides the file", otlp: "  otlp: {enabled: true, endpoint: 'c:4317'}\n", env: []string{"AVISOSERVER_LOGGING__OTLP__ENABLED=false"},
			want: &OTLP{Endpoint: "c:4317", Protocol: "grpc"}},
		{name: "environment block", env: []string{"HERALD_LOGGING__OTLP={enabled: true, endpoint: c:4317, insecure: true}"},
			want: &OTLP{Enabled: true, Endpoint: "c:4317", Protocol: "grpc", Ignored: []string{"logging.otlp.insecure (HERALD_LOGGING__OTLP)"}}, export: "grpc http://c:4317",
			warnings: []string{"logging.otlp.insecure (HERALD_LOGGING__OTLP) is not a key of logging.otlp (enabled, endpoint, protocol) and is ignored, as aviso-server ignores it"}},
		{name: "environment unknown key", env: []string{"AVISOSERVER_LOGGING__OTLP__HEADERS__AUTHORIZATION=x"},
			want:     &OTLP{Protocol: "grpc", Ignored: []string{"logging.otlp.headers.authorization (AVISOSERVER_LOGGING__OTLP__HEADERS__AUTHORIZATION)"}},
			warnings: []string{"logging.otlp.headers.authorization (AVISOSERVER_LOGGING__OTLP__HEADERS__AUTHORIZATION) is not a key of logging.otlp (enabled, endpoint, protocol) and is ignored, as aviso-server ignores it"}},
		{name: "environment enables without endpoint", env: []string{"AVISOSERVER_LOGGING__OTLP__ENABLED=1"},
			problems: "logging.otlp.endpoint: required when logging.otlp.enabled is true: the collector's address, e.g. otel-collector:4317 (grpc) or otel-collector:4318 (http) (line 3)"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			c, err := Parse([]byte(head+tc.otlp), tc.env)
			if tc.problems != "" {
				if err == nil || err.Error() != tc.problems {
					t.Fatalf("error:\n%v\nwant:\n%s", err, tc.problems)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if !reflect.DeepEqual(c.Logging.OTLP, tc.want) {
				t.Errorf("logging.otlp = %+v, want %+v", c.Logging.OTLP, tc.want)
			}
			e, ok := c.Logging.Export()
			if got := strings.TrimSpace(e.Protocol + " " + e.URL); got != tc.export || ok != (tc.export != "") {
				t.Errorf("Export() = %q, %v; want %q", got, ok, tc.export)
			}
			if w := c.Warnings(); !reflect.DeepEqual(w, tc.warnings) {
				t.Errorf("warnings %q, want %q", w, tc.warnings)
			}
		})
	}
}
