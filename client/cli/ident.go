package cli

import (
	"encoding/json"
	"fmt"
	"math"
	"slices"
	"strconv"
	"strings"
	"unicode/utf8"
)

// This file reads identifier arguments (`class=od`, `step>=6`,
// `class=od,rd`, `step=6..12`) and maps them to the identifier values
// and Aviso constraint objects of a request (docs/api.md):
//
//	key=value    the value (a scalar, matched exactly)
//	key=a,b,c    {"in": [a, b, c]}       Int, Float and Enum fields
//	key=lo..hi   {"between": [lo, hi]}   Int and Float fields
//	key>v        {"gt": v}   key>=v {"gte": v}
//	key<v        {"lt": v}   key<=v {"lte": v}   Int and Float fields
//
// Operands of numeric fields are JSON numbers, of enum fields strings.
// On any other field a value is taken literally, commas and dots
// included (polygons, points, dates).

// Arg is one parsed identifier argument.
type Arg struct {
	Key string
	// Op is "=", ">", ">=", "<" or "<=".
	Op    string
	Value string
}

// String renders the argument as it is written on the command line.
func (a Arg) String() string { return a.Key + a.Op + a.Value }

// ArgError is an identifier argument that cannot be used; it names the
// argument.
type ArgError struct {
	Arg string
	Msg string
}

// Error quotes the argument and says what is wrong.
func (e *ArgError) Error() string { return fmt.Sprintf("identifier argument %q: %s", e.Arg, e.Msg) }

const argForms = "write key=value, key>=v, key<v (also > and <=), key=a,b (one of) or key=lo..hi (between)"

// ParseArg splits one identifier argument into key, operator and value.
// The key is everything before the first '=', '<' or '>'.
func ParseArg(s string) (Arg, error) {
	if !utf8.ValidString(s) {
		return Arg{}, &ArgError{s, "not valid UTF-8"}
	}
	i := strings.IndexAny(s, "=<>")
	if i < 0 {
		return Arg{}, &ArgError{s, "no operator: " + argForms}
	}
	if i == 0 {
		return Arg{}, &ArgError{s, "the key before " + strconv.Quote(s[:1]) + " is empty: " + argForms}
	}
	a := Arg{Key: s[:i]}
	rest := s[i:]
	switch {
	case strings.HasPrefix(rest, ">="), strings.HasPrefix(rest, "<="):
		a.Op = rest[:2]
	default:
		a.Op = rest[:1]
	}
	a.Value = rest[len(a.Op):]
	if strings.TrimSpace(a.Key) != a.Key {
		return Arg{}, &ArgError{s, "the key " + strconv.Quote(a.Key) + " has leading or trailing spaces"}
	}
	if a.Op != "=" && a.Value == "" {
		return Arg{}, &ArgError{s, "no value after " + a.Op}
	}
	if a.Value != "" && strings.ContainsRune("=<>", rune(a.Value[0])) {
		return Arg{}, &ArgError{s, "the value starts with " + strconv.Quote(a.Value[:1]) + ": write a single operator (=, >, >=, < or <=)"}
	}
	return a, nil
}

// kind is how a field's values are typed, from its identifier handler.
type kind int

const (
	kindUnknown kind = iota // no schema: typed by the look of the value
	kindInt                 // IntHandler
	kindFloat               // FloatHandler
	kindEnum                // EnumHandler
	kindSpatial             // PolygonHandler, PointCloudHandler
	kindOther               // every other handler: the value is literal
)

// kindOf maps an identifier handler to its kind.
func kindOf(handler string) kind {
	switch handler {
	case "IntHandler":
		return kindInt
	case "FloatHandler":
		return kindFloat
	case "EnumHandler":
		return kindEnum
	case "PolygonHandler", "PointCloudHandler":
		return kindSpatial
	}
	return kindOther
}

var compareOps = map[string]string{">": "gt", ">=": "gte", "<": "lt", "<=": "lte"}

// filterJSON is the identifier value of a watch or replay argument on a
// field of kind k named handler (for messages).
func (a Arg) filterJSON(k kind, handler string) (json.RawMessage, error) {
	numeric := k == kindInt || k == kindFloat
	if op, ok := compareOps[a.Op]; ok {
		if !numeric && k != kindUnknown {
			return nil, &ArgError{a.String(), fmt.Sprintf("%s compares numbers, and %s is %s field: use %s=value", a.Op, a.Key, article(handler), a.Key)}
		}
		n, err := a.number(k, a.Value, handler)
		if err != nil {
			return nil, err
		}
		return constraint(op, n), nil
	}
	v := a.Value
	switch k {
	case kindInt, kindFloat:
		if lo, hi, ok := strings.Cut(v, ".."); ok {
			return a.between(k, lo, hi, handler)
		}
		if strings.Contains(v, ",") {
			items, err := a.items(v)
			if err != nil {
				return nil, err
			}
			ns := make([]json.RawMessage, len(items))
			for i, it := range items {
				if ns[i], err = a.number(k, it, handler); err != nil {
					return nil, err
				}
			}
			return constraint("in", list(ns)), nil
		}
	case kindEnum:
		if strings.Contains(v, "..") {
			return nil, &ArgError{a.String(), fmt.Sprintf("lo..hi (between) needs a number field, and %s is an EnumHandler field: list the values, %s=a,b", a.Key, a.Key)}
		}
		if strings.Contains(v, ",") {
			items, err := a.items(v)
			if err != nil {
				return nil, err
			}
			return constraint("in", list(strs(items))), nil
		}
	case kindUnknown:
		// No schema to go by: numbers as numbers, anything else as text.
		if lo, hi, ok := strings.Cut(v, ".."); ok && isNumber(lo) && isNumber(hi) {
			return a.between(k, lo, hi, handler)
		}
		if strings.Contains(v, ",") {
			items, err := a.items(v)
			if err != nil {
				return nil, err
			}
			if all(items, isNumber) {
				ns := make([]json.RawMessage, len(items))
				for i, it := range items {
					ns[i], _ = a.number(k, it, handler)
				}
				return constraint("in", list(ns)), nil
			}
			return constraint("in", list(strs(items))), nil
		}
	}
	return str(v), nil
}

// notifyJSON is the identifier value of a notify argument: the text as a
// JSON string (every handler reads its value from text), except that a
// spatial field written as a JSON array ([[lat,lon],...]) is sent as that
// array (a point cloud takes no text form).
func (a Arg) notifyJSON(k kind) (json.RawMessage, error) {
	if a.Op != "=" {
		return nil, &ArgError{a.String(), "notify takes key=value: " + a.Op + " filters, on watch and replay"}
	}
	if k == kindSpatial && strings.HasPrefix(strings.TrimSpace(a.Value), "[") {
		if !json.Valid([]byte(a.Value)) {
			return nil, &ArgError{a.String(), "the value starts with [ but is not valid JSON: write [[lat,lon],...]"}
		}
		return json.RawMessage(a.Value), nil
	}
	return str(a.Value), nil
}

// between builds {"between": [lo, hi]}.
func (a Arg) between(k kind, lo, hi, handler string) (json.RawMessage, error) {
	l, err := a.number(k, lo, handler)
	if err != nil {
		return nil, err
	}
	h, err := a.number(k, hi, handler)
	if err != nil {
		return nil, err
	}
	var above bool
	if k == kindInt {
		li, _ := strconv.ParseInt(string(l), 10, 64)
		hi, _ := strconv.ParseInt(string(h), 10, 64)
		above = li > hi
	} else {
		lf, _ := strconv.ParseFloat(string(l), 64)
		hf, _ := strconv.ParseFloat(string(h), 64)
		above = lf > hf
	}
	if above {
		return nil, &ArgError{a.String(), fmt.Sprintf("in lo..hi the low end %s is above the high end %s", lo, hi)}
	}
	return constraint("between", list([]json.RawMessage{l, h})), nil
}

// items splits a comma-separated list; an empty item is an error.
func (a Arg) items(v string) ([]string, error) {
	items := strings.Split(v, ",")
	for i, it := range items {
		if it == "" {
			return nil, &ArgError{a.String(), fmt.Sprintf("item %d of the list a,b,... is empty", i+1)}
		}
	}
	return items, nil
}

// number renders an operand of a numeric field as a JSON number: an
// integer for IntHandler fields, any finite number otherwise.
func (a Arg) number(k kind, s, handler string) (json.RawMessage, error) {
	if k == kindInt {
		n, err := strconv.ParseInt(s, 10, 64)
		if err != nil {
			why := "not an integer"
			if ne, ok := err.(*strconv.NumError); ok && ne.Err == strconv.ErrRange {
				why = "outside the 64-bit integer range"
			}
			return nil, &ArgError{a.String(), fmt.Sprintf("%s is %s, and %s is an IntHandler field", strconv.Quote(s), why, a.Key)}
		}
		return json.RawMessage(strconv.FormatInt(n, 10)), nil
	}
	f, err := strconv.ParseFloat(s, 64)
	if err != nil || math.IsInf(f, 0) || math.IsNaN(f) || !isNumber(s) {
		what := "a field"
		if handler != "" {
			what = article(handler) + " field"
		}
		return nil, &ArgError{a.String(), fmt.Sprintf("%s is not a finite number, which %s compares with", strconv.Quote(s), what)}
	}
	b, _ := json.Marshal(f)
	return b, nil
}

// isNumber reports whether s is a plain decimal number (sign, digits, a
// point, an exponent): what ParseFloat accepts less hexadecimal,
// underscores, infinities and NaN.
func isNumber(s string) bool {
	if s == "" {
		return false
	}
	digits := false
	for i := 0; i < len(s); i++ {
		c := s[i]
		switch {
		case c >= '0' && c <= '9':
			digits = true
		case c == '+' || c == '-' || c == '.' || c == 'e' || c == 'E':
		default:
			return false
		}
	}
	if !digits {
		return false
	}
	f, err := strconv.ParseFloat(s, 64)
	return err == nil && !math.IsInf(f, 0)
}

func all(items []string, f func(string) bool) bool {
	return !slices.ContainsFunc(items, func(s string) bool { return !f(s) })
}

func constraint(op string, operand json.RawMessage) json.RawMessage {
	b, _ := json.Marshal(map[string]json.RawMessage{op: operand})
	return b
}

func list(items []json.RawMessage) json.RawMessage {
	b, _ := json.Marshal(items)
	return b
}

func strs(items []string) []json.RawMessage {
	out := make([]json.RawMessage, len(items))
	for i, it := range items {
		out[i] = str(it)
	}
	return out
}

func str(s string) json.RawMessage {
	b, _ := json.Marshal(s)
	return b
}

// identifier maps the identifier arguments of a command to the request's
// identifier object. fields holds the event type's identifier handlers
// (nil when the server has no schema for it: values are then typed by
// their look); a key the schema does not declare is refused (except
// `point`, the watch and replay location filter), and so is a key given
// twice.
func identifier(args []string, fields map[string]string, notify bool) (map[string]json.RawMessage, error) {
	out := make(map[string]json.RawMessage, len(args))
	seen := make(map[string]string, len(args))
	for _, s := range args {
		a, err := ParseArg(s)
		if err != nil {
			return nil, err
		}
		if prev, ok := seen[a.Key]; ok {
			return nil, &ArgError{s, fmt.Sprintf("%s is already given by %q: one argument per key (a range is %s=lo..hi)", a.Key, prev, a.Key)}
		}
		seen[a.Key] = s
		k, handler := kindUnknown, ""
		if fields != nil {
			h, ok := fields[a.Key]
			switch {
			case ok:
				k, handler = kindOf(h), h
			case a.Key == "point":
				k = kindOther
			default:
				return nil, &ArgError{s, "the event type has no identifier " + strconv.Quote(a.Key) + "; its identifiers are " + keys(fields)}
			}
		}
		var v json.RawMessage
		if notify {
			v, err = a.notifyJSON(k)
		} else {
			v, err = a.filterJSON(k, handler)
		}
		if err != nil {
			return nil, err
		}
		out[a.Key] = v
	}
	return out, nil
}

// keys lists a map's keys, sorted, for a message.
func keys(m map[string]string) string {
	ks := make([]string, 0, len(m))
	for k := range m {
		ks = append(ks, k)
	}
	slices.Sort(ks)
	if len(ks) == 0 {
		return "none"
	}
	return strings.Join(ks, ", ")
}

// article puts "a" or "an" before a handler name.
func article(handler string) string {
	if handler != "" && strings.ContainsRune("AEIOU", rune(handler[0])) {
		return "an " + handler
	}
	return "a " + handler
}
