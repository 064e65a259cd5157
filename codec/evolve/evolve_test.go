package evolve

import (
	"fmt"
	"strings"
	"testing"

	"github.com/herald-gateway/herald/codec/types"
)

func wire(f types.Format, mode types.Mode, fields ...types.WireField) *types.WireSchema {
	return &types.WireSchema{Format: f, Name: "w", Mode: mode, Fields: fields}
}

func wf(name string, k types.WireKind, opt bool) types.WireField {
	return types.WireField{Name: name, Type: k, Optional: opt}
}

func render(bs []Break) string {
	var out []string
	for _, b := range bs {
		out = append(out, b.Dir.String()+": "+b.Reason)
	}
	return strings.Join(out, "\n")
}

func TestWireTypeChanges(t *testing.T) {
	tests := []struct {
		from, to types.WireKind
		want     string
	}{
		{types.WU8, types.WInteger, "forward: field x: new values of integer cannot be read as U8 for old readers"},
		{types.WInteger, types.WNumber, "forward: field x: new values of number cannot be read as integer for old readers"},
		{types.WU8, types.WU16, "forward: field x: new values of U16 cannot be read as U8 for old readers"},
		{types.WDatetime, types.WString, "forward: field x: new values of string cannot be read as DATETIME for old readers"},
		{types.WBytes, types.WString, "forward: field x: new values of string cannot be read as bytes for old readers"},
		{types.WF32, types.WF64, "forward: field x: new values of F64 cannot be read as F32 for old readers"},
		{types.WString, types.WBoolean, "backward: field x: old values of string cannot be read as boolean\nforward: field x: new values of boolean cannot be read as string for old readers"},
	}
	for _, tt := range tests {
		got := render(Wire("step", wire(types.JSON, types.Strict, wf("x", tt.from, false)), wire(types.JSON, types.Strict, wf("x", tt.to, false))))
		if got != tt.want {
			t.Errorf("%s → %s:\n got %s\nwant %s", tt.from, tt.to, got, tt.want)
		}
	}
}

func TestAvroPositional(t *testing.T) {
	old := wire(types.AVRO, types.Strict, wf("a", types.AInt, false), wf("b", types.AString, false))
	tests := []struct {
		new  *types.WireSchema
		want string
	}{
		{wire(types.AVRO, types.Strict, wf("x", types.AInt, false), wf("y", types.AString, false)), ""},
		{wire(types.AVRO, types.Strict, wf("a", types.ALong, false), wf("b", types.ABytes, false)),
			"forward: position 1 (a): new values of LONG cannot be read as INT for old readers\nforward: position 2 (b): new values of BYTES cannot be read as STRING for old readers"},
		{wire(types.AVRO, types.Strict, wf("b", types.AString, false), wf("a", types.AInt, false)),
			"backward: position 1 (b): old values of INT cannot be read as STRING\nforward: position 1 (a): new values of STRING cannot be read as INT for old readers\n" +
				"backward: position 1: old payloads hold a there, which the new schema reads as b (fields moved: never insert, reorder or delete)\nforward: position 1: new payloads hold b there, which old readers read as a (fields moved)\n" +
				"backward: position 2 (a): old values of STRING cannot be read as INT\nforward: position 2 (b): new values of INT cannot be read as STRING for old readers\n" +
				"backward: position 2: old payloads hold b there, which the new schema reads as a (fields moved: never insert, reorder or delete)\nforward: position 2: new payloads hold a there, which old readers read as b (fields moved)"},
		{wire(types.AVRO, types.Strict, wf("a", types.AInt, false)),
			"backward: old payloads carry position 2 (b), which the new schema reads as trailing bytes\nforward: old readers expect position 2 (b), which new payloads lack"},
		{wire(types.AVRO, types.Loose, wf("a", types.AInt, true), wf("b", types.AString, false)),
			"backward: position 1 (a): OPTIONAL changes the Avro encoding (a null union)\nforward: position 1 (a): OPTIONAL changes the Avro encoding (a null union)"},
	}
	for i, tt := range tests {
		if got := render(Wire("step", old, tt.new)); got != tt.want {
			t.Errorf("%d:\n got %s\nwant %s", i, got, tt.want)
		}
	}
}

func TestInternalTypes(t *testing.T) {
	f := func(k types.Kind) types.Type { return types.Scalar(k) }
	tests := []struct {
		from, to types.Type
		want     string
	}{
		{f(types.U16), f(types.I32), "forward: field x: new values of I32 may not fit U16 for old readers"},
		{f(types.I16), f(types.F32), "forward: field x: new values of F32 cannot be read as I16 for old readers"},
		{f(types.I32), f(types.F32), "backward: field x: old values of I32 may round in F32\nforward: field x: new values of F32 cannot be read as I32 for old readers"},
		{types.ArrayOf(f(types.F32), 3), types.VecOf(f(types.F64)), "forward: field x: new values of VEC<F64> may not have the 3 elements ARRAY<F32, 3> requires for old readers"},
		{types.ArrayOf(f(types.U8), 2, 3), types.VecOf(types.ArrayOf(f(types.U16), 3)), "forward: field x: new values of VEC<ARRAY<U16, 3>> may not have the 2 elements ARRAY<U8, 2, 3> requires for old readers"},
	}
	for _, tt := range tests {
		old := &types.Schema{Name: "s", Fields: []types.Field{{Name: "x", Type: tt.from}}}
		cur := &types.Schema{Name: "s", Fields: []types.Field{{Name: "x", Type: tt.to}}}
		if got := render(Schema("step", old, cur, types.JSON)); got != tt.want {
			t.Errorf("%s → %s:\n got %s\nwant %s", tt.from, tt.to, got, tt.want)
		}
	}
}

// TestReorderIsBreaking checks the schema-evolution rule "A position is
// forever. Append new fields at the end. Never insert, reorder or delete.
// Renaming is free: names never travel." ("a reordered definition: values
// land in the wrong keys, silently") where values sit at positions: a raw
// Avro datum, judged on the wire schema and on the internal schema
// through AVRO. Swapping two fields of the same type is breaking there,
// inserting or deleting in the middle too, and a rename is free. Through
// JSON and CBOR, which find values by field name, the same reorder is
// compatible.
func TestReorderIsBreaking(t *testing.T) {
	moved := func(pos int, was, now string) string {
		return fmt.Sprintf("backward: position %d: old payloads hold %s there, which the new schema reads as %s (fields moved: never insert, reorder or delete)\nforward: position %d: new payloads hold %s there, which old readers read as %s (fields moved)", pos, was, now, pos, now, was)
	}
	old := wire(types.AVRO, types.Strict, wf("a", types.ALong, false), wf("b", types.ALong, false), wf("c", types.ALong, false))
	tests := []struct {
		name string
		new  *types.WireSchema
		want string
	}{
		{"swap", wire(types.AVRO, types.Strict, wf("b", types.ALong, false), wf("a", types.ALong, false), wf("c", types.ALong, false)),
			moved(1, "a", "b") + "\n" + moved(2, "b", "a")},
		{"insert", wire(types.AVRO, types.Strict, wf("a", types.ALong, false), wf("x", types.ALong, false), wf("b", types.ALong, false), wf("c", types.ALong, false)),
			moved(2, "b", "x") + "\n" + moved(3, "c", "b") + "\nbackward: old payloads end before position 4 (c): a raw Avro datum has no room for new fields\nforward: old readers reject the trailing position 4 (c)"},
		{"delete", wire(types.AVRO, types.Strict, wf("a", types.ALong, false), wf("c", types.ALong, false)),
			moved(2, "b", "c") + "\nbackward: old payloads carry position 3 (c), which the new schema reads as trailing bytes\nforward: old readers expect position 3 (c), which new payloads lack"},
		{"rename", wire(types.AVRO, types.Strict, wf("a", types.ALong, false), wf("b2", types.ALong, false), wf("c", types.ALong, false)), ""},
	}
	for _, tt := range tests {
		if got := render(Wire("step", old, tt.new)); got != tt.want {
			t.Errorf("%s:\n got %s\nwant %s", tt.name, got, tt.want)
		}
	}

	// the internal schema: by position through AVRO, by name through JSON and CBOR
	u32 := types.Scalar(types.U32)
	from := &types.Schema{Name: "s", Fields: []types.Field{{Name: "a", Type: u32}, {Name: "b", Type: u32}}}
	to := &types.Schema{Name: "s", Fields: []types.Field{{Name: "b", Type: u32}, {Name: "a", Type: u32}}}
	if got, want := render(Schema("step", from, to, types.AVRO)), moved(1, "a", "b")+"\n"+moved(2, "b", "a"); got != want {
		t.Errorf("internal schema via AVRO:\n got %s\nwant %s", got, want)
	}
	for _, f := range []types.Format{types.JSON, types.CBOR} {
		if got := render(Schema("step", from, to, f)); got != "" {
			t.Errorf("internal schema via %s: %s, want compatible (%s)", f, got, Rule(f))
		}
	}
	jsonOld := wire(types.JSON, types.Strict, wf("a", types.WInteger, false), wf("b", types.WInteger, false))
	jsonNew := wire(types.JSON, types.Strict, wf("b", types.WInteger, false), wf("a", types.WInteger, false))
	if got := render(Wire("step", jsonOld, jsonNew)); got != "" {
		t.Errorf("wire JSON swap: %s, want compatible", got)
	}
	// SchemaByName is how stored records are judged on reload: a stored
	// row is a map keyed by field name, so its order is free
	if got := render(SchemaByName("step", from, to, types.Strict)); got != "" {
		t.Errorf("stored rows: %s, want compatible", got)
	}
}

// TestVerdictNamesItsRule: every verdict says which rule decided it.
func TestVerdictNamesItsRule(t *testing.T) {
	for f, want := range map[types.Format]string{
		types.JSON:     "SCHEMA s via JSON (by field name): backward compatible, forward compatible\n",
		types.CBOR:     "SCHEMA s via CBOR (by field name): backward compatible, forward compatible\n",
		types.AVRO:     "SCHEMA s via AVRO (by position): backward compatible, forward compatible\n",
		types.PROTOBUF: "SCHEMA s via PROTOBUF (by field number): backward compatible, forward compatible\n",
	} {
		if got := (Verdict{Entity: "SCHEMA s", Format: f}).String(); got != want {
			t.Errorf("%q, want %q", got, want)
		}
	}
}
