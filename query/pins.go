package query

import (
	"encoding/json"
	"slices"
	"strconv"
)

// This file derives a watch identifier from a compiled predicate, for the
// session statement CREATE SUBSCRIPTION, which has no identifier of its own
// (the session protocol, docs/sessions.md): the predicate's top-level AND
// conditions that pin a routed field become identifier values and constraint
// objects. The identifier is used together with the whole predicate, so it
// only has to select every notification the predicate selects; each mapping
// below selects exactly what its condition selects, so the topic narrows
// without losing anything.

// Pins returns the identifier the predicate's top-level AND conditions
// pin, keyed by field name, each value as a watch request would carry it:
//
//   - field = literal (or literal = field): the value, for every handler
//     but FloatHandler, whose = compares numbers (-0 = 0) and becomes
//     {"eq": x};
//   - field IN (literals): {"in": [...]} for IntHandler, FloatHandler and
//     EnumHandler fields;
//   - field BETWEEN lo AND hi, and <, <=, >, >= against a literal:
//     {"between": [lo, hi]}, {"lt": x}, ... for IntHandler and
//     FloatHandler fields.
//
// A field pinned by several conditions keeps the first =, or else the
// first other one. Conditions under OR or NOT, negated forms, != and
// comparisons between fields pin nothing. It returns an empty map for a
// schema-less event type, whose identifier spells the whole subject.
func (w *Where) Pins() map[string]json.RawMessage {
	out := map[string]json.RawMessage{}
	eq := map[string]bool{}
	var walk func(n wnode)
	walk = func(n wnode) {
		if l, ok := n.(*wlogic); ok && l.and {
			walk(l.l)
			walk(l.r)
			return
		}
		name, raw, isEq, ok := pin(n)
		if !ok {
			return
		}
		if _, have := out[name]; have && (eq[name] || !isEq) {
			return
		}
		out[name], eq[name] = raw, isEq
	}
	walk(w.root)
	return out
}

// pinField returns o as a routed schema field, or nil.
func pinField(o woperand) *wfield {
	f, ok := o.(*wfield)
	if !ok || f.field == nil || f.pos == 0 {
		return nil
	}
	return f
}

// pinLiteral returns o as a literal canonicalised by a field's handler,
// or nil (NULL, booleans, constants).
func pinLiteral(o woperand) *wliteral {
	l, ok := o.(*wliteral)
	if !ok || l.v.null || l.k == kNull || l.k == kBool || l.src == "" || l.v.big {
		return nil
	}
	return l
}

// flipped is op with its operands swapped (5 < x is x > 5).
var flipped = map[string]string{"=": "=", "<": ">", "<=": ">=", ">": "<", ">=": "<="}

// constraintOf maps a comparison operator to its constraint operator.
var constraintOf = map[string]string{"=": "eq", "<": "lt", "<=": "lte", ">": "gt", ">=": "gte"}

// pin maps one condition to an identifier entry: the field name, the
// value, and whether it is an equality.
func pin(n wnode) (name string, raw json.RawMessage, isEq, ok bool) {
	switch c := n.(type) {
	case *wcompare:
		f, l, op := pinField(c.a), pinLiteral(c.b), c.op
		if f == nil {
			f, l, op = pinField(c.b), pinLiteral(c.a), flipped[c.op]
		}
		if f == nil || l == nil || op == "" {
			return "", nil, false, false
		}
		if op == "=" && f.k != kFloat {
			b, err := json.Marshal(l.src)
			if err != nil {
				return "", nil, false, false
			}
			// The value must survive as a JSON string (invalid UTF-8
			// would not).
			var back string
			if err := json.Unmarshal(b, &back); err != nil || back != l.src {
				return "", nil, false, false
			}
			return f.name, b, true, true
		}
		cop, found := constraintOf[op]
		if !found || !f.k.numeric() {
			return "", nil, false, false
		}
		raw, ok := pinConstraint(f, cop, []*wliteral{l}, false)
		return f.name, raw, op == "=", ok
	case *win:
		f := pinField(c.a)
		if c.not || f == nil {
			return "", nil, false, false
		}
		lits := make([]*wliteral, len(c.list))
		for i, o := range c.list {
			if lits[i] = pinLiteral(o); lits[i] == nil {
				return "", nil, false, false
			}
		}
		raw, ok := pinConstraint(f, "in", lits, true)
		return f.name, raw, false, ok
	case *wbetween:
		f, lo, hi := pinField(c.a), pinLiteral(c.lo), pinLiteral(c.hi)
		if c.not || f == nil || lo == nil || hi == nil || !f.k.numeric() {
			return "", nil, false, false
		}
		raw, ok := pinConstraint(f, "between", []*wliteral{lo, hi}, true)
		return f.name, raw, false, ok
	}
	return "", nil, false, false
}

// pinConstraint writes the constraint object {op: operand} for field f
// (an array operand when list) and keeps it only when the handler
// compiles it to exactly the values the predicate compares with.
func pinConstraint(f *wfield, op string, lits []*wliteral, list bool) (json.RawMessage, bool) {
	if f.field.Constraint == nil {
		return nil, false
	}
	operands := make([]json.RawMessage, len(lits))
	for i, l := range lits {
		switch {
		case f.k == kInt && l.k == kInt:
			operands[i] = strconv.AppendInt(nil, l.v.i, 10)
		case f.k == kFloat && l.k == kFloat:
			operands[i] = strconv.AppendFloat(nil, l.v.f, 'g', -1, 64)
		case f.k == kText && l.k == kText:
			b, err := json.Marshal(l.src)
			if err != nil {
				return nil, false
			}
			operands[i] = b
		default:
			return nil, false
		}
	}
	operand := operands[0]
	if list {
		b, err := json.Marshal(operands)
		if err != nil {
			return nil, false
		}
		operand = b
	}
	ints, floats, texts, err := f.field.Constraint(op, operand)
	if err != nil {
		return nil, false
	}
	// The compiled operands must be the predicate's values exactly (a
	// number the constraint parser reads differently pins nothing).
	switch {
	case ints != nil:
		for i, l := range lits {
			if i >= len(ints) || ints[i] != l.v.i {
				return nil, false
			}
		}
	case floats != nil:
		for i, l := range lits {
			if i >= len(floats) || floats[i] != l.v.f {
				return nil, false
			}
		}
	case texts != nil:
		for _, l := range lits {
			if !slices.Contains(texts, l.v.s) {
				return nil, false
			}
		}
	default:
		return nil, false
	}
	obj, err := json.Marshal(map[string]json.RawMessage{op: operand})
	if err != nil {
		return nil, false
	}
	return obj, true
}
