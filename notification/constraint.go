package notification

import (
	"bytes"
	"cmp"
	"encoding/json"
	"errors"
	"fmt"
	"slices"
	"strconv"
	"strings"
)

// constraintOp is a compiled constraint operator (Aviso's constraint objects,
// docs/api.md).
type constraintOp uint8

const (
	constraintEq constraintOp = iota + 1
	constraintIn
	constraintGt
	constraintGte
	constraintLt
	constraintLte
	constraintBetween
)

// constraintOps maps the operator keys of a constraint object to their
// compiled form.
var constraintOps = map[string]constraintOp{
	"eq":      constraintEq,
	"in":      constraintIn,
	"gt":      constraintGt,
	"gte":     constraintGte,
	"lt":      constraintLt,
	"lte":     constraintLte,
	"between": constraintBetween,
}

// Operator lists quoted in error messages.
const (
	constraintNumericOperators = "eq, in, gt, gte, lt, lte, between"
	constraintEnumOperators    = "eq, in"
)

// ParseConstraintObject splits a watch/replay constraint object such as
// {"gte": 4} into its operator key and the operand's raw JSON. It checks
// only the object's shape: raw must be one JSON object with exactly one
// key (an empty object, several keys, or a key repeated are errors naming
// the keys). Whether the operator is known and the operand fits is checked
// by the handler's Constraint method.
func ParseConstraintObject(raw json.RawMessage) (op string, operand json.RawMessage, err error) {
	v := coerceTrimSpace(raw)
	if len(v) == 0 || !json.Valid(v) {
		return "", nil, errors.New(`constraint is not valid JSON; send an object with one operator, such as {"gte": 4}`)
	}
	if v[0] != '{' {
		return "", nil, fmt.Errorf(`constraint must be a JSON object with one operator, such as {"gte": 4}; got %s`, constraintDescribe(v))
	}
	dec := json.NewDecoder(bytes.NewReader(v))
	if _, err := dec.Token(); err != nil { // '{'
		return "", nil, fmt.Errorf("constraint is not valid JSON: %v", err)
	}
	var keys []string
	for dec.More() {
		tok, err := dec.Token()
		if err != nil {
			return "", nil, fmt.Errorf("constraint is not valid JSON: %v", err)
		}
		key, _ := tok.(string)
		var value json.RawMessage
		if err := dec.Decode(&value); err != nil {
			return "", nil, fmt.Errorf("constraint is not valid JSON: %v", err)
		}
		keys = append(keys, key)
		operand = value
	}
	switch len(keys) {
	case 1:
		return keys[0], operand, nil
	case 0:
		return "", nil, fmt.Errorf("constraint object is empty; it needs exactly one operator key (%s)", constraintNumericOperators)
	}
	quoted := make([]string, len(keys))
	for i, k := range keys {
		quoted[i] = strconv.Quote(k)
	}
	return "", nil, fmt.Errorf("constraint object has %d keys (%s); it needs exactly one operator key, for a range use {\"between\": [min, max]}",
		len(keys), strings.Join(quoted, ", "))
}

// constraintOperands checks the operand's shape for the operator and
// returns its values: the operand itself for eq, gt, gte, lt and lte, the
// elements of a non-empty array for in, and the two elements of [min, max]
// for between.
func constraintOperands(op constraintOp, name string, operand json.RawMessage) ([]json.RawMessage, error) {
	v := coerceTrimSpace(operand)
	if len(v) == 0 || !json.Valid(v) {
		return nil, fmt.Errorf("operand of operator %q is not valid JSON", name)
	}
	switch op {
	case constraintIn:
		if v[0] != '[' {
			return nil, fmt.Errorf("operator %q expects a non-empty array of values, got %s", name, constraintDescribe(v))
		}
		var elems []json.RawMessage
		if err := json.Unmarshal(v, &elems); err != nil {
			return nil, fmt.Errorf("operator %q expects a non-empty array of values: %v", name, err)
		}
		if len(elems) == 0 {
			return nil, fmt.Errorf("operator %q expects a non-empty array of values, got []", name)
		}
		return elems, nil
	case constraintBetween:
		if v[0] != '[' {
			return nil, fmt.Errorf("operator %q expects [min, max], got %s", name, constraintDescribe(v))
		}
		var elems []json.RawMessage
		if err := json.Unmarshal(v, &elems); err != nil {
			return nil, fmt.Errorf("operator %q expects [min, max]: %v", name, err)
		}
		if len(elems) != 2 {
			return nil, fmt.Errorf("operator %q expects [min, max] with exactly two values, got %d values", name, len(elems))
		}
		return elems, nil
	default:
		return []json.RawMessage{v}, nil
	}
}

// constraintDescribe names a raw JSON value for an error message.
func constraintDescribe(v []byte) string {
	v = coerceTrimSpace(v)
	if len(v) == 0 {
		return "nothing"
	}
	switch c := v[0]; {
	case c == '"':
		return "the string " + coerceShow(v)
	case c == '{':
		return "an object"
	case c == '[':
		return "an array"
	case c == 't' || c == 'f':
		return "the boolean " + string(v)
	case c == 'n':
		return "null"
	default:
		return coerceShow(v)
	}
}

// constraintPosition tells where a bad operand value is: nothing for a
// single operand, its index inside an array operand.
func constraintPosition(op constraintOp, i int) string {
	if op == constraintIn || op == constraintBetween {
		return fmt.Sprintf(" at index %d", i)
	}
	return ""
}

// constraintIntOperand converts one operand value for IntHandler: it must
// be a JSON integer that fits i64 (serde_json's as_i64), so "5", 4.5, 4.0
// and 1e2 are rejected.
func constraintIntOperand(op constraintOp, name string, i int, raw json.RawMessage) (int64, error) {
	v := coerceTrimSpace(raw)
	where := constraintPosition(op, i)
	if len(v) == 0 || (v[0] != '-' && (v[0] < '0' || v[0] > '9')) {
		return 0, fmt.Errorf("operator %q expects an integer%s, got %s", name, where, constraintDescribe(v))
	}
	n, err := serdeParseNumber(string(v))
	if err != nil {
		return 0, fmt.Errorf("operator %q expects an integer%s: %v", name, where, err)
	}
	switch {
	case n.kind == serdeNegInt:
		return n.i, nil
	case n.kind == serdePosInt && n.u <= 1<<63-1:
		return int64(n.u), nil
	case bytes.ContainsAny(v, ".eE"):
		return 0, fmt.Errorf("operator %q expects an integer%s, got %s, a number with a fraction or exponent", name, where, constraintDescribe(v))
	case string(v) == "-0":
		return 0, fmt.Errorf("operator %q expects an integer%s, got -0, which JSON parsers read as a float; send 0", name, where)
	default:
		return 0, fmt.Errorf("operator %q expects an integer%s, got %s, outside the 64-bit signed integer range", name, where, constraintDescribe(v))
	}
}

// constraintFloatOperand converts one operand value for FloatHandler: any
// JSON number, as serde_json's as_f64 reads it.
func constraintFloatOperand(op constraintOp, name string, i int, raw json.RawMessage) (float64, error) {
	v := coerceTrimSpace(raw)
	where := constraintPosition(op, i)
	if len(v) == 0 || (v[0] != '-' && (v[0] < '0' || v[0] > '9')) {
		return 0, fmt.Errorf("operator %q expects a number%s, got %s", name, where, constraintDescribe(v))
	}
	n, err := serdeParseNumber(string(v))
	if err != nil {
		return 0, fmt.Errorf("operator %q expects a finite number%s: %v", name, where, err)
	}
	return n.asF64(), nil
}

// constraintStringOperand converts one operand value for EnumHandler: a
// JSON string, lowercased as Rust's str::to_lowercase does.
func constraintStringOperand(op constraintOp, name string, i int, raw json.RawMessage) (string, error) {
	v := coerceTrimSpace(raw)
	where := constraintPosition(op, i)
	if len(v) == 0 || v[0] != '"' {
		return "", fmt.Errorf("operator %q expects a string%s, got %s", name, where, constraintDescribe(v))
	}
	s, err := coerceJSONString(v)
	if err != nil {
		return "", fmt.Errorf("operator %q expects a string%s: %v", name, where, err)
	}
	return rustToLowercase(s), nil
}

// constraintFloatText prints a float for an error message.
func constraintFloatText(f float64) string {
	return strconv.FormatFloat(f, 'g', -1, 64)
}

// compileOrdered compiles a numeric constraint (IntHandler, FloatHandler)
// on operand values of type T: operandOf converts each value, text prints
// one for messages, lo and hi are the field's range when hasRange, and
// parse reads a canonical token for Match. field names the field's
// handler for the unknown-operator message ("an IntHandler").
func compileOrdered[T cmp.Ordered](op string, operand json.RawMessage, field string,
	operandOf func(op constraintOp, name string, i int, raw json.RawMessage) (T, error),
	text func(T) string, hasRange bool, lo, hi T, parse func(token string) (T, bool),
) (Constraint, error) {
	cop, ok := constraintOps[op]
	if !ok {
		return nil, fmt.Errorf("unknown constraint operator %q for %s field; allowed operators: %s", op, field, constraintNumericOperators)
	}
	raws, err := constraintOperands(cop, op, operand)
	if err != nil {
		return nil, err
	}
	vals := make([]T, len(raws))
	for i, raw := range raws {
		if vals[i], err = operandOf(cop, op, i, raw); err != nil {
			return nil, err
		}
	}
	if cop == constraintBetween && vals[0] > vals[1] {
		return nil, fmt.Errorf("operator %q expects [min, max] with min <= max, got [%s, %s]", op, text(vals[0]), text(vals[1]))
	}
	if hasRange {
		for _, v := range vals {
			if v < lo || v > hi {
				return nil, fmt.Errorf("operator %q operand %s is outside the field's range [%s, %s]", op, text(v), text(lo), text(hi))
			}
		}
	}
	return &orderedConstraint[T]{op: cop, vals: vals, parse: parse}, nil
}

// orderedConstraint is a compiled IntHandler (T int64) or FloatHandler
// (T float64) constraint. eq and in compare exactly.
type orderedConstraint[T cmp.Ordered] struct {
	op    constraintOp
	vals  []T
	parse func(token string) (T, bool)
}

// Match parses the canonical token; a token that does not parse never
// matches.
func (c *orderedConstraint[T]) Match(value string) bool {
	x, ok := c.parse(value)
	if !ok {
		return false
	}
	switch c.op {
	case constraintEq:
		return x == c.vals[0]
	case constraintIn:
		return slices.Contains(c.vals, x)
	case constraintGt:
		return x > c.vals[0]
	case constraintGte:
		return x >= c.vals[0]
	case constraintLt:
		return x < c.vals[0]
	case constraintLte:
		return x <= c.vals[0]
	case constraintBetween:
		return x >= c.vals[0] && x <= c.vals[1]
	}
	return false
}

// enumConstraint is a compiled EnumHandler constraint (eq and in are both
// membership in the lowercased operand values).
type enumConstraint struct {
	vals []string
}

// Match lowercases the token and looks it up among the operand values.
func (c *enumConstraint) Match(value string) bool {
	x := rustToLowercase(value)
	for _, v := range c.vals {
		if x == v {
			return true
		}
	}
	return false
}

// Compile-time checks that the compiled constraints implement Constraint.
var (
	_ Constraint = (*orderedConstraint[int64])(nil)
	_ Constraint = (*orderedConstraint[float64])(nil)
	_ Constraint = (*enumConstraint)(nil)
)
