package server

import (
	"fmt"
	"os"
	"reflect"
	"slices"
	"strings"
	"testing"

	"github.com/herald-gateway/herald/configs"
)

// docKey is one row of a table of docs/configuration.md.
type docKey struct {
	def, env, reloadable string
	line                 int
}

// configDocRows reads the key tables of docs/configuration.md: rows whose
// first cell is a key in backticks, with the default, the environment
// variable and the reloadable mark after it.
func configDocRows(t *testing.T) map[string]docKey {
	t.Helper()
	text, err := os.ReadFile("../docs/configuration.md")
	if err != nil {
		t.Fatal(err)
	}
	rows := map[string]docKey{}
	for i, l := range strings.Split(string(text), "\n") {
		if !strings.HasPrefix(l, "| `") {
			continue
		}
		cells := strings.Split(strings.Trim(l, "|"), " | ")
		if len(cells) < 5 {
			t.Fatalf("docs/configuration.md:%d: %d cells, want key, default, variable, reloadable, meaning", i+1, len(cells))
		}
		key := strings.Trim(strings.TrimSpace(cells[0]), "`")
		if _, dup := rows[key]; dup {
			t.Errorf("docs/configuration.md:%d: %s listed twice", i+1, key)
		}
		rows[key] = docKey{def: strings.TrimSpace(cells[1]), env: strings.TrimSpace(cells[2]), reloadable: strings.TrimSpace(cells[3]), line: i + 1}
	}
	return rows
}

// configKey is one settable key of the config types.
type configKey struct {
	path string
	def  string // the default as the table writes it, "" when not a plain value
}

// configKeys walks the config types by their yaml tags. Event types and
// identifier fields, written as maps in the file, are <event_type> and
// <field>; list elements are []. def is the value of configs.Default()
// for keys it sets to a non-zero plain value.
func configKeys() []configKey {
	var out []configKey
	var walk func(v reflect.Value, t reflect.Type, prefix string)
	walk = func(v reflect.Value, t reflect.Type, prefix string) {
		for t.Kind() == reflect.Pointer {
			t = t.Elem()
			if v.IsValid() {
				if v.IsNil() {
					v = reflect.Value{}
				} else {
					v = v.Elem()
				}
			}
		}
		for i := range t.NumField() {
			f := t.Field(i)
			key, _, _ := strings.Cut(f.Tag.Get("yaml"), ",")
			if key == "-" || !f.IsExported() {
				continue
			}
			path := prefix + key
			var fv reflect.Value
			if v.IsValid() {
				fv = v.Field(i)
			}
			ft := f.Type
			for ft.Kind() == reflect.Pointer {
				ft = ft.Elem()
			}
			if ft.Kind() == reflect.Struct {
				walk(fv, f.Type, path+".")
				continue
			}
			if ft.Kind() == reflect.Slice {
				et := ft.Elem()
				for et.Kind() == reflect.Pointer {
					et = et.Elem()
				}
				if et.Kind() == reflect.Struct {
					// A struct with a yaml:"-" Name is an entry of a map
					// in the file, keyed by that name.
					if n, ok := et.FieldByName("Name"); ok && n.Tag.Get("yaml") == "-" {
						placeholder := map[string]string{"notification_schema": "<event_type>", "identifier": "<field>"}[key]
						if placeholder == "" {
							panic("no placeholder for the map " + path)
						}
						walk(reflect.Value{}, et, path+"."+placeholder+".")
					} else {
						walk(reflect.Value{}, et, path+"[].")
					}
					continue
				}
			}
			def := ""
			for fv.IsValid() && fv.Kind() == reflect.Pointer && !fv.IsNil() {
				fv = fv.Elem()
			}
			if fv.IsValid() && fv.Kind() != reflect.Pointer && !fv.IsZero() {
				switch fv.Kind() {
				case reflect.String, reflect.Int, reflect.Int64, reflect.Bool:
					def = fmt.Sprint(fv.Interface())
				}
			}
			out = append(out, configKey{path: path, def: def})
		}
	}
	d := configs.Default()
	walk(reflect.ValueOf(d), reflect.TypeOf(d), "")
	return out
}

// TestConfigDocMatchesTypes checks docs/configuration.md against the config
// types: every key of the types has a row and every row is a key; the
// environment variable is the key's; the reloadable mark is what reload
// declares (the reloadable list); and a default the types set is the
// first code span of the default cell.
func TestConfigDocMatchesTypes(t *testing.T) {
	rows := configDocRows(t)
	keys := configKeys()
	if len(keys) < 100 {
		t.Fatalf("walked %d keys: the walk is broken", len(keys))
	}
	var paths []string
	for _, k := range keys {
		paths = append(paths, k.path)
		row, ok := rows[k.path]
		if !ok {
			t.Errorf("docs/configuration.md has no row for %s", k.path)
			continue
		}
		wantEnv := "–"
		if !strings.Contains(k.path, "[]") {
			v := strings.ToUpper(strings.ReplaceAll(k.path, ".", "__"))
			wantEnv = "`HERALD_" + v + "`"
		}
		if row.env != wantEnv {
			t.Errorf("docs/configuration.md:%d: %s: variable %s, want %s", row.line, k.path, row.env, wantEnv)
		}
		wantReload := "no"
		if isReloadable(k.path, reloadable) && !slices.ContainsFunc(fixedWhole, func(p string) bool { return isReloadable(k.path, []string{p}) }) {
			wantReload = "yes"
		}
		if row.reloadable != wantReload {
			t.Errorf("docs/configuration.md:%d: %s: reloadable %q, want %q", row.line, k.path, row.reloadable, wantReload)
		}
		if k.def != "" {
			_, after, _ := strings.Cut(row.def, "`")
			got, _, _ := strings.Cut(after, "`")
			if got != k.def {
				t.Errorf("docs/configuration.md:%d: %s: default %q, want `%s`", row.line, k.path, row.def, k.def)
			}
		}
	}
	for key, row := range rows {
		if !slices.Contains(paths, key) {
			t.Errorf("docs/configuration.md:%d: %s is not a config key", row.line, key)
		}
	}
}

// TestConfigDocWalk checks the walk itself on a type with a new field: a
// key added to the config types needs a row.
func TestConfigDocWalk(t *testing.T) {
	keys := configKeys()
	for _, want := range []string{"application.port", "notification_schema.<event_type>.identifier.<field>.type", "codecs.resources[].dir", "session.max_frame_bytes"} {
		if !slices.ContainsFunc(keys, func(k configKey) bool { return k.path == want }) {
			t.Errorf("the walk misses %s", want)
		}
	}
	for _, k := range keys {
		if k.path == "metrics.port" && k.def != "9090" {
			t.Errorf("metrics.port default %q, want 9090", k.def)
		}
	}
}
