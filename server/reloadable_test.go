package server

import (
	"fmt"
	"reflect"
	"slices"
	"testing"

	"github.com/herald-gateway/herald/configs"
)

// TestReloadRefusesUndeclaredSettings: a setting nobody declared
// reloadable is refused by name. The config type is copied with one more
// field (as a new setting would be added), and changing that field alone
// is refused, while a declared one passes.
func TestReloadRefusesUndeclaredSettings(t *testing.T) {
	cfg, err := configs.Parse([]byte("application: {host: 127.0.0.1, port: 8000}\nnotification_backend: {kind: in_memory}\n"), nil)
	if err != nil {
		t.Fatal(err)
	}
	ct := reflect.TypeOf(*cfg)
	var fields []reflect.StructField
	for i := range ct.NumField() {
		fields = append(fields, ct.Field(i))
	}
	fields = append(fields, reflect.StructField{Name: "Extra", Type: reflect.TypeOf(struct {
		Knob int `yaml:"knob"`
	}{}), Tag: `yaml:"extra_setting"`})
	copyType := reflect.StructOf(fields)
	value := func(edit func(c *configs.Config), knob int) any {
		c := *cfg
		if edit != nil {
			edit(&c)
		}
		v := reflect.New(copyType).Elem()
		for i := range ct.NumField() {
			v.Field(i).Set(reflect.ValueOf(c).Field(i))
		}
		v.Field(ct.NumField()).Field(0).SetInt(int64(knob))
		return v.Addr().Interface()
	}
	for _, tc := range []struct {
		name string
		edit func(c *configs.Config)
		knob int
		want []string
	}{
		{"nothing", nil, 0, nil},
		{"the new setting", nil, 1, []string{"extra_setting.knob"}},
		{"a declared setting", func(c *configs.Config) { c.WatchEndpoint.ReplayBatchSize = 7 }, 0, nil},
		{"a fixed setting and the new one", func(c *configs.Config) { c.Application.Port = 8001 }, 2, []string{"application.port", "extra_setting.knob"}},
		{"the metrics listener, as one", func(c *configs.Config) { c.Metrics.Port = 1 }, 0, []string{"metrics"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if got := unreloadable(value(nil, 0), value(tc.edit, tc.knob), reloadable); !slices.Equal(got, tc.want) {
				t.Fatalf("unreloadable = %q, want %q", got, tc.want)
			}
		})
	}
}

// TestFixedSettings names every setting of the config type that a reload
// refuses: the list changes only with a deliberate decision (a new
// setting lands here until it is declared reloadable).
func TestFixedSettings(t *testing.T) {
	var fixed []string
	var walk func(t reflect.Type, prefix string)
	walk = func(ty reflect.Type, prefix string) {
		for ty.Kind() == reflect.Pointer {
			ty = ty.Elem()
		}
		for i := range ty.NumField() {
			f := ty.Field(i)
			key := yamlKey(f)
			if key == "-" || !f.IsExported() {
				continue
			}
			path := key
			if prefix != "" {
				path = prefix + "." + key
			}
			switch {
			case isReloadable(path, reloadable):
			case slices.Contains(fixedWhole, path):
				fixed = append(fixed, path)
			case isStruct(f.Type):
				walk(f.Type, path)
			default:
				fixed = append(fixed, path)
			}
		}
	}
	walk(reflect.TypeOf(configs.Config{}), "")
	want := []string{
		"application.host", "application.port", "application.read_header_timeout_sec",
		"logging.format", "logging.otlp",
		"notification_backend.kind",
		"notification_backend.in_memory.max_history_per_topic", "notification_backend.in_memory.max_topics",
		"notification_backend.jetstream.nats_url", "notification_backend.jetstream.token",
		"notification_backend.jetstream.timeout_seconds", "notification_backend.jetstream.retry_attempts",
		"notification_backend.jetstream.max_reconnect_attempts", "notification_backend.jetstream.reconnect_delay_ms",
		"notification_backend.jetstream.publish_retry_attempts", "notification_backend.jetstream.publish_retry_base_delay_ms",
		"notification_backend.jetstream.data_dir", "notification_backend.jetstream.listen", "notification_backend.jetstream.sync_always",
		"metrics", "tracing",
	}
	if !slices.Equal(fixed, want) {
		t.Fatalf("fixed settings\n got %q\nwant %q", fixed, want)
	}
}

func yamlKey(f reflect.StructField) string {
	key := f.Tag.Get("yaml")
	for i := range len(key) {
		if key[i] == ',' {
			key = key[:i]
			break
		}
	}
	if key == "" {
		key = fmt.Sprint(f.Name)
	}
	return key
}

func isStruct(t reflect.Type) bool {
	for t.Kind() == reflect.Pointer {
		t = t.Elem()
	}
	return t.Kind() == reflect.Struct
}
