package server

import (
	"reflect"
	"slices"
	"strings"

	"github.com/herald-gateway/herald/configs"
)

// reloadable lists the settings a reload may change, as config key paths;
// a path covers every key under it. A reload that changes any other
// setting is refused by name, so a setting added to the config types is
// fixed until it is declared here (as nats-server does for its options).
// The event types (notification_schema) are judged by the reload's diff,
// the payload schemas by their evolution verdict, the stream defaults by
// the backend's reconciliation.
var reloadable = []string{
	"application.base_url",
	"application.static_files_path",
	"application.homepage",
	"application.max_body_bytes",
	"application.max_batch_notifications",
	"application.read_body_timeout_sec",
	"application.shutdown_grace_sec",
	"application.cors",
	"application.client_address_header",
	"application.trusted_proxies",
	"logging.level",
	// Accepted for compatibility and ignored: changing them changes
	// nothing.
	"notification_backend.in_memory.enable_metrics",
	"notification_backend.jetstream.enable_auto_reconnect",
	// The stream defaults: streams are reconciled with them.
	"notification_backend.jetstream.max_messages",
	"notification_backend.jetstream.max_bytes",
	"notification_backend.jetstream.retention_time",
	"notification_backend.jetstream.storage_type",
	"notification_backend.jetstream.replicas",
	"notification_backend.jetstream.retention_policy",
	"notification_backend.jetstream.discard_policy",
	"notification_schema_strict",
	"notification_schema",
	"watch_endpoint",
	"auth",
	"ecpds",
	"codecs",
	"session",
}

// fixedWhole are fixed settings named as one when any key under them
// changes: the log's OTLP export is compared by its effect, the metrics
// listener is one thing to restart, and so is the tracer provider (the
// tracing block is read once, at startup).
var fixedWhole = []string{"logging.otlp", "metrics", "tracing"}

// isReloadable reports whether path is declared reloadable, itself or
// through a parent path.
func isReloadable(path string, declared []string) bool {
	for _, p := range declared {
		if path == p || strings.HasPrefix(path, p+".") {
			return true
		}
	}
	return false
}

// fixedChanges lists the settings that differ between old and next and
// are not declared reloadable. The log's OTLP export and the tracing
// block are compared by effect: a block with enabled false is no block,
// and the keys the log's block ignores change nothing.
func fixedChanges(old, next *configs.Config) []string {
	o, n := *old, *next
	o.Logging.OTLP, n.Logging.OTLP = exportOf(old.Logging), exportOf(next.Logging)
	o.Tracing, n.Tracing = tracingOf(old.Tracing), tracingOf(next.Tracing)
	return unreloadable(&o, &n, reloadable)
}

// exportOf is the OTLP block as its effect: nil when export is off, else
// the protocol and the URL used.
func exportOf(l configs.Logging) *configs.OTLP {
	e, on := l.Export()
	if !on {
		return nil
	}
	return &configs.OTLP{Enabled: true, Protocol: e.Protocol, Endpoint: e.URL}
}

// tracingOf is the tracing block as its effect: nil when tracing is off
// (whatever the other keys say), else the block with its export URL.
func tracingOf(t *configs.Tracing) *configs.Tracing {
	if !t.On() {
		return nil
	}
	c := *t
	c.Endpoint = t.ExportURL()
	return &c
}

// unreloadable walks two values of the same config struct type field by
// field (named by their yaml keys, fields tagged "-" skipped) and returns,
// in field order, the paths whose values differ and that declared does
// not cover. Structs, and pointers to structs set on both sides, are
// walked into; any other value is compared whole.
func unreloadable(old, next any, declared []string) []string {
	var out []string
	walkChanges(reflect.ValueOf(old), reflect.ValueOf(next), "", func(path string) (look, whole bool) {
		return !isReloadable(path, declared), slices.Contains(fixedWhole, path)
	}, &out)
	return out
}

// walkChanges appends to out the paths under prefix where a and b
// differ. descend reports whether a path must be looked at at all, and
// whether it is compared as one value rather than walked into.
func walkChanges(a, b reflect.Value, prefix string, descend func(string) (look, whole bool), out *[]string) {
	for a.Kind() == reflect.Pointer && b.Kind() == reflect.Pointer {
		if a.IsNil() || b.IsNil() {
			if a.IsNil() != b.IsNil() {
				*out = append(*out, prefix)
			}
			return
		}
		a, b = a.Elem(), b.Elem()
	}
	if a.Kind() != reflect.Struct {
		if !reflect.DeepEqual(a.Interface(), b.Interface()) {
			*out = append(*out, prefix)
		}
		return
	}
	t := a.Type()
	for i := range t.NumField() {
		f := t.Field(i)
		if !f.IsExported() {
			continue
		}
		key, _, _ := strings.Cut(f.Tag.Get("yaml"), ",")
		if key == "-" {
			continue
		}
		if key == "" {
			key = strings.ToLower(f.Name)
		}
		path := key
		if prefix != "" {
			path = prefix + "." + key
		}
		look, whole := descend(path)
		switch {
		case !look:
		case whole:
			if !reflect.DeepEqual(a.Field(i).Interface(), b.Field(i).Interface()) {
				*out = append(*out, path)
			}
		default:
			walkChanges(a.Field(i), b.Field(i), path, descend, out)
		}
	}
	*out = slices.Clip(*out)
}
