package rowview

import (
	"encoding/json"
	"math"
	"testing"

	"github.com/apache/arrow-go/v18/arrow/memory"

	"github.com/herald-gateway/herald/codec/rows"
	"github.com/herald-gateway/herald/codec/types"
	"github.com/herald-gateway/herald/codec/values"
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
	for _, c := range []struct {
		v    map[string]any
		code values.Code
		msg  string
	}{
		{map[string]any{"f": json.Number("7.038531e-26"), "o": math.Inf(1) - math.Inf(1) + 1, "extra": "dropped"}, values.CodeNonFinite, "field o: a NaN or infinite number is not valid JSON"},
		// Numbers beyond the type's range are refused, not rounded to an
		// infinity: text, an integer or a float narrowed to F32.
		{map[string]any{"f": 1.5, "o": json.Number("1e400")}, values.CodeOutOfRange, "field o: number is outside the range of F64 (largest magnitude 1.7976931348623157e+308)"},
		{map[string]any{"f": json.Number("1e39")}, values.CodeOutOfRange, "field f: number is outside the range of F32 (largest magnitude 3.4028235e+38)"},
		{map[string]any{"f": 1e39}, values.CodeOutOfRange, "field f: number is outside the range of F32 (largest magnitude 3.4028235e+38)"},
		{map[string]any{"f": json.Number("3.4028235e38")}, "", ""},
		{map[string]any{"f": 1.5}, "", ""},
		{map[string]any{"f": 16777217, "v": []any{1.0}}, "", ""},
	} {
		err := tg.Append(b, c.v)
		if c.code == "" && err != nil || c.code != "" && (values.CodeOf(err) != c.code || err.Error() != c.msg) {
			t.Fatalf("%v: %v, want %s %q", c.v, err, c.code, c.msg)
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
	if rec.NumRows() != 3 {
		t.Fatalf("rows: %d", rec.NumRows())
	}
	// F32 as its shortest text (bits kept), an absent optional field left
	// out, a required F32 written as a float
	if v, _ := Row(rec, 0, s); len(v) != 1 || v["f"] != json.Number("3.4028235e+38") {
		t.Errorf("row 0: %#v", v)
	}
	if v, _ := Row(rec, 1, s); len(v) != 1 || v["f"] != json.Number("1.5") || v["o"] != nil {
		t.Errorf("row 1: %#v", v)
	}
	if v, _ := Row(rec, 2, s); v["f"] != json.Number("16777216.0") || len(v["v"].([]any)) != 1 {
		t.Errorf("row 2: %#v", v)
	}
}
