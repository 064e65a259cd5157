package evolve

import (
	"strings"
	"testing"

	"herald/codec/types"
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
			"backward: position 1 (b): old values of INT cannot be read as STRING\nforward: position 1 (a): new values of STRING cannot be read as INT for old readers\nbackward: position 2 (a): old values of STRING cannot be read as INT\nforward: position 2 (b): new values of INT cannot be read as STRING for old readers"},
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
