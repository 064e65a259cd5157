package configs

import (
	"cmp"
	"math"
	"reflect"
	"strconv"
	"strings"
	"unicode/utf8"

	"go.yaml.in/yaml/v3"
)

// Limits of the decoder. A config file is operator input, but a few lines
// of YAML aliases can expand into millions of nodes; the decoder stops
// instead of running out of memory.
const (
	maxProblems   = 100
	maxNodeVisits = 4 << 20
	maxAliasHops  = 64
)

// Special slice types: YAML mappings decoded into ordered slices.
var (
	schemasType = reflect.TypeFor[[]*Schema]()
	fieldsType  = reflect.TypeFor[[]*IdentifierField]()
)

// decoder walks a yaml.Node tree onto a Config by reflection over the yaml
// struct tags. It never stops at the first problem: it records each one
// and carries on with the next key, so that one run reports everything.
type decoder struct {
	problems Problems
	// lines maps every key path written in the file to its line; keys set
	// from the environment map to 0. Validation uses it to point at lines
	// and Parse to tell a missing key from a zero value.
	lines map[string]int
	// env is the environment variable being applied; empty while
	// decoding the file. Environment values are text, so scalars are
	// parsed loosely (see scalarBool and scalarInt).
	env string
	// budget is the number of nodes the decoder may still visit.
	budget int
	full   bool // the problem limit or the node budget was reached
}

func newDecoder() *decoder {
	return &decoder{lines: make(map[string]int), budget: maxNodeVisits}
}

// fail records a problem at path. Lines are dropped for environment values.
func (d *decoder) fail(path string, line int, rule string) {
	if d.full {
		return
	}
	if len(d.problems) >= maxProblems {
		d.full = true
		d.problems = append(d.problems, Problem{Path: "config", Field: "config", Rule: "too many problems; fix these first", Env: d.env})
		return
	}
	if d.env != "" {
		line = 0
	}
	d.problems = append(d.problems, Problem{Path: path, Line: line, Field: path, Rule: rule, Env: d.env})
}

// typeError records "expected <want>, got <what n is>".
func (d *decoder) typeError(n *yaml.Node, path, want string) {
	d.fail(path, n.Line, "expected "+want+", got "+describe(n))
}

// setLine records that path was written at line.
func (d *decoder) setLine(path string, line int) {
	if d.env != "" {
		line = 0
	}
	d.lines[path] = line
}

// resolve follows aliases and counts the visit against the node budget.
// It returns nil when the node cannot be used (the problem is recorded).
func (d *decoder) resolve(n *yaml.Node, path string) *yaml.Node {
	if d.full {
		return nil
	}
	d.budget--
	if d.budget < 0 {
		d.fail(path, n.Line, "the document expands to too many nodes through aliases")
		d.full = true
		return nil
	}
	for hops := 0; n.Kind == yaml.AliasNode; hops++ {
		if n.Alias == nil || hops >= maxAliasHops {
			d.fail(path, n.Line, "unresolvable alias")
			return nil
		}
		n = n.Alias
	}
	return n
}

// isNull reports whether n is a YAML null (`~`, `null` or nothing at all).
func isNull(n *yaml.Node) bool {
	return n.Kind == yaml.ScalarNode && n.ShortTag() == "!!null"
}

// isQuoted reports whether a scalar was written in quotes.
func isQuoted(n *yaml.Node) bool {
	return n.Style&(yaml.DoubleQuotedStyle|yaml.SingleQuotedStyle) != 0
}

// describe names what a node is, for "expected X, got Y" messages.
func describe(n *yaml.Node) string {
	switch n.Kind {
	case yaml.MappingNode:
		return "a mapping"
	case yaml.SequenceNode:
		return "a list"
	case yaml.ScalarNode:
		if isNull(n) {
			return "null"
		}
		return quote(n.Value)
	}
	return "nothing"
}

// quote quotes a value for a message, shortened to 60 characters.
func quote(s string) string {
	const limit = 60
	if utf8.RuneCountInString(s) > limit {
		s = string([]rune(s)[:limit]) + "..."
	}
	return strconv.Quote(s)
}

// join appends a key to a path.
func join(path, key string) string {
	if path == "" {
		return key
	}
	return path + "." + key
}

// index appends a list index to a path.
func index(path string, i int) string {
	return path + "[" + strconv.Itoa(i) + "]"
}

// yamlFields maps the yaml tag names of a struct type to field indexes.
// Fields tagged "-" (Name, Line, Keys) are not keys of the file.
func yamlFields(t reflect.Type) map[string]int {
	m := make(map[string]int, t.NumField())
	for i := range t.NumField() {
		f := t.Field(i)
		if !f.IsExported() {
			continue
		}
		name, _, _ := strings.Cut(f.Tag.Get("yaml"), ",")
		if name == "-" || name == "" {
			continue
		}
		m[name] = i
	}
	return m
}

// newValue allocates a pointer to a new block, holding the block's
// defaults when it has some.
func newValue(t reflect.Type) reflect.Value {
	switch t {
	case reflect.TypeFor[ECPDS]():
		return reflect.ValueOf(defaultECPDS())
	case reflect.TypeFor[Homepage]():
		return reflect.ValueOf(defaultHomepage())
	case reflect.TypeFor[CORS]():
		return reflect.ValueOf(defaultCORS())
	case reflect.TypeFor[OTLP]():
		return reflect.ValueOf(defaultOTLP())
	case reflect.TypeFor[Tracing]():
		return reflect.ValueOf(defaultTracing())
	}
	return reflect.New(t)
}

// value decodes n into v. A null leaves v unchanged: an empty key keeps
// its default and an empty block stays absent.
func (d *decoder) value(n *yaml.Node, v reflect.Value, path string) {
	n = d.resolve(n, path)
	if n == nil || isNull(n) {
		return
	}
	switch v.Type() {
	case schemasType:
		d.schemas(n, v, path)
		return
	case fieldsType:
		d.identifier(n, v, path)
		return
	}
	switch v.Kind() {
	case reflect.Pointer:
		if v.IsNil() {
			v.Set(newValue(v.Type().Elem()))
		}
		d.value(n, v.Elem(), path)
	case reflect.Struct:
		d.mapping(n, v, path)
	case reflect.String:
		if n.Kind != yaml.ScalarNode {
			d.typeError(n, path, "a string")
			return
		}
		v.SetString(n.Value)
	case reflect.Bool:
		b, ok := d.scalarBool(n)
		if !ok {
			d.typeError(n, path, "true or false")
			return
		}
		v.SetBool(b)
	case reflect.Int, reflect.Int64, reflect.Int32:
		d.integer(n, v, path)
	case reflect.Float64:
		d.float(n, v, path)
	case reflect.Slice:
		switch v.Type().Elem().Kind() {
		case reflect.String:
			d.stringList(n, v, path)
		case reflect.Struct:
			d.structList(n, v, path)
		default:
			d.fail(path, n.Line, "unsupported config type "+v.Type().String())
		}
	case reflect.Map:
		if v.Type().Key().Kind() != reflect.String {
			d.fail(path, n.Line, "unsupported config type "+v.Type().String())
			return
		}
		d.stringMap(n, v, path)
	case reflect.Interface:
		var x any
		if err := n.Decode(&x); err != nil {
			d.fail(path, n.Line, "invalid value: "+err.Error())
			return
		}
		if x != nil {
			v.Set(reflect.ValueOf(x))
		}
	default:
		d.fail(path, n.Line, "unsupported config type "+v.Type().String())
	}
}

// key returns the name of a mapping key, or false (with the problem
// recorded) when the key is not a plain scalar.
func (d *decoder) key(k *yaml.Node, path string) (string, bool) {
	k = d.resolve(k, path)
	if k == nil {
		return "", false
	}
	if k.Kind != yaml.ScalarNode {
		d.fail(cmp.Or(path, "config"), k.Line, "keys must be plain names, got "+describe(k))
		return "", false
	}
	if k.ShortTag() == "!!merge" {
		d.fail(join(path, k.Value), k.Line, "YAML merge keys (<<) are not supported; write the keys out or use an alias for the whole block")
		return "", false
	}
	return k.Value, true
}

// pair is one key/value of a mapping whose key passed the checks.
type pair struct {
	name string
	key  *yaml.Node
	val  *yaml.Node
}

// pairs returns the entries of a mapping in file order, recording
// duplicate keys (and skipping the repeats).
func (d *decoder) pairs(n *yaml.Node, path string) []pair {
	out := make([]pair, 0, len(n.Content)/2)
	seen := make(map[string]int, len(n.Content)/2)
	for i := 0; i+1 < len(n.Content); i += 2 {
		k, val := n.Content[i], n.Content[i+1]
		name, ok := d.key(k, path)
		if !ok {
			continue
		}
		if first, dup := seen[name]; dup {
			d.fail(join(path, name), k.Line, "duplicate key, first written at line "+strconv.Itoa(first))
			continue
		}
		seen[name] = k.Line
		out = append(out, pair{name: name, key: k, val: val})
	}
	return out
}

// mapping decodes a mapping onto a struct and returns the keys written.
func (d *decoder) mapping(n *yaml.Node, v reflect.Value, path string) []string {
	if n.Kind != yaml.MappingNode {
		d.typeError(n, path, "a mapping")
		return nil
	}
	fields := yamlFields(v.Type())
	var keys []string
	for _, p := range d.pairs(n, path) {
		kp := join(path, p.name)
		i, ok := fields[p.name]
		if !ok {
			if d.ignore(v, kp, p.key.Line) {
				continue
			}
			d.fail(kp, p.key.Line, unknownKeyRule(v.Type(), p.name))
			continue
		}
		keys = append(keys, p.name)
		d.setLine(kp, p.key.Line)
		d.value(p.val, v.Field(i), kp)
	}
	return keys
}

// ignore records an unknown key of a block whose unknown keys are
// ignored rather than refused, and reports whether v is such a block.
// Only logging.otlp is: aviso-server ignores the keys it does not know
// there, and a config written for it must load unchanged.
func (d *decoder) ignore(v reflect.Value, path string, line int) bool {
	if !v.CanAddr() {
		return false
	}
	o, ok := v.Addr().Interface().(*OTLP)
	if !ok {
		return false
	}
	switch {
	case d.env != "":
		path += " (" + d.env + ")"
	case line > 0:
		path += " (line " + strconv.Itoa(line) + ")"
	}
	o.Ignored = append(o.Ignored, path)
	return true
}

// unknownKeyRule explains an unknown key, with a hint for the keys that
// older Aviso versions accepted.
func unknownKeyRule(t reflect.Type, name string) string {
	switch {
	case t == reflect.TypeFor[Payload]() && name == "type":
		return "unknown key; the old payload: {type: [...]} form was removed, payload accepts required (true or false) and herald's codec (a codec name)"
	case t == reflect.TypeFor[StreamAuth]() && name == "allowed_roles":
		return "unknown key; allowed_roles was replaced by read_roles and write_roles"
	case t == reflect.TypeFor[IdentifierField]() && name == "rules":
		return "unknown key; write the handler keys (type, required, ...) directly under the field"
	}
	return "unknown key"
}

// schemas decodes `notification_schema`, a mapping of event types, into
// an ordered slice.
func (d *decoder) schemas(n *yaml.Node, v reflect.Value, path string) {
	if n.Kind != yaml.MappingNode {
		d.typeError(n, path, "a mapping of event types")
		return
	}
	ps := d.pairs(n, path)
	out := make([]*Schema, 0, len(ps))
	for _, p := range ps {
		kp := join(path, p.name)
		d.setLine(kp, p.key.Line)
		s := &Schema{Name: p.name, Line: p.key.Line}
		if d.env != "" {
			s.Line = 0
		}
		if val := d.resolve(p.val, kp); val != nil && !isNull(val) {
			d.mapping(val, reflect.ValueOf(s).Elem(), kp)
		}
		out = append(out, s)
	}
	v.Set(reflect.ValueOf(out))
}

// identifier decodes a schema's `identifier`, a mapping of fields, into an
// ordered slice, recording the keys written under each field.
func (d *decoder) identifier(n *yaml.Node, v reflect.Value, path string) {
	if n.Kind != yaml.MappingNode {
		d.typeError(n, path, "a mapping of identifier fields")
		return
	}
	ps := d.pairs(n, path)
	out := make([]*IdentifierField, 0, len(ps))
	for _, p := range ps {
		kp := join(path, p.name)
		d.setLine(kp, p.key.Line)
		f := &IdentifierField{Name: p.name, Line: p.key.Line}
		if d.env != "" {
			f.Line = 0
		}
		val := d.resolve(p.val, kp)
		switch {
		case val == nil || isNull(val):
		case val.Kind == yaml.SequenceNode:
			d.fail(kp, val.Line, "expected a mapping of handler keys (type, required, ...), got a list; the old list form \"- type: ...\" is not supported, remove the dash")
		default:
			f.Keys = d.mapping(val, reflect.ValueOf(f).Elem(), kp)
		}
		out = append(out, f)
	}
	v.Set(reflect.ValueOf(out))
}

// stringList decodes a list of scalars. From the environment, a value
// that is not a YAML flow list is a comma-separated list.
func (d *decoder) stringList(n *yaml.Node, v reflect.Value, path string) {
	if n.Kind != yaml.SequenceNode {
		d.typeError(n, path, "a list of strings")
		return
	}
	out := make([]string, 0, len(n.Content))
	for i, el := range n.Content {
		ip := index(path, i)
		el = d.resolve(el, ip)
		if el == nil {
			continue
		}
		if el.Kind != yaml.ScalarNode || isNull(el) {
			d.typeError(el, ip, "a string")
			continue
		}
		d.setLine(ip, el.Line)
		out = append(out, el.Value)
	}
	v.Set(reflect.ValueOf(out).Convert(v.Type()))
}

// structList decodes a sequence of mappings (codecs.resources), each
// strictly onto a fresh element.
func (d *decoder) structList(n *yaml.Node, v reflect.Value, path string) {
	if n.Kind != yaml.SequenceNode {
		d.typeError(n, path, "a list of mappings")
		return
	}
	out := reflect.MakeSlice(v.Type(), 0, len(n.Content))
	for i, el := range n.Content {
		ip := index(path, i)
		el = d.resolve(el, ip)
		if el == nil {
			continue
		}
		d.setLine(ip, el.Line)
		elem := reflect.New(v.Type().Elem()).Elem()
		d.mapping(el, elem, ip)
		out = reflect.Append(out, elem)
	}
	v.Set(out)
}

// stringMap decodes a mapping of names to values (realm → roles). The
// map is replaced, not merged, and is non-nil even when written empty.
func (d *decoder) stringMap(n *yaml.Node, v reflect.Value, path string) {
	if n.Kind != yaml.MappingNode {
		d.typeError(n, path, "a mapping of realm to role list")
		return
	}
	ps := d.pairs(n, path)
	m := reflect.MakeMapWithSize(v.Type(), len(ps))
	for _, p := range ps {
		kp := join(path, p.name)
		d.setLine(kp, p.key.Line)
		el := reflect.New(v.Type().Elem()).Elem()
		d.value(p.val, el, kp)
		m.SetMapIndex(reflect.ValueOf(p.name).Convert(v.Type().Key()), el)
	}
	v.Set(m)
}

// scalarBool reads a boolean. The file needs true or false (any case
// YAML accepts) or an unquoted yes/no/on/off; the environment also
// accepts 1 and 0.
func (d *decoder) scalarBool(n *yaml.Node) (bool, bool) {
	if n.Kind != yaml.ScalarNode {
		return false, false
	}
	if !isQuoted(n) || d.env != "" {
		switch strings.ToLower(n.Value) {
		case "true", "yes", "on":
			return true, true
		case "false", "no", "off":
			return false, true
		}
	}
	if d.env != "" {
		switch n.Value {
		case "1":
			return true, true
		case "0":
			return false, true
		}
	}
	return false, false
}

// integer decodes a whole number into an int field, checking its range.
// The file needs a YAML integer (application.port also takes a string of
// digits, like Aviso); the environment gives decimal text.
func (d *decoder) integer(n *yaml.Node, v reflect.Value, path string) {
	want := "an integer"
	if path == "application.port" || path == "metrics.port" {
		want = "a port number"
	}
	if n.Kind != yaml.ScalarNode {
		d.typeError(n, path, want)
		return
	}
	i, ok, overflow := d.scalarInt(n, path == "application.port")
	switch {
	case overflow:
		d.fail(path, n.Line, "integer "+quote(n.Value)+" is out of range")
		return
	case !ok:
		d.typeError(n, path, want)
		return
	}
	if v.OverflowInt(i) {
		d.fail(path, n.Line, "integer "+quote(n.Value)+" is out of range")
		return
	}
	v.SetInt(i)
}

// float decodes a number: an integer or a decimal (YAML's !!int or
// !!float, or any such text from the environment). Infinities and NaN
// are refused.
func (d *decoder) float(n *yaml.Node, v reflect.Value, path string) {
	tag := n.ShortTag()
	if n.Kind != yaml.ScalarNode || (d.env == "" && tag != "!!int" && tag != "!!float") {
		d.typeError(n, path, "a number")
		return
	}
	f, err := strconv.ParseFloat(strings.ReplaceAll(n.Value, "_", ""), 64)
	if err != nil || math.IsInf(f, 0) || math.IsNaN(f) {
		d.typeError(n, path, "a number")
		return
	}
	v.SetFloat(f)
}

// scalarInt parses an integer scalar. ok is false when the value is not an
// integer at all; overflow is true when it is one but does not fit 64 bits.
func (d *decoder) scalarInt(n *yaml.Node, allowString bool) (i int64, ok, overflow bool) {
	text := n.Value
	tag := n.ShortTag()
	switch {
	case d.env != "" || (allowString && tag == "!!str"):
		if !isDecimal(text) {
			return 0, false, false
		}
	case tag == "!!int":
		if !isDecimal(text) {
			// 0x1F, 0o17, 0b101, 1_000: YAML's own integer syntax.
			if err := n.Decode(&i); err != nil {
				return 0, true, true
			}
			return i, true, false
		}
	case tag == "!!float" && isDecimal(text):
		return 0, true, true
	default:
		return 0, false, false
	}
	i, err := strconv.ParseInt(text, 10, 64)
	if err != nil {
		return 0, true, true
	}
	return i, true, false
}

// isDecimal reports whether s is an optionally signed run of ASCII digits.
func isDecimal(s string) bool {
	if s != "" && (s[0] == '+' || s[0] == '-') {
		s = s[1:]
	}
	if s == "" {
		return false
	}
	for i := 0; i < len(s); i++ {
		if s[i] < '0' || s[i] > '9' {
			return false
		}
	}
	return true
}
