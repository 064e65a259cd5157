package jview

import (
	"encoding/json"
	"math"
	"testing"

	"github.com/apache/arrow-go/v18/arrow/memory"

	"herald/codec/rows"
	"herald/codec/types"
	"herald/codec/values"
)

func TestRowAndTarget(t *testing.T) {
	s := &types.Schema{Name: "s", Fields: []types.Field{
		{Name: "f", Type: types.Scalar(types.F32)},
		{Name: "o", Type: types.Scalar(types.F64), Optional: true},
		{Name: "v", Type: types.VecOf(types.Scalar(types.F64)), Optional: true},
	}}
	b := rows.NewBuilder(memory.NewGoAllocator(), s)
	defer b.Release()
	tg := NewTarget(s)
	for _, v := range []any{
		map[string]any{"f": json.Number("7.038531e-26"), "o": math.Inf(1) - math.Inf(1) + 1, "extra": "dropped"},
		map[string]any{"f": 1.5, "o": json.Number("1e400")},
		map[string]any{"f": 16777217, "v": []any{1.0}},
	} {
		if err := tg.Append(b, v); err != nil && v.(map[string]any)["o"] != nil {
			if values.CodeOf(err) != values.CodeNonFinite {
				t.Fatalf("%v: %v", v, err)
			}
		}
	}
	if err := tg.Append(b, map[string]any{"f": 1, "v": []any{1, nil}}); err == nil || err.Error() != "field v[1]: null where a value is required (collection elements are never null)" {
		t.Errorf("null element: %v", err)
	}
	if err := tg.Append(b, []any{}); err == nil || err.Code != values.CodeExpectedObject {
		t.Errorf("array: %v", err)
	}
	rec, err := b.NewRecordBatch()
	if err != nil {
		t.Fatal(err)
	}
	defer rec.Release()
	if rec.NumRows() != 2 {
		t.Fatalf("rows: %d", rec.NumRows())
	}
	// F32 as its shortest text (bits kept), F64 +Inf of an optional field
	// left out, a required F32 written as a float
	v0, _ := Row(rec, 0, s)
	if len(v0) != 1 || v0["f"] != json.Number("1.5") || v0["o"] != nil {
		t.Errorf("row 0: %#v", v0)
	}
	v1, _ := Row(rec, 1, s)
	if v1["f"] != json.Number("16777216.0") || len(v1["v"].([]any)) != 1 {
		t.Errorf("row 1: %#v", v1)
	}
}
