package configs

import (
	"reflect"
	"testing"
)

const envBase = `application: {host: 127.0.0.1, port: 8000}
notification_backend: {kind: jetstream}
notification_schema:
  Mars:
    topic: {base: mars, key_order: [class, step]}
    identifier:
      class: {type: StringHandler, required: true}
      step: {type: IntHandler, required: false}
`

func TestEnvOverrides(t *testing.T) {
	authOn := []string{"HERALD_AUTH__ENABLED=true", "HERALD_AUTH__MODE=trusted_proxy", "HERALD_AUTH__JWT_SECRET=s"}
	tests := []struct {
		name string
		src  string
		env  []string
		get  func(*Config) any
		want any
	}{
		{"aviso prefix", envBase, []string{"AVISOSERVER_APPLICATION__PORT=9000"},
			func(c *Config) any { return c.Application.Port }, 9000},
		{"herald wins", envBase, []string{"HERALD_APPLICATION__PORT=9100", "AVISOSERVER_APPLICATION__PORT=9000"},
			func(c *Config) any { return c.Application.Port }, 9100},
		{"last entry of a name wins", envBase, []string{"HERALD_APPLICATION__PORT=9100", "HERALD_APPLICATION__PORT=9200"},
			func(c *Config) any { return c.Application.Port }, 9200},
		{"nested key", envBase, []string{"AVISOSERVER_NOTIFICATION_BACKEND__JETSTREAM__NATS_URL=nats://nats:4222"},
			func(c *Config) any { return c.NotificationBackend.JetStream.NatsURL }, "nats://nats:4222"},
		{"prefix in any case", envBase, []string{"avisoserver_logging__level=debug"},
			func(c *Config) any { return c.Logging.Level }, "debug"},
		{"empty value sets an empty string", "application: {host: h, port: 1}\nnotification_backend: {kind: jetstream, jetstream: {nats_url: nats://x}}\n",
			[]string{"HERALD_NOTIFICATION_BACKEND__JETSTREAM__NATS_URL="},
			func(c *Config) any { return c.NotificationBackend.JetStream.NatsURL }, ""},
		{"boolean 1", envBase, []string{"HERALD_METRICS__ENABLED=1", "HERALD_METRICS__PORT=9090"},
			func(c *Config) any { return c.Metrics }, Metrics{Enabled: true, Host: "127.0.0.1", Port: 9090}},
		{"boolean words", envBase, []string{"HERALD_NOTIFICATION_BACKEND__JETSTREAM__ENABLE_AUTO_RECONNECT=Off"},
			func(c *Config) any { return c.NotificationBackend.JetStream.EnableAutoReconnect }, false},
		{"port from the environment only", "application: {host: h}\nnotification_backend: {kind: in_memory}\n", []string{"HERALD_APPLICATION__PORT=0"},
			func(c *Config) any { return c.Application.Port }, 0},
		{"comma list", envBase, []string{"HERALD_NOTIFICATION_SCHEMA__MARS__TOPIC__KEY_ORDER= step , class,"},
			func(c *Config) any { return c.NotificationSchema[0].Topic.KeyOrder }, []string{"step", "class"}},
		{"flow list", envBase, []string{"HERALD_NOTIFICATION_SCHEMA__MARS__TOPIC__KEY_ORDER=[step, class]"},
			func(c *Config) any { return c.NotificationSchema[0].Topic.KeyOrder }, []string{"step", "class"}},
		{"one realm", envBase, append(authOn, "HERALD_AUTH__ADMIN_ROLES__ECMWF=admin,ops"),
			func(c *Config) any { return c.Auth.AdminRoles }, map[string][]string{"ecmwf": {"admin", "ops"}}},
		{"realm matched ignoring case", envBase + "auth: {admin_roles: {ECMWF: [x], other: [y]}}\n", append(authOn, "HERALD_AUTH__ADMIN_ROLES__ECMWF=admin"),
			func(c *Config) any { return c.Auth.AdminRoles }, map[string][]string{"ECMWF": {"admin"}, "other": {"y"}}},
		{"whole block", envBase, []string{"HERALD_ECPDS={username: u, password: p, servers: [https://e.example], match_key: class}"},
			func(c *Config) any { return *c.ECPDS }, ECPDS{Username: "u", Password: "p", Servers: []string{"https://e.example"}, MatchKey: "class",
				TargetField: "name", CacheTTLSeconds: 300, MaxEntries: 10000, RequestTimeoutSeconds: 30, ConnectTimeoutSeconds: 5, PartialOutagePolicy: "strict"}},
		{"key of a new block takes the block defaults", envBase, []string{"HERALD_ECPDS__USERNAME=u", "HERALD_ECPDS__PASSWORD=p", "HERALD_ECPDS__SERVERS=https://e.example", "HERALD_ECPDS__MATCH_KEY=class"},
			func(c *Config) any { return c.ECPDS.CacheTTLSeconds }, 300},
		{"block then key", envBase, []string{"HERALD_WATCH_ENDPOINT__REPLAY_BATCH_SIZE=7", "HERALD_WATCH_ENDPOINT={replay_batch_size: 3, live_queue_size: 9}"},
			func(c *Config) any { return [2]int{c.WatchEndpoint.ReplayBatchSize, c.WatchEndpoint.LiveQueueSize} }, [2]int{7, 9}},
		{"session key", envBase, []string{"HERALD_SESSION__SESSION_QUEUE_BYTES=65536"},
			func(c *Config) any { return c.Session.QueueBytes }, 65536},
		{"schema key, name ignoring case", envBase, []string{"HERALD_NOTIFICATION_SCHEMA__MARS__MAX_HISTORICAL_NOTIFICATIONS=500"},
			func(c *Config) any { return *c.NotificationSchema[0].MaxHistoricalNotifications }, 500},
		{"identifier key", envBase, []string{"AVISOSERVER_NOTIFICATION_SCHEMA__MARS__IDENTIFIER__CLASS__MAX_LENGTH=2"},
			func(c *Config) any { return *c.NotificationSchema[0].Identifier[0] }, IdentifierField{
				Name: "class", Line: 7, Keys: []string{"type", "required", "max_length"}, Type: "StringHandler", Required: ptr(true), MaxLength: ptr(2)}},
		{"existing identifier key keeps Keys", envBase, []string{"HERALD_NOTIFICATION_SCHEMA__MARS__IDENTIFIER__STEP__REQUIRED=yes"},
			func(c *Config) any { return c.NotificationSchema[0].Identifier[1].Keys }, []string{"type", "required"}},
		{"whole schema map", envBase, []string{"HERALD_NOTIFICATION_SCHEMA={venus: {topic: {base: venus, key_order: [a]}, identifier: {a: {type: TimeHandler, required: true}}}}"},
			func(c *Config) any {
				return []any{c.NotificationSchema[0].Name, c.NotificationSchema[0].Line, len(c.NotificationSchema)}
			}, []any{"venus", 0, 1}},
		{"RUST_LOG", envBase, []string{"RUST_LOG=warn"},
			func(c *Config) any { return c.Logging.Level }, "warn"},
		{"RUST_LOG: the server's crate wins over the global level", envBase, []string{"RUST_LOG=warn,aviso_server=debug"},
			func(c *Config) any { return c.Logging.Level }, "debug"},
		{"RUST_LOG without a global level", envBase, []string{"RUST_LOG= aviso_server=debug "},
			func(c *Config) any { return c.Logging.Level }, "debug"},
		{"RUST_LOG module path and span filter", envBase, []string{"RUST_LOG=info,aviso_server::routes[notify]=error"},
			func(c *Config) any { return c.Logging.Level }, "error"},
		{"RUST_LOG herald target", envBase, []string{"RUST_LOG=herald=WARN,error"},
			func(c *Config) any { return c.Logging.Level }, "WARN"},
		{"RUST_LOG server crate without a level is trace", envBase, []string{"RUST_LOG=aviso_server"},
			func(c *Config) any { return c.Logging.Level }, "trace"},
		{"RUST_LOG ignores other crates", envBase, []string{"RUST_LOG=error,tower_http=trace,async_nats=bogus"},
			func(c *Config) any { return c.Logging.Level }, "error"},
		{"RUST_LOG of other crates only leaves the file's level", envBase + "logging: {level: warn}\n", []string{"RUST_LOG=tower_http=debug"},
			func(c *Config) any { return c.Logging.Level }, "warn"},
		{"RUST_LOG off", envBase, []string{"RUST_LOG=off"},
			func(c *Config) any { return c.Logging.Level }, "off"},
		{"empty RUST_LOG is unset", envBase + "logging: {level: error}\n", []string{"RUST_LOG="},
			func(c *Config) any { return c.Logging.Level }, "error"},
		{"RUST_LOG beats AVISOSERVER_", envBase, []string{"AVISOSERVER_LOGGING__LEVEL=error", "RUST_LOG=debug"},
			func(c *Config) any { return c.Logging.Level }, "debug"},
		{"HERALD_ beats RUST_LOG", envBase, []string{"HERALD_LOGGING__LEVEL=trace", "RUST_LOG=debug"},
			func(c *Config) any { return c.Logging.Level }, "trace"},
		{"NATS_TOKEN fills the token", envBase, []string{"NATS_TOKEN=t0k"},
			func(c *Config) any { return c.NotificationBackend.JetStream.Token }, "t0k"},
		{"NATS_TOKEN does not replace a token", envBase, []string{"HERALD_NOTIFICATION_BACKEND__JETSTREAM__TOKEN=mine", "NATS_TOKEN=t0k"},
			func(c *Config) any { return c.NotificationBackend.JetStream.Token }, "mine"},
		{"config file variables and others are not overrides", envBase, []string{"HERALD_CONFIG_FILE=x.yaml", "AVISOSERVER_CONFIG_FILE=y.yaml", "HERALDRY=1", "PATH=/bin", "noequals"},
			func(c *Config) any { return c.Application.Port }, 8000},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			c := mustParse(t, tt.src, tt.env...)
			if got := tt.get(c); !reflect.DeepEqual(got, tt.want) {
				t.Fatalf("got %#v\nwant %#v", got, tt.want)
			}
		})
	}
}

func TestEnvOverrideErrors(t *testing.T) {
	tests := []struct {
		name string
		env  []string
		want string
	}{
		{"unknown key", []string{"HERALD_APPLICATION__PROT=1"}, "HERALD_APPLICATION__PROT: application.prot: unknown key"},
		{"unknown section", []string{"AVISOSERVER_FOO=1"}, "AVISOSERVER_FOO: foo: unknown key"},
		{"below a scalar", []string{"HERALD_APPLICATION__PORT__X=1"}, "HERALD_APPLICATION__PORT__X: application.port.x: unknown key"},
		{"below a realm", []string{"HERALD_AUTH__ADMIN_ROLES__ECMWF__X=1"}, "HERALD_AUTH__ADMIN_ROLES__ECMWF__X: auth.admin_roles.ecmwf.x: unknown key"},
		{"empty segment", []string{"HERALD_APPLICATION____PORT=1"}, "HERALD_APPLICATION____PORT: application____port: not a config key; overrides are PREFIX_SECTION__KEY, e.g. HERALD_APPLICATION__PORT"},
		{"prefix only", []string{"HERALD_=1"}, "HERALD_: not a config key; overrides are PREFIX_SECTION__KEY, e.g. HERALD_APPLICATION__PORT"},
		{"not a port", []string{"AVISOSERVER_APPLICATION__PORT=abc"}, `AVISOSERVER_APPLICATION__PORT: application.port: expected a port number, got "abc"`},
		{"not a boolean", []string{"HERALD_AUTH__ENABLED=maybe"}, `HERALD_AUTH__ENABLED: auth.enabled: expected true or false, got "maybe"`},
		{"empty integer", []string{"HERALD_WATCH_ENDPOINT__REPLAY_BATCH_SIZE="}, `HERALD_WATCH_ENDPOINT__REPLAY_BATCH_SIZE: watch_endpoint.replay_batch_size: expected an integer, got ""`},
		{"integer with spaces", []string{"HERALD_WATCH_ENDPOINT__REPLAY_BATCH_SIZE= 5"}, `HERALD_WATCH_ENDPOINT__REPLAY_BATCH_SIZE: watch_endpoint.replay_batch_size: expected an integer, got " 5"`},
		{"unknown event type", []string{"HERALD_NOTIFICATION_SCHEMA__VENUS__MAX_HISTORICAL_NOTIFICATIONS=1"},
			`HERALD_NOTIFICATION_SCHEMA__VENUS__MAX_HISTORICAL_NOTIFICATIONS: notification_schema.venus: no event type "venus" in the config file; the environment can change only the ones the file declares`},
		{"unknown field", []string{"HERALD_NOTIFICATION_SCHEMA__MARS__IDENTIFIER__DATE__REQUIRED=true"},
			`HERALD_NOTIFICATION_SCHEMA__MARS__IDENTIFIER__DATE__REQUIRED: notification_schema.Mars.identifier.date: no identifier field "date" in the config file; the environment can change only the ones the file declares`},
		{"unknown field key", []string{"HERALD_NOTIFICATION_SCHEMA__MARS__IDENTIFIER__STEP__RANG=[1, 2]"},
			"HERALD_NOTIFICATION_SCHEMA__MARS__IDENTIFIER__STEP__RANG: notification_schema.Mars.identifier.step.rang: unknown key"},
		{"bad YAML", []string{"HERALD_ECPDS={a"}, "HERALD_ECPDS: ecpds: not valid YAML flow text: yaml: line 1: did not find expected ',' or '}'"},
		{"unknown key in YAML", []string{"HERALD_ECPDS={usr: x}"}, "HERALD_ECPDS: ecpds.usr: unknown key"},
		{"type in YAML", []string{"HERALD_WATCH_ENDPOINT={replay_batch_size: [1]}"}, "HERALD_WATCH_ENDPOINT: watch_endpoint.replay_batch_size: expected an integer, got a list"},
		{"several", []string{"HERALD_A=1", "AVISOSERVER_B=2"}, "2 problems:\n  AVISOSERVER_B: b: unknown key\n  HERALD_A: a: unknown key"},
		{"RUST_LOG unknown level", []string{"RUST_LOG=verbose"},
			`RUST_LOG: logging.level: must be trace, debug, info, warn, error or off, got "verbose" in "verbose"`},
		{"RUST_LOG unknown level of the server", []string{"RUST_LOG=info,aviso_server=loud"},
			`RUST_LOG: logging.level: must be trace, debug, info, warn, error or off, got "loud" in "info,aviso_server=loud"`},
		{"unknown level override", []string{"HERALD_LOGGING__LEVEL=verbose"},
			`logging.level: must be trace, debug, info, warn, error or off, got "verbose"`},
		{"validation after overrides", []string{"HERALD_WATCH_ENDPOINT__REPLAY_BATCH_SIZE=0"}, "watch_endpoint.replay_batch_size: must be greater than 0, got 0"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, err := Parse([]byte(envBase), tt.env)
			if err == nil || err.Error() != tt.want {
				t.Fatalf("error:\n%v\nwant:\n%s", err, tt.want)
			}
		})
	}
}

func TestEnvAmbiguousName(t *testing.T) {
	src := envBase + `  MARS:
    topic: {base: mars2, key_order: [a]}
    identifier: {a: {type: TimeHandler, required: true}}
`
	_, err := Parse([]byte(src), []string{"HERALD_NOTIFICATION_SCHEMA__MARS__MAX_HISTORICAL_NOTIFICATIONS=1"})
	want := "HERALD_NOTIFICATION_SCHEMA__MARS__MAX_HISTORICAL_NOTIFICATIONS: notification_schema.mars: names more than one event type (names differ only in case); set it in the config file"
	if err == nil || err.Error() != want {
		t.Fatalf("error:\n%v\nwant:\n%s", err, want)
	}
	// An exact lowercase name is not ambiguous.
	src += `  mars:
    topic: {base: mars3, key_order: [a]}
    identifier: {a: {type: TimeHandler, required: true}}
`
	c := mustParse(t, src, "HERALD_NOTIFICATION_SCHEMA__MARS__MAX_HISTORICAL_NOTIFICATIONS=1")
	if got := c.NotificationSchema[2].MaxHistoricalNotifications; got == nil || *got != 1 {
		t.Fatalf("override went elsewhere: %v", got)
	}
}

// FuzzEnvOverride checks that no variable name or value makes the
// override code panic.
func FuzzEnvOverride(f *testing.F) {
	f.Add("HERALD_APPLICATION__PORT", "9000")
	f.Add("AVISOSERVER_NOTIFICATION_SCHEMA__MARS__IDENTIFIER__CLASS__MAX_LENGTH", "2")
	f.Add("HERALD_AUTH__ADMIN_ROLES__X", "a,b")
	f.Add("HERALD_NOTIFICATION_SCHEMA", "{a: {identifier: {b: {type: StringHandler}}}}")
	f.Add("HERALD_ECPDS", "{servers: [x], match_key: &a [*a]}")
	f.Add("HERALD_NOTIFICATION_SCHEMA__MARS__ENDPOINT", "&a [*a]")
	f.Add("HERALD_APPLICATION__HOMEPAGE", "~")
	f.Add("AVISOSERVER_LOGGING__OTLP__ENABLED", "true")
	f.Add("HERALD_LOGGING__OTLP__HEADERS__X", "y")
	f.Add("HERALD_LOGGING__OTLP", "{enabled: true, endpoint: c, extra: &a [*a]}")
	f.Add("RUST_LOG", "info,x=debug")
	f.Add("RUST_LOG", "aviso_server::a[b{c=d}]=trace,=,[")
	f.Fuzz(func(t *testing.T, name, value string) {
		_, err := Parse([]byte(envBase), []string{name + "=" + value})
		if err != nil && err.Error() == "" {
			t.Fatal("empty error message")
		}
	})
}
