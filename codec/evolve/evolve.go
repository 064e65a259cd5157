// Package evolve owns the compatibility verdicts of schema changes: for a
// change of an internal or wire schema, per wire format, whether payloads
// written under the old definition can still be read under the new one
// (backward) and whether payloads written under the new definition can be
// read by old readers (forward), with the reason for every breaking step.
// JSON and CBOR payloads carry field names, so they are judged by name
// (order is free); a raw AVRO datum is positional and carries no writer
// schema, and a protobuf message carries field numbers, so they are
// judged by position and by field number, where the schema-evolution rule
// holds: "A position is forever. Append new fields at the end. Never
// insert, reorder or delete. Renaming is free: names never travel." The
// elements of a fixed ARRAY axis are positional in every format: the
// axis length is part of the type. Every verdict says which rule decided
// it.
//
// It must not apply changes or hold state: callers pass the before and
// after definitions of each step.
package evolve

import (
	"fmt"
	"strings"

	"github.com/herald-gateway/herald/codec/types"
)

// Direction says which readers a break affects.
type Direction uint8

// Directions.
const (
	// Backward: the new definition reading payloads written under the old.
	Backward Direction = iota + 1
	// Forward: old readers reading payloads written under the new.
	Forward
)

// String returns "backward" or "forward".
func (d Direction) String() string {
	if d == Forward {
		return "forward"
	}
	return "backward"
}

// Break is one reason a step breaks compatibility.
type Break struct {
	// Step is the change that breaks, as written (e.g. an ALTER operation).
	Step   string
	Dir    Direction
	Reason string
}

// Verdict is the compatibility of a change for one wire format.
type Verdict struct {
	// Entity names what changed, e.g. "SCHEMA notification".
	Entity string
	Format types.Format
	Breaks []Break
}

// Backward reports whether old payloads can still be read.
func (v Verdict) Backward() bool { return !v.has(Backward) }

// Forward reports whether old readers can read new payloads.
func (v Verdict) Forward() bool { return !v.has(Forward) }

func (v Verdict) has(d Direction) bool {
	for _, b := range v.Breaks {
		if b.Dir == d {
			return true
		}
	}
	return false
}

func yesNo(ok bool) string {
	if ok {
		return "compatible"
	}
	return "BREAKING"
}

// Rule names the rule format f's verdicts are decided by: "by position"
// for AVRO (a raw Avro datum carries no field names: a position is
// forever, renaming is free), "by field number" for PROTOBUF (a message
// carries field numbers: a number is forever, renaming is free), "by
// field name" for JSON and CBOR (payloads carry names: order is free,
// names are not).
func Rule(f types.Format) string {
	switch f {
	case types.AVRO:
		return "by position"
	case types.PROTOBUF:
		return "by field number"
	}
	return "by field name"
}

// String explains the verdict: one summary line naming the rule that
// decided it, then one line per breaking step.
func (v Verdict) String() string {
	var b strings.Builder
	fmt.Fprintf(&b, "%s via %s (%s): backward %s, forward %s\n", v.Entity, v.Format, Rule(v.Format), yesNo(v.Backward()), yesNo(v.Forward()))
	for _, br := range v.Breaks {
		fmt.Fprintf(&b, "  %s: %s: %s\n", br.Dir, br.Step, br.Reason)
	}
	return b.String()
}

// field is the format-neutral view of one field.
type field struct {
	name     string
	optional bool
	internal types.Type     // for internal schemas
	wire     types.WireKind // for wire schemas
}

func schemaFields(s *types.Schema) []field {
	out := make([]field, len(s.Fields))
	for i, f := range s.Fields {
		out[i] = field{name: f.Name, optional: f.Optional, internal: f.Type}
	}
	return out
}

func wireFields(w *types.WireSchema) []field {
	out := make([]field, len(w.Fields))
	for i, f := range w.Fields {
		out[i] = field{name: f.Name, optional: f.Optional, wire: f.Type}
	}
	return out
}

// Schema returns the breaks of one step changing internal schema old into
// new, as seen through format f (JSON and CBOR by name with STRICT
// readers, AVRO by position).
func Schema(step string, old, new *types.Schema, f types.Format) []Break {
	if f == types.AVRO {
		return positional(step, schemaFields(old), schemaFields(new))
	}
	return named(step, schemaFields(old), schemaFields(new), types.Strict, types.Strict)
}

// SchemaByName returns the breaks of one step changing internal schema
// old into new for readers and writers that go by field name, the new
// reader in mode reader: with LOOSE, a field the new schema no longer
// declares is skipped rather than refused (a projection reads old
// payloads). Forward breaks assume old readers in mode STRICT.
func SchemaByName(step string, old, new *types.Schema, reader types.Mode) []Break {
	return named(step, schemaFields(old), schemaFields(new), types.Strict, reader)
}

// Wire returns the breaks of one step changing wire schema old into new.
func Wire(step string, old, new *types.WireSchema) []Break {
	if old.Format == types.AVRO {
		return positional(step, wireFields(old), wireFields(new))
	}
	out := named(step, wireFields(old), wireFields(new), old.Mode, new.Mode)
	if old.Mode == types.Loose && new.Mode == types.Strict {
		out = append(out, Break{step, Backward, "old payloads may carry undeclared fields, which the schema now rejects as STRICT"})
	}
	return out
}

func find(fs []field, name string) (field, bool) {
	for _, f := range fs {
		if f.name == name {
			return f, true
		}
	}
	return field{}, false
}

func named(step string, old, new []field, oldMode, newMode types.Mode) []Break {
	var out []Break
	add := func(d Direction, format string, args ...any) {
		out = append(out, Break{step, d, fmt.Sprintf(format, args...)})
	}
	for _, o := range old {
		n, ok := find(new, o.name)
		q := types.Quote(o.name)
		if !ok {
			if newMode == types.Strict {
				if o.optional {
					add(Backward, "old payloads may carry %s, which the STRICT schema no longer declares", q)
				} else {
					add(Backward, "old payloads carry %s, which the STRICT schema no longer declares", q)
				}
			}
			if !o.optional {
				add(Forward, "old readers require %s, which new payloads lack", q)
			}
			continue
		}
		if why := readable(o, n); why != "" {
			add(Backward, "field %s: old values %s", q, why)
		}
		if why := readable(n, o); why != "" {
			add(Forward, "field %s: new values %s for old readers", q, why)
		}
		if o.optional && !n.optional {
			add(Backward, "old payloads may omit %s, which is now required", q)
		}
		if !o.optional && n.optional {
			add(Forward, "new payloads may omit %s, which old readers require", q)
		}
	}
	for _, n := range new {
		if _, ok := find(old, n.name); ok {
			continue
		}
		q := types.Quote(n.name)
		if !n.optional {
			add(Backward, "old payloads lack %s, which is required", q)
		}
		if oldMode == types.Strict {
			add(Forward, "old STRICT readers reject %s, which new payloads may carry", q)
		}
	}
	return out
}

func index(fs []field, name string) int {
	for i, f := range fs {
		if f.name == name {
			return i
		}
	}
	return -1
}

// positional judges a raw Avro datum: the values sit at positions, so a
// field whose name the other definition has at another position moved
// (inserted, reordered or deleted around it) and its values land in
// another field; a name that appears only on one side at a position is a
// rename, which is free.
func positional(step string, old, new []field) []Break {
	var out []Break
	add := func(d Direction, format string, args ...any) {
		out = append(out, Break{step, d, fmt.Sprintf(format, args...)})
	}
	m := min(len(old), len(new))
	for i := 0; i < m; i++ {
		o, n := old[i], new[i]
		if why := avroReadable(o, n); why != "" {
			add(Backward, "position %d (%s): old values %s", i+1, types.Quote(n.name), why)
		}
		if why := avroReadable(n, o); why != "" {
			add(Forward, "position %d (%s): new values %s for old readers", i+1, types.Quote(o.name), why)
		}
		if o.optional != n.optional {
			add(Backward, "position %d (%s): OPTIONAL changes the Avro encoding (a null union)", i+1, types.Quote(n.name))
			add(Forward, "position %d (%s): OPTIONAL changes the Avro encoding (a null union)", i+1, types.Quote(n.name))
		}
		if o.name != n.name && (index(old, n.name) >= 0 || index(new, o.name) >= 0) {
			add(Backward, "position %d: old payloads hold %s there, which the new schema reads as %s (fields moved: never insert, reorder or delete)", i+1, types.Quote(o.name), types.Quote(n.name))
			add(Forward, "position %d: new payloads hold %s there, which old readers read as %s (fields moved)", i+1, types.Quote(n.name), types.Quote(o.name))
		}
	}
	for i := m; i < len(new); i++ {
		add(Backward, "old payloads end before position %d (%s): a raw Avro datum has no room for new fields", i+1, types.Quote(new[i].name))
		add(Forward, "old readers reject the trailing position %d (%s)", i+1, types.Quote(new[i].name))
	}
	for i := m; i < len(old); i++ {
		add(Backward, "old payloads carry position %d (%s), which the new schema reads as trailing bytes", i+1, types.Quote(old[i].name))
		add(Forward, "old readers expect position %d (%s), which new payloads lack", i+1, types.Quote(old[i].name))
	}
	return out
}

// readable says why values of field w cannot be read as field r by name
// (JSON/CBOR), or "" when they can.
func readable(w, r field) string {
	if w.wire != types.WireInvalid || r.wire != types.WireInvalid {
		return wireReadable(w.wire, r.wire)
	}
	return typeReadable(w.internal, r.internal)
}

// typeReadable compares internal types through the JSON value model.
func typeReadable(w, r types.Type) string {
	if w.Equal(r) {
		return ""
	}
	switch {
	case w.Kind.IsInteger() && r.Kind.IsInteger():
		if intWithin(w.Kind, r.Kind) {
			return ""
		}
		return fmt.Sprintf("of %s may not fit %s", w, r)
	case w.Kind.IsInteger() && r.Kind.IsFloat():
		mant := 24
		if r.Kind == types.F64 {
			mant = 53
		}
		if w.Kind.Bits() < mant || (w.Kind.Bits() == mant && w.Kind.IsUnsigned()) {
			return ""
		}
		return fmt.Sprintf("of %s may round in %s", w, r)
	case w.Kind == types.F32 && r.Kind == types.F64:
		return ""
	case w.Kind == types.F64 && r.Kind == types.F32:
		return "of F64 may round in F32"
	case w.Kind == types.Datetime && r.Kind == types.String:
		return ""
	case w.IsCollection() && r.IsCollection():
		if r.Kind == types.Array && (w.Kind != types.Array || w.Len() != r.Len()) {
			return fmt.Sprintf("of %s may not have the %d elements %s requires", w, r.Len(), r)
		}
		if why := typeReadable(w.Inner(), r.Inner()); why != "" {
			return fmt.Sprintf("of %s: elements %s", w, why)
		}
		return ""
	}
	return fmt.Sprintf("of %s cannot be read as %s", w, r)
}

func intWithin(w, r types.Kind) bool {
	if w.IsUnsigned() {
		if r.IsUnsigned() {
			return w.Bits() <= r.Bits()
		}
		return w.Bits() < r.Bits()
	}
	return !r.IsUnsigned() && w.Bits() <= r.Bits()
}

// wireReadable compares JSON/CBOR wire types by value domain: exact
// integers ⊂ integer ⊂ number, DATETIME and bytes ⊂ string.
func wireReadable(w, r types.WireKind) string {
	if w == r {
		return ""
	}
	wk, rk := w.ExactKind(), r.ExactKind()
	isInt := wk.IsInteger() || w == types.WInteger
	isNum := isInt || wk.IsFloat() || w == types.WNumber
	switch {
	case wk.IsInteger() && rk.IsInteger() && intWithin(wk, rk):
		return ""
	case isInt && r == types.WInteger:
		return ""
	case isNum && (r == types.WNumber || rk == types.F64):
		return ""
	case (w == types.WDatetime || w == types.WBytes) && r == types.WString:
		return ""
	}
	return fmt.Sprintf("of %s cannot be read as %s", w, r)
}

// avroClass is the binary encoding class of a field in a raw Avro datum.
func avroReadable(w, r field) string {
	if w.wire != types.WireInvalid || r.wire != types.WireInvalid {
		if w.wire == r.wire {
			return ""
		}
		switch {
		case w.wire == types.AInt && r.wire == types.ALong:
			return ""
		case w.wire == types.AString && r.wire == types.ABytes:
			return ""
		}
		return fmt.Sprintf("of %s cannot be read as %s", w.wire, r.wire)
	}
	return avroTypeReadable(w.internal, r.internal)
}

func avroTypeReadable(w, r types.Type) string {
	if w.Equal(r) {
		return ""
	}
	switch {
	case w.Kind.IsInteger() && r.Kind.IsInteger():
		// int and long share the zigzag varint encoding
		if intWithin(w.Kind, r.Kind) {
			return ""
		}
		return fmt.Sprintf("of %s may not fit %s", w, r)
	case w.Kind == types.String && r.Kind == types.Bytes:
		return ""
	case w.Kind == types.Datetime && r.Kind == types.String:
		return ""
	case w.IsCollection() && r.IsCollection():
		if r.Kind == types.Array && (w.Kind != types.Array || w.Len() != r.Len()) {
			return fmt.Sprintf("of %s may not have the %d elements %s requires", w, r.Len(), r)
		}
		if why := avroTypeReadable(w.Inner(), r.Inner()); why != "" {
			return fmt.Sprintf("of %s: elements %s", w, why)
		}
		return ""
	}
	return fmt.Sprintf("of %s cannot be read as %s", w, r)
}
