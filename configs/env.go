package configs

import (
	"cmp"
	"fmt"
	"reflect"
	"slices"
	"strings"

	"go.yaml.in/yaml/v3"
)

// Environment variables that Load reads. Every other variable starting
// with one of the two prefixes (in any case) is an override, and an
// override naming an unknown key is an error: herald's own settings must
// therefore never use the HERALD_ prefix for anything but config keys.
const (
	// EnvPrefix starts herald's overrides: HERALD_A__B=value sets a.b.
	EnvPrefix = "HERALD_"
	// EnvAvisoPrefix starts Aviso's overrides: AVISOSERVER_A__B=value.
	EnvAvisoPrefix = "AVISOSERVER_"
	// EnvNATSToken fills notification_backend.jetstream.token when the
	// config leaves it empty.
	EnvNATSToken = "NATS_TOKEN"
	// EnvRustLog, when not empty, overrides logging.level (Aviso reads it
	// through its Rust logger; herald keeps the behaviour, see
	// rustLogLevel).
	EnvRustLog = "RUST_LOG"
)

// override is one HERALD_* or AVISOSERVER_* variable.
type override struct {
	name  string   // the variable
	path  []string // the key path, lowercased
	value string
}

// applyEnv applies the environment to a decoded config, in this order:
// AVISOSERVER_* overrides, RUST_LOG, HERALD_* overrides (so HERALD_ wins
// over AVISOSERVER_ for the same key), then NATS_TOKEN when the token is
// still empty. Within a prefix, shorter key paths apply first, so that
// HERALD_AUTH='{...}' and HERALD_AUTH__ENABLED=true combine as expected.
//
// What an override can set:
//   - a scalar key (string, number, boolean) anywhere, with the file's
//     typing (numbers in decimal; booleans true/false/yes/no/on/off/1/0);
//   - a list of strings, written as a YAML flow list ([a, b]) or as
//     comma-separated text (a,b);
//   - one realm of a role map: HERALD_AUTH__ADMIN_ROLES__ECMWF=admin,ops
//     (realm names come lowercased from the variable name; an existing
//     realm is matched ignoring case);
//   - a whole block, written as YAML flow text:
//     HERALD_ECPDS='{username: u, password: p, ...}';
//   - keys of event types and identifier fields that the file already
//     declares: HERALD_NOTIFICATION_SCHEMA__MARS__MAX_HISTORICAL_NOTIFICATIONS=500,
//     HERALD_NOTIFICATION_SCHEMA__MARS__IDENTIFIER__CLASS__MAX_LENGTH=4.
//     Names are matched ignoring case. The environment cannot add an event
//     type or an identifier field one by one (the variable name cannot
//     carry their case), but HERALD_NOTIFICATION_SCHEMA='{...}' replaces the
//     whole schema map.
func applyEnv(c *Config, env []string, lines map[string]int) Problems {
	avisos, heralds, ps := overrides(env)
	for _, o := range avisos {
		ps = append(ps, applyOverride(c, o, lines)...)
	}
	if v, ok := lookupEnv(env, EnvRustLog); ok {
		if level, ok := rustLogLevel(v); ok {
			if _, valid := LogLevel(level); !valid {
				ps = append(ps, Problem{Env: EnvRustLog, Path: "logging.level", Field: "logging.level",
					Rule: fmt.Sprintf("must be %s, got %s in %s", LogLevelNames, quote(level), quote(v))})
			}
			c.Logging.Level = level
			lines["logging.level"] = 0
		}
	}
	for _, o := range heralds {
		ps = append(ps, applyOverride(c, o, lines)...)
	}
	if js := &c.NotificationBackend.JetStream; js.Token == "" {
		if v, ok := lookupEnv(env, EnvNATSToken); ok && v != "" {
			js.Token = v
			lines["notification_backend.jetstream.token"] = 0
		}
	}
	return ps
}

// lookupEnv returns the value of the last entry named key, as the process
// environment does when a name is repeated.
func lookupEnv(env []string, key string) (string, bool) {
	for i := len(env) - 1; i >= 0; i-- {
		if name, value, ok := strings.Cut(env[i], "="); ok && name == key {
			return value, true
		}
	}
	return "", false
}

// overrides collects the override variables of env, the last entry of a
// repeated name winning, sorted by key path within each prefix.
func overrides(env []string) (avisos, heralds []override, ps Problems) {
	last := make(map[string]string)
	var names []string
	for _, kv := range env {
		name, value, ok := strings.Cut(kv, "=")
		if !ok {
			continue
		}
		if _, seen := last[name]; !seen {
			names = append(names, name)
		}
		last[name] = value
	}
	for _, name := range names {
		var rest string
		herald := false
		switch {
		case hasPrefixFold(name, EnvPrefix):
			rest, herald = name[len(EnvPrefix):], true
		case hasPrefixFold(name, EnvAvisoPrefix):
			rest = name[len(EnvAvisoPrefix):]
		default:
			continue
		}
		if strings.EqualFold(rest, "CONFIG_FILE") {
			continue
		}
		path := strings.Split(strings.ToLower(rest), "__")
		if slices.Contains(path, "") {
			ps = append(ps, Problem{Env: name, Path: strings.ToLower(rest), Field: strings.ToLower(rest),
				Rule: "not a config key; overrides are PREFIX_SECTION__KEY, e.g. HERALD_APPLICATION__PORT"})
			continue
		}
		o := override{name: name, path: path, value: last[name]}
		if herald {
			heralds = append(heralds, o)
		} else {
			avisos = append(avisos, o)
		}
	}
	byPath := func(a, b override) int {
		return cmp.Or(cmp.Compare(len(a.path), len(b.path)),
			cmp.Compare(strings.Join(a.path, "."), strings.Join(b.path, ".")),
			cmp.Compare(a.name, b.name))
	}
	slices.SortFunc(avisos, byPath)
	slices.SortFunc(heralds, byPath)
	return avisos, heralds, ps
}

// hasPrefixFold is strings.HasPrefix ignoring ASCII case.
func hasPrefixFold(s, prefix string) bool {
	return len(s) >= len(prefix) && strings.EqualFold(s[:len(prefix)], prefix)
}

// applyOverride walks the key path of one override and sets the value.
func applyOverride(c *Config, o override, lines map[string]int) Problems {
	d := &decoder{lines: lines, env: o.name, budget: maxNodeVisits}
	v := reflect.ValueOf(c).Elem()
	path := ""
	for i, seg := range o.path {
		for v.Kind() == reflect.Pointer {
			if v.IsNil() {
				v.Set(newValue(v.Type().Elem()))
			}
			v = v.Elem()
		}
		switch {
		case v.Type() == schemasType:
			s := findByName(d, v.Interface().([]*Schema), seg, path, "event type", func(s *Schema) string { return s.Name })
			if s == nil {
				return d.problems
			}
			path = join(path, s.Name)
			v = reflect.ValueOf(s).Elem()
		case v.Type() == fieldsType:
			f := findByName(d, v.Interface().([]*IdentifierField), seg, path, "identifier field", func(f *IdentifierField) string { return f.Name })
			if f == nil {
				return d.problems
			}
			path = join(path, f.Name)
			v = reflect.ValueOf(f).Elem()
		case v.Kind() == reflect.Struct:
			idx, ok := yamlFields(v.Type())[seg]
			if !ok {
				if !d.ignore(v, join(path, strings.Join(o.path[i:], ".")), 0) {
					d.fail(join(path, seg), 0, unknownKeyRule(v.Type(), seg))
				}
				return d.problems
			}
			if f, ok := v.Addr().Interface().(*IdentifierField); ok && !slices.Contains(f.Keys, seg) {
				f.Keys = append(f.Keys, seg)
			}
			path = join(path, seg)
			v = v.Field(idx)
		case v.Kind() == reflect.Map && i == len(o.path)-1:
			key := seg
			for _, k := range v.MapKeys() {
				if strings.EqualFold(k.String(), seg) {
					key = k.String()
					break
				}
			}
			path = join(path, key)
			el := reflect.New(v.Type().Elem()).Elem()
			n := len(d.problems)
			d.envValue(o.value, el, path)
			if len(d.problems) > n {
				return d.problems
			}
			if v.IsNil() {
				v.Set(reflect.MakeMap(v.Type()))
			}
			v.SetMapIndex(reflect.ValueOf(key), el)
			d.setLine(path, 0)
			return d.problems
		default:
			d.fail(join(path, strings.Join(o.path[i:], ".")), 0, "unknown key")
			return d.problems
		}
	}
	d.envValue(o.value, v, path)
	d.setLine(path, 0)
	return d.problems
}

// findByName finds the entry of a named list (event types, identifier
// fields) that a lowercased variable segment names: the exact name, else
// the only name equal ignoring case.
func findByName[T any](d *decoder, list []T, seg, path, what string, name func(T) string) T {
	var zero T
	var found []T
	for _, x := range list {
		if name(x) == seg {
			return x
		}
		if strings.EqualFold(name(x), seg) {
			found = append(found, x)
		}
	}
	switch len(found) {
	case 1:
		return found[0]
	case 0:
		d.fail(join(path, seg), 0, "no "+what+" "+quote(seg)+" in the config file; the environment can change only the ones the file declares")
	default:
		d.fail(join(path, seg), 0, "names more than one "+what+" (names differ only in case); set it in the config file")
	}
	return zero
}

// envValue decodes the text of a variable into v (see applyEnv for the
// accepted forms).
func (d *decoder) envValue(text string, v reflect.Value, path string) {
	t := v.Type()
	for t.Kind() == reflect.Pointer {
		t = t.Elem()
	}
	switch {
	case t.Kind() == reflect.String || t.Kind() == reflect.Bool || t.Kind() == reflect.Int || t.Kind() == reflect.Int64 || t.Kind() == reflect.Int32:
		d.value(&yaml.Node{Kind: yaml.ScalarNode, Tag: "!!str", Value: text}, v, path)
	case t.Kind() == reflect.Slice && t.Elem().Kind() == reflect.String && !strings.HasPrefix(strings.TrimSpace(text), "["):
		seq := &yaml.Node{Kind: yaml.SequenceNode}
		for item := range strings.SplitSeq(text, ",") {
			if item = strings.TrimSpace(item); item != "" {
				seq.Content = append(seq.Content, &yaml.Node{Kind: yaml.ScalarNode, Tag: "!!str", Value: item})
			}
		}
		d.value(seq, v, path)
	default:
		var doc yaml.Node
		if err := yaml.Unmarshal([]byte(text), &doc); err != nil {
			d.fail(path, 0, "not valid YAML flow text: "+err.Error())
			return
		}
		if len(doc.Content) == 0 {
			return
		}
		d.value(doc.Content[0], v, path)
	}
}

// rustLogLevel maps a RUST_LOG value to logging.level. RUST_LOG is a
// comma-separated list of directives, LEVEL or TARGET=LEVEL, as env_logger
// and tracing's EnvFilter read it (a target may be a module path such as
// aviso_server::routes; span filters in brackets are ignored; a target
// without a level means trace). herald's logs are all the server's own,
// so the last directive for the server's crate (aviso_server or herald)
// wins over the last bare level: "warn,aviso_server=debug" is debug.
// Directives for other targets (a library's) are ignored, and ok is false
// when no directive applies, leaving logging.level as it is. Any other
// bare word is taken as a level (herald has no other crates to name), so
// a misspelt level is reported, as is an unknown level of the server's
// crate.
func rustLogLevel(v string) (level string, ok bool) {
	global, server := "", ""
	for d := range strings.SplitSeq(v, ",") {
		d = strings.TrimSpace(d)
		if d == "" {
			continue
		}
		target, lvl, hasLevel := strings.Cut(d, "=")
		if i := strings.IndexByte(target, '['); i >= 0 {
			target = target[:i]
		}
		target = strings.TrimSpace(target)
		if !hasLevel {
			if serverTarget(target) {
				server = "trace"
			} else {
				global = target
			}
			continue
		}
		if serverTarget(target) {
			server = strings.TrimSpace(lvl)
		}
	}
	switch {
	case server != "":
		return server, true
	case global != "":
		return global, true
	}
	return "", false
}

// serverTarget reports whether a RUST_LOG target names the server's own
// crate: aviso_server or herald, or a module inside either.
func serverTarget(target string) bool {
	crate, _, _ := strings.Cut(strings.ToLower(target), "::")
	return crate == "aviso_server" || crate == "herald"
}
