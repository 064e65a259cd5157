package configs

import (
	"errors"
	"io/fs"
	"os"
	"path/filepath"
	"reflect"
	"strconv"
	"strings"
	"testing"
)

// header is the smallest valid config: two lines, so that the YAML of a
// test case starts at line 3.
const header = "application: {host: 127.0.0.1, port: 8000}\nnotification_backend: {kind: in_memory}\n"

func ptr[T any](v T) *T { return &v }

func TestDefault(t *testing.T) {
	want := Config{
		Application: Application{
			BaseURL: "http://localhost",
			Homepage: &Homepage{
				ClientDocumentationURL: "https://sites.ecmwf.int/docs/aviso-client/main/",
				ClientRepositoryURL:    "https://github.com/ecmwf/aviso-client",
				ServerDocumentationURL: "https://sites.ecmwf.int/docs/aviso-server/main/",
				ServerRepositoryURL:    "https://github.com/ecmwf/aviso-server",
			},
			MaxBodyBytes:          1 << 20,
			MaxBatchNotifications: 1000,
			ReadHeaderTimeoutSec:  10,
			ReadBodyTimeoutSec:    30,
			ShutdownGraceSec:      30,
		},
		Logging: Logging{Level: "info", Format: "json"},
		NotificationBackend: Backend{
			InMemory: InMemory{MaxHistoryPerTopic: 1, MaxTopics: 10000},
			JetStream: JetStream{
				TimeoutSeconds: 30, RetryAttempts: 3,
				StorageType: "file", RetentionPolicy: "limits", DiscardPolicy: "old",
				EnableAutoReconnect: true, MaxReconnectAttempts: 0, ReconnectDelayMs: 2000,
				PublishRetryAttempts: 5, PublishRetryBaseDelayMs: 150,
				DataDir: "./data/jetstream",
			},
		},
		WatchEndpoint: WatchEndpoint{
			SSEHeartbeatIntervalSec: 30, ConnectionMaxDurationSec: 3600,
			ReplayBatchSize: 100, MaxHistoricalNotifications: 10000,
			ReplayBatchDelayMs: 100, ConcurrentNotificationProcessing: 15,
			LiveQueueSize: 4096, MaxStreamsPerUser: 64, MaxStreamsPerClient: 0, MaxLagSec: 30, StreamSendBufferBytes: 131072,
		},
		Auth:    Auth{Mode: "direct", TimeoutMs: 5000},
		Metrics: Metrics{Host: "127.0.0.1", Port: 9090},
		Session: Session{MaxSubscriptions: 32, MaxProducers: 32, MaxProducerBytes: 33554432, ProducerCredit: 16, ProducerMaxBatch: 1000,
			QueueFrames: 1024, QueueBytes: 1048576, MaxFrameEvents: 256, MaxFrameBytes: 4194304, BlockingTimeoutMs: 1000, MaxSessionsPerUser: 64},
	}
	got := Default()
	if !reflect.DeepEqual(got, want) {
		t.Fatalf("Default() =\n%+v\nwant\n%+v", got, want)
	}
	// Each call returns fresh blocks.
	got.Application.Homepage.ClientRepositoryURL = "changed"
	if Default().Application.Homepage.ClientRepositoryURL != want.Application.Homepage.ClientRepositoryURL {
		t.Fatal("Default() shares its homepage block between calls")
	}
	d := Default()
	if err := d.Validate(); err == nil || err.Error() != "2 problems:\n"+
		"  application.host: required; the address to listen on, e.g. 127.0.0.1 or 0.0.0.0\n"+
		"  notification_backend.kind: required; use in_memory or jetstream" {
		t.Fatalf("Validate() of the defaults = %v", err)
	}
}

func mustParse(t *testing.T, src string, env ...string) *Config {
	t.Helper()
	c, err := Parse([]byte(src), env)
	if err != nil {
		t.Fatalf("Parse: %v", err)
	}
	return c
}

func TestParseOntoDefaults(t *testing.T) {
	c := mustParse(t, `
application:
  host: 127.0.0.1
  port: 8000
  homepage:
    client_repository_url: https://example.org/client
notification_backend:
  kind: in_memory
watch_endpoint:
  replay_batch_size: 5
logging:
  level: debug
ecpds:
  username: u
  password: p
  servers: [https://ecpds.example.org]
  match_key: destination
metrics:
`)
	want := Default()
	want.Application.Host = "127.0.0.1"
	want.Application.Port = 8000
	want.Application.Homepage.ClientRepositoryURL = "https://example.org/client"
	want.NotificationBackend.Kind = BackendInMemory
	want.WatchEndpoint.ReplayBatchSize = 5
	want.Logging.Level = "debug"
	want.ECPDS = defaultECPDS()
	want.ECPDS.Username = "u"
	want.ECPDS.Password = "p"
	want.ECPDS.Servers = []string{"https://ecpds.example.org"}
	want.ECPDS.MatchKey = "destination"
	if !reflect.DeepEqual(*c, want) {
		t.Fatalf("got\n%+v\nwant\n%+v", *c, want)
	}
}

func TestParseSchemas(t *testing.T) {
	c := mustParse(t, header+`notification_schema:
  zeta:
    topic:
      base: z
      key_order: [b, a]
    identifier:
      b:
        required: true
        type: StringHandler
        max_length: 3
      a: {type: IntHandler, range: [0.0, 1e3], required: false, description: step}
    endpoint: {base: legacy, key_order: [x]}
  alpha:
    identifier: &ids
      p:
        type: EnumHandler
        values: [X, 1, true]
        required: true
  beta:
    identifier: *ids
    payload: {required: true}
    auth: ~
`)
	if got := len(c.NotificationSchema); got != 3 {
		t.Fatalf("got %d schemas", got)
	}
	z, a, b := c.NotificationSchema[0], c.NotificationSchema[1], c.NotificationSchema[2]
	wantZ := &Schema{
		Name: "zeta", Line: 4,
		Topic: &Topic{Base: "z", KeyOrder: []string{"b", "a"}},
		Identifier: []*IdentifierField{
			{Name: "b", Line: 9, Keys: []string{"required", "type", "max_length"}, Type: "StringHandler", Required: ptr(true), MaxLength: ptr(3)},
			{Name: "a", Line: 13, Keys: []string{"type", "range", "required", "description"}, Type: "IntHandler", Range: []string{"0.0", "1e3"}, Required: ptr(false), Description: ptr("step")},
		},
		Endpoint: map[string]any{"base": "legacy", "key_order": []any{"x"}},
	}
	if !reflect.DeepEqual(z, wantZ) {
		t.Errorf("zeta = %+v\nwant %+v", z, wantZ)
	}
	p := &IdentifierField{Name: "p", Line: 17, Keys: []string{"type", "values", "required"}, Type: "EnumHandler", Values: []string{"X", "1", "true"}, Required: ptr(true)}
	wantA := &Schema{Name: "alpha", Line: 15, Identifier: []*IdentifierField{p}}
	if !reflect.DeepEqual(a, wantA) {
		t.Errorf("alpha = %+v\nwant %+v", a, wantA)
	}
	wantB := &Schema{Name: "beta", Line: 21, Identifier: []*IdentifierField{p}, Payload: &Payload{Required: true}}
	if !reflect.DeepEqual(b, wantB) {
		t.Errorf("beta = %+v\nwant %+v", b, wantB)
	}
	if a.Identifier[0] == b.Identifier[0] {
		t.Error("an aliased identifier block is shared between schemas")
	}
}

func TestParseScalars(t *testing.T) {
	tests := []struct {
		name string
		src  string
		get  func(*Config) any
		want any
	}{
		{"port as string", "application: {host: h, port: \"8001\"}\nnotification_backend: {kind: in_memory}\n",
			func(c *Config) any { return c.Application.Port }, 8001},
		{"port zero", "application: {host: h, port: 0}\nnotification_backend: {kind: in_memory}\n",
			func(c *Config) any { return c.Application.Port }, 0},
		{"hex integer", header + "watch_endpoint: {replay_batch_size: 0x10}\n",
			func(c *Config) any { return c.WatchEndpoint.ReplayBatchSize }, 16},
		{"leading zero is decimal", header + "watch_endpoint: {replay_batch_size: 017}\n",
			func(c *Config) any { return c.WatchEndpoint.ReplayBatchSize }, 17},
		{"underscores", header + "watch_endpoint: {max_historical_notifications: 1_000}\n",
			func(c *Config) any { return c.WatchEndpoint.MaxHistoricalNotifications }, 1000},
		{"yes is true", header + "metrics: {enabled: yes, port: 9000}\n",
			func(c *Config) any { return c.Metrics.Enabled }, true},
		{"Off is false", header + "auth: {enabled: Off}\n",
			func(c *Config) any { return c.Auth.Enabled }, false},
		{"TRUE", header + "metrics: {enabled: TRUE, port: 9000}\n",
			func(c *Config) any { return c.Metrics.Enabled }, true},
		{"null keeps the default", header + "logging: {level: ~, format: }\n",
			func(c *Config) any { return c.Logging }, Logging{Level: "info", Format: "json"}},
		{"null block keeps the defaults", header + "watch_endpoint:\n",
			func(c *Config) any { return c.WatchEndpoint.LiveQueueSize }, 4096},
		{"number as string", header + "auth: {jwt_secret: 0x1F}\n",
			func(c *Config) any { return c.Auth.JWTSecret }, "0x1F"},
		{"schema replay cap", header + "notification_schema: {m: {topic: {base: m, key_order: [a]}, identifier: {a: {type: TimeHandler, required: false}}, max_historical_notifications: 7}}\n",
			func(c *Config) any { return *c.NotificationSchema[0].MaxHistoricalNotifications }, 7},
		{"strict unset", header, func(c *Config) any { return c.NotificationSchemaStrict }, (*bool)(nil)},
		{"strict false", header + "notification_schema_strict: false\n",
			func(c *Config) any { return *c.NotificationSchemaStrict }, false},
		{"role map", header + "auth: {enabled: true, jwt_secret: s, auth_o_tron_url: http://a, admin_roles: {r: [a, b]}}\n",
			func(c *Config) any { return c.Auth.AdminRoles }, map[string][]string{"r": {"a", "b"}}},
		{"int64 pointer", "application: {host: h, port: 1}\nnotification_backend: {kind: jetstream, jetstream: {max_bytes: 10737418240}}\n",
			func(c *Config) any { return *c.NotificationBackend.JetStream.MaxBytes }, int64(10737418240)},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			c := mustParse(t, tt.src)
			if got := tt.get(c); !reflect.DeepEqual(got, tt.want) {
				t.Fatalf("got %#v, want %#v", got, tt.want)
			}
		})
	}
}

func TestParseErrors(t *testing.T) {
	tests := []struct {
		name string
		src  string
		want string
	}{
		{"empty", "", "the config is empty; it needs at least application.host, application.port and notification_backend.kind"},
		{"comments only", "# nothing\n", "the config is empty; it needs at least application.host, application.port and notification_backend.kind"},
		{"null document", "~\n", "the config is empty; it needs at least application.host, application.port and notification_backend.kind"},
		{"list document", "- a\n- b\n", "the config must be a mapping of sections (application, notification_backend, ...), got a list (line 1)"},
		{"scalar document", "hello\n", "the config must be a mapping of sections (application, notification_backend, ...), got \"hello\" (line 1)"},
		{"two documents", header + "---\nfoo: 1\n", "the config holds more than one YAML document (the second starts at line 3); herald reads exactly one"},
		{"bad YAML", "a: [\n", "invalid YAML: yaml: line 1: did not find expected node content"},
		{"bad YAML in second document", header + "---\na: [\n", "invalid YAML: yaml: line 4: did not find expected node content"},
		{"unknown top-level key", header + "aplication: {}\n", "aplication: unknown key (line 3)"},
		{"unknown nested key", header + "notification_schema:\n  mars:\n    identifier:\n      step:\n        type: IntHandler\n        rang: [0, 1]\n",
			"notification_schema.mars.identifier.step.rang: unknown key (line 8)"},
		{"integer expected", header + "watch_endpoint: {replay_batch_size: many}\n",
			`watch_endpoint.replay_batch_size: expected an integer, got "many" (line 3)`},
		{"quoted integer", header + "watch_endpoint: {replay_batch_size: \"5\"}\n",
			`watch_endpoint.replay_batch_size: expected an integer, got "5" (line 3)`},
		{"float for integer", header + "watch_endpoint: {replay_batch_size: 1.5}\n",
			`watch_endpoint.replay_batch_size: expected an integer, got "1.5" (line 3)`},
		{"integer overflow", header + "watch_endpoint: {replay_batch_size: 9223372036854775808}\n",
			`watch_endpoint.replay_batch_size: integer "9223372036854775808" is out of range (line 3)`},
		{"huge integer", header + "watch_endpoint: {replay_batch_size: 99999999999999999999}\n",
			`watch_endpoint.replay_batch_size: integer "99999999999999999999" is out of range (line 3)`},
		{"port not a number", "application: {host: h, port: eighty}\nnotification_backend: {kind: in_memory}\n",
			`application.port: expected a port number, got "eighty" (line 1)`},
		{"port as a list", "application: {host: h, port: [80]}\nnotification_backend: {kind: in_memory}\n",
			`application.port: expected a port number, got a list (line 1)`},
		{"quoted boolean", header + "auth: {enabled: \"true\"}\n", `auth.enabled: expected true or false, got "true" (line 3)`},
		{"boolean as number", header + "auth: {enabled: 1}\n", `auth.enabled: expected true or false, got "1" (line 3)`},
		{"string expected", header + "logging:\n  level: {a: b}\n", "logging.level: expected a string, got a mapping (line 4)"},
		{"block as scalar", header + "watch_endpoint: 5\n", `watch_endpoint: expected a mapping, got "5" (line 3)`},
		{"list expected", header + "notification_schema: {m: {topic: {base: m, key_order: a}}}\n",
			`notification_schema.m.topic.key_order: expected a list of strings, got "a" (line 3)`},
		{"list element", header + "notification_schema: {m: {topic: {base: m, key_order: [a, [b], ~]}}}\n",
			"2 problems:\n  notification_schema.m.topic.key_order[1]: expected a string, got a list (line 3)\n  notification_schema.m.topic.key_order[2]: expected a string, got null (line 3)"},
		{"schemas as list", header + "notification_schema:\n  - mars\n", "notification_schema: expected a mapping of event types, got a list (line 4)"},
		{"identifier as list", header + "notification_schema: {m: {identifier: [a]}}\n",
			"notification_schema.m.identifier: expected a mapping of identifier fields, got a list (line 3)"},
		{"old identifier list form", header + "notification_schema:\n  m:\n    identifier:\n      a:\n        - type: StringHandler\n          required: true\n",
			`notification_schema.m.identifier.a: expected a mapping of handler keys (type, required, ...), got a list; the old list form "- type: ..." is not supported, remove the dash (line 7)`},
		{"old payload type", header + "notification_schema:\n  m:\n    payload:\n      type: [String]\n      required: true\n",
			"notification_schema.m.payload.type: unknown key; the old payload: {type: [...]} form was removed, payload accepts required (true or false) and herald's codec (a codec name) (line 6)"},
		{"allowed_roles", header + "notification_schema: {m: {auth: {required: true, allowed_roles: {r: [a]}}}}\n",
			"notification_schema.m.auth.allowed_roles: unknown key; allowed_roles was replaced by read_roles and write_roles (line 3)"},
		{"rules form", header + "notification_schema: {m: {identifier: {a: {rules: []}}}}\n",
			"notification_schema.m.identifier.a.rules: unknown key; write the handler keys (type, required, ...) directly under the field (line 3)"},
		{"role list as scalar", header + "auth: {admin_roles: {ecmwf: admin}}\n",
			`auth.admin_roles.ecmwf: expected a list of strings, got "admin" (line 3)`},
		{"role map as list", header + "auth: {admin_roles: [admin]}\n",
			"auth.admin_roles: expected a mapping of realm to role list, got a list (line 3)"},
		{"duplicate key", header + "logging:\n  level: info\n  level: debug\n",
			"logging.level: duplicate key, first written at line 4 (line 5)"},
		{"duplicate section", header + "application: {host: x}\n",
			"application: duplicate key, first written at line 1 (line 3)"},
		{"duplicate event type", header + "notification_schema:\n  m: {}\n  m: {}\n",
			"notification_schema.m: duplicate key, first written at line 4 (line 5)"},
		{"duplicate field", header + "notification_schema:\n  m:\n    identifier:\n      a: {type: TimeHandler}\n      a: {type: TimeHandler}\n",
			"notification_schema.m.identifier.a: duplicate key, first written at line 6 (line 7)"},
		{"duplicate realm", header + "auth:\n  admin_roles:\n    r: [a]\n    r: [b]\n",
			"auth.admin_roles.r: duplicate key, first written at line 5 (line 6)"},
		{"merge key", header + "base: &b {level: info}\nlogging:\n  <<: *b\n",
			"2 problems:\n  base: unknown key (line 3)\n  logging.<<: YAML merge keys (<<) are not supported; write the keys out or use an alias for the whole block (line 5)"},
		{"complex key", header + "? [a]\n: b\n", "config: keys must be plain names, got a list (line 3)"},
		{"errors in file order", header + "logging: {level: [x], format: [y]}\nwatch_endpoint: {replay_batch_size: x}\n",
			"3 problems:\n  logging.level: expected a string, got a list (line 3)\n  logging.format: expected a string, got a list (line 3)\n  watch_endpoint.replay_batch_size: expected an integer, got \"x\" (line 4)"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, err := Parse([]byte(tt.src), nil)
			if err == nil {
				t.Fatal("Parse succeeded")
			}
			if err.Error() != tt.want {
				t.Fatalf("error:\n%s\nwant:\n%s", err, tt.want)
			}
		})
	}
}

func TestParseProblemsAreTyped(t *testing.T) {
	_, err := Parse([]byte(header+"notification_schema:\n  m:\n    topic: {base: m, key_order: []}\n"), nil)
	var ps Problems
	if !errors.As(err, &ps) {
		t.Fatalf("error %v is not Problems", err)
	}
	want := Problems{{
		Path: "notification_schema.m.topic.key_order", Line: 4, EventType: "m", Field: "topic.key_order",
		Rule: "must not be empty; list the identifier fields that make up the subject, in order",
	}}
	if !reflect.DeepEqual(ps, want) {
		t.Fatalf("got %#v\nwant %#v", ps, want)
	}
}

func TestParseProblemLimit(t *testing.T) {
	var b strings.Builder
	b.WriteString(header)
	for i := range 150 {
		b.WriteString("unknown_")
		b.WriteString(strings.Repeat("x", i+1))
		b.WriteString(": 1\n")
	}
	_, err := Parse([]byte(b.String()), nil)
	var ps Problems
	if !errors.As(err, &ps) {
		t.Fatalf("error %v is not Problems", err)
	}
	if len(ps) != maxProblems+1 {
		t.Fatalf("got %d problems, want %d", len(ps), maxProblems+1)
	}
	if got, want := ps[len(ps)-1].Error(), "config: too many problems; fix these first"; got != want {
		t.Fatalf("last problem %q, want %q", got, want)
	}
}

func TestParseAliasBomb(t *testing.T) {
	// Each level doubles the list; the typed decoder rejects the nesting
	// at the first level instead of expanding it.
	src := header + "x: &a [1, 2]\n"
	prev := "a"
	for i := range 30 {
		name := "l" + strings.Repeat("x", i)
		src += "y" + name + ": &" + name + " [*" + prev + ", *" + prev + "]\n"
		prev = name
	}
	src += "notification_schema: {m: {topic: {base: m, key_order: *" + prev + "}}}\n"
	_, err := Parse([]byte(src), nil)
	if err == nil {
		t.Fatal("Parse succeeded")
	}
}

func TestDecodeNodeBudget(t *testing.T) {
	// 30 fields sharing one 20-value list expand to over 600 nodes.
	var b strings.Builder
	b.WriteString("notification_schema:\n  m:\n    identifier:\n      f0: {type: EnumHandler, required: true, values: &v [")
	b.WriteString(strings.Repeat("x, ", 19) + "x]}\n")
	for i := 1; i < 30; i++ {
		b.WriteString("      f" + strconv.Itoa(i) + ": {type: EnumHandler, required: true, values: *v}\n")
	}
	root, err := parseDocument([]byte(b.String()))
	if err != nil {
		t.Fatal(err)
	}
	c := Default()
	d := newDecoder()
	d.budget = 500
	d.mapping(root, reflect.ValueOf(&c).Elem(), "")
	want := Problems{{
		Path: "notification_schema.m.identifier.f16.values[8]", Field: "notification_schema.m.identifier.f16.values[8]", Line: 4,
		Rule: "the document expands to too many nodes through aliases",
	}}
	if !reflect.DeepEqual(d.problems, want) {
		t.Fatalf("problems %#v\nwant %#v", d.problems, want)
	}
	d = newDecoder()
	d.mapping(root, reflect.ValueOf(&c).Elem(), "")
	if len(d.problems) != 0 {
		t.Fatalf("default budget: %v", d.problems)
	}
}

func TestLoad(t *testing.T) {
	dir := t.TempDir()
	good := filepath.Join(dir, "good.yaml")
	bad := filepath.Join(dir, "bad.yaml")
	if err := os.WriteFile(good, []byte(header), 0o600); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(bad, []byte(header+"foo: 1\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	c, err := Load(good, nil)
	if err != nil || c.Application.Port != 8000 {
		t.Fatalf("Load(good) = %v, %v", c, err)
	}
	_, err = Load(bad, nil)
	if want := "config file " + bad + ": foo: unknown key (line 3)"; err == nil || err.Error() != want {
		t.Fatalf("Load(bad) error %v, want %s", err, want)
	}
	var ps Problems
	if !errors.As(err, &ps) || len(ps) != 1 {
		t.Fatalf("Load(bad) error does not wrap Problems: %#v", err)
	}
	missing := filepath.Join(dir, "missing.yaml")
	_, err = Load(missing, nil)
	if want := "read config file: open " + missing + ": no such file or directory"; err == nil || err.Error() != want {
		t.Fatalf("Load(missing) error %v, want %s", err, want)
	}
	if !errors.Is(err, fs.ErrNotExist) {
		t.Fatalf("Load(missing) error does not wrap fs.ErrNotExist")
	}
}

func TestResolvePath(t *testing.T) {
	dir := t.TempDir()
	t.Chdir(dir)
	file := filepath.Join(dir, "herald.yaml")
	other := filepath.Join(dir, "aviso.yaml")
	for _, f := range []string{file, other} {
		if err := os.WriteFile(f, []byte(header), 0o600); err != nil {
			t.Fatal(err)
		}
	}
	missing := filepath.Join(dir, "missing.yaml")
	tests := []struct {
		name    string
		flag    string
		env     []string
		setup   func(t *testing.T)
		want    string
		wantErr string
	}{
		{name: "flag wins", flag: file, env: []string{"HERALD_CONFIG_FILE=" + other}, want: file},
		{name: "flag must exist", flag: missing, wantErr: "--config: config file: stat " + missing + ": no such file or directory"},
		{name: "flag is a directory", flag: dir, wantErr: "--config: config file " + dir + " is not a regular file"},
		{name: "herald variable", env: []string{"AVISOSERVER_CONFIG_FILE=" + other, "HERALD_CONFIG_FILE=" + file}, want: file},
		{name: "aviso variable", env: []string{"AVISOSERVER_CONFIG_FILE=" + other}, want: other},
		{name: "variable must exist", env: []string{"AVISOSERVER_CONFIG_FILE=" + missing}, wantErr: "AVISOSERVER_CONFIG_FILE: config file: stat " + missing + ": no such file or directory"},
		{name: "empty variable", env: []string{"HERALD_CONFIG_FILE= "}, wantErr: "HERALD_CONFIG_FILE is set but empty; unset it or name a config file"},
		{name: "last entry wins", env: []string{"HERALD_CONFIG_FILE=" + missing, "HERALD_CONFIG_FILE=" + file}, want: file},
		{name: "default when nothing exists", want: "configs/config.yaml"},
		{name: "aviso layout", setup: func(t *testing.T) {
			if err := os.MkdirAll("configuration", 0o700); err != nil {
				t.Fatal(err)
			}
			if err := os.WriteFile("configuration/config.yaml", []byte(header), 0o600); err != nil {
				t.Fatal(err)
			}
		}, want: "configuration/config.yaml"},
		{name: "herald layout first", setup: func(t *testing.T) {
			if err := os.MkdirAll("configs", 0o700); err != nil {
				t.Fatal(err)
			}
			if err := os.WriteFile("configs/config.yaml", []byte(header), 0o600); err != nil {
				t.Fatal(err)
			}
		}, want: "configs/config.yaml"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if tt.setup != nil {
				tt.setup(t)
			}
			got, err := ResolvePath(tt.flag, tt.env)
			if tt.wantErr != "" {
				if err == nil || err.Error() != tt.wantErr {
					t.Fatalf("error %v, want %s", err, tt.wantErr)
				}
				return
			}
			if err != nil || got != tt.want {
				t.Fatalf("ResolvePath = %q, %v; want %q", got, err, tt.want)
			}
		})
	}
}

func TestStrictAndWarnings(t *testing.T) {
	schema := "notification_schema: {m: {topic: {base: m, key_order: [a], separator: \"/\"}, identifier: {a: {type: TimeHandler, required: true}}}}\n"
	tests := []struct {
		name   string
		src    string
		strict bool
		warns  []string
	}{
		{"no schema", header, false, nil},
		{"schema", header + schema, true, []string{
			`notification_schema.m.topic.separator is obsolete and ignored; subjects always use "."`,
		}},
		{"strict false with schema", header + schema + "notification_schema_strict: false\nlogging: {format: pretty}\n", false, []string{
			"notification_schema_strict is false: event types without a schema are accepted through the generic fallback",
			`logging.format "pretty" is accepted for compatibility and logs JSON; herald knows json and text`,
			`notification_schema.m.topic.separator is obsolete and ignored; subjects always use "."`,
		}},
		{"strict true without schema", header + "notification_schema_strict: true\n", true, []string{
			"notification_schema_strict is true but no schema is configured: every notify, watch and replay request is rejected",
		}},
		{"address header without trusted proxies", "application: {host: h, port: 1, client_address_header: X-Forwarded-For}\nnotification_backend: {kind: in_memory}\n", false, []string{
			`application.client_address_header "X-Forwarded-For" is ignored without application.trusted_proxies: the per-client stream limit counts the TCP peer address`,
		}},
		{"trusted proxies without address header", "application: {host: h, port: 1, trusted_proxies: [10.0.0.0/8]}\nnotification_backend: {kind: in_memory}\n", false, []string{
			"application.trusted_proxies is set but application.client_address_header is not: the per-client stream limit counts the TCP peer address",
		}},
		{"address header and trusted proxies", "application: {host: h, port: 1, client_address_header: X-Real-IP, trusted_proxies: [10.0.0.0/8]}\nnotification_backend: {kind: in_memory}\n", false, nil},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			c := mustParse(t, tt.src)
			if got := c.Strict(); got != tt.strict {
				t.Errorf("Strict() = %v", got)
			}
			if got := c.Warnings(); !reflect.DeepEqual(got, tt.warns) {
				t.Errorf("Warnings() = %q\nwant %q", got, tt.warns)
			}
		})
	}
}

// FuzzParse checks that no input makes the loader panic, and that a
// config it accepts passes Validate again (the loader and the validator
// agree).
func FuzzParse(f *testing.F) {
	err := fs.WalkDir(shipped, ".", func(path string, d fs.DirEntry, err error) error {
		if err != nil || d.IsDir() {
			return err
		}
		b, err := fs.ReadFile(shipped, path)
		f.Add(b)
		return err
	})
	if err != nil {
		f.Fatal(err)
	}
	for _, s := range []string{
		"", "~", "- a", header, header + "foo: 1\n", header + "a: &a [*a]\n",
		header + "notification_schema: &s {m: *s}\n",
		header + "notification_schema: {m: {identifier: &i {a: *i}}}\n",
		header + "notification_schema: {m: {endpoint: &e [*e]}}\n",
		header + "auth: {admin_roles: &r {x: *r}}\n",
		"application: {host: h, port: \"65536\"}\nnotification_backend: {kind: jetstream}\n",
		header + "logging: {otlp: {enabled: true, endpoint: 'c:4318/', protocol: http, headers: &h [*h]}}\n",
		header + "logging: {otlp: {enabled: true, endpoint: 'http://[::1]:4317'}}\n",
		"application: {host: h, port: 1}\nnotification_backend: {kind: jetstream, jetstream: {retention_policy: workqueue, retention_time: 9223372036s}}\n",
	} {
		f.Add([]byte(s))
	}
	example, err := os.ReadFile("testdata/aviso-server-0.13.1/config.yaml.example")
	if err != nil {
		f.Fatal(err)
	}
	f.Add(example)
	f.Fuzz(func(t *testing.T, data []byte) {
		c, err := Parse(data, nil)
		if err != nil {
			if err.Error() == "" {
				t.Fatal("empty error message")
			}
			return
		}
		if err := c.Validate(); err != nil {
			t.Fatalf("Parse accepted a config that Validate rejects: %v", err)
		}
	})
}

// TestLoadResolvesCodecPaths: Load makes the relative paths of the codecs
// block (file or override) relative to the config file's directory and
// keeps absolute ones; Parse keeps them as written.
func TestLoadResolvesCodecPaths(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "etc")
	if err := os.Mkdir(dir, 0o700); err != nil {
		t.Fatal(err)
	}
	abs := filepath.Join(t.TempDir(), "proto")
	text := header + "codecs:\n  definitions: codecs/defs.nspl\n  resources:\n    - {name: a, dir: ../proto}\n    - {name: b, dir: " + abs + "}\n"
	path := filepath.Join(dir, "config.yaml")
	if err := os.WriteFile(path, []byte(text), 0o600); err != nil {
		t.Fatal(err)
	}
	c, err := Load(path, nil)
	if err != nil {
		t.Fatal(err)
	}
	want := Codecs{Definitions: filepath.Join(dir, "codecs", "defs.nspl"), Resources: []CodecResource{
		{Name: "a", Dir: filepath.Join(filepath.Dir(dir), "proto")}, {Name: "b", Dir: abs}}}
	if !reflect.DeepEqual(*c.Codecs, want) {
		t.Errorf("Load: %+v, want %+v", *c.Codecs, want)
	}
	c, err = Load(path, []string{"HERALD_CODECS__DEFINITIONS=other.nspl"})
	if err != nil {
		t.Fatal(err)
	}
	if got := c.Codecs.Definitions; got != filepath.Join(dir, "other.nspl") {
		t.Errorf("Load with an override: %s", got)
	}
	p, err := Parse([]byte(text), nil)
	if err != nil {
		t.Fatal(err)
	}
	if p.Codecs.Definitions != "codecs/defs.nspl" || p.Codecs.Resources[0].Dir != "../proto" {
		t.Errorf("Parse: %+v", *p.Codecs)
	}
}
