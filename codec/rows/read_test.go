package rows

import (
	"fmt"
	"math"
	"reflect"
	"testing"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/apache/arrow-go/v18/arrow/memory"

	"github.com/herald-gateway/herald/codec/values"
)

// tagged converts every scalar into a string naming its kind, refuses U64
// values above 2^63-1 and collection elements equal to "f64:NaN".
type tagged struct{}

func (tagged) Int(v int64) any { return fmt.Sprint("int:", v) }
func (tagged) Uint64(v uint64) (any, *values.Error) {
	if v > math.MaxInt64 {
		return nil, values.Errorf(values.CodeOutOfRange, "", "too large")
	}
	return fmt.Sprint("u64:", v), nil
}
func (tagged) Float32(f float32) any { return fmt.Sprint("f32:", f) }
func (tagged) Float64(f float64) any { return fmt.Sprint("f64:", f) }
func (tagged) String(s string) any   { return "str:" + s }
func (tagged) Bytes(b []byte) any    { return fmt.Sprintf("bytes:%x", b) }
func (tagged) Datetime(ns int64) any { return fmt.Sprint("ts:", ns) }
func (tagged) Elem(v any) *values.Error {
	if v == "f64:NaN" {
		return values.Errorf(values.CodeNonFinite, "", "NaN element")
	}
	return nil
}

func TestValueScalars(t *testing.T) {
	mem := memory.NewGoAllocator()
	for _, c := range []struct {
		build func() arrow.Array
		want  any
	}{
		{func() arrow.Array { b := array.NewUint8Builder(mem); b.Append(7); return b.NewArray() }, "int:7"},
		{func() arrow.Array { b := array.NewUint32Builder(mem); b.Append(1 << 31); return b.NewArray() }, "int:2147483648"},
		{func() arrow.Array { b := array.NewInt64Builder(mem); b.Append(-3); return b.NewArray() }, "int:-3"},
		{func() arrow.Array { b := array.NewUint64Builder(mem); b.Append(9); return b.NewArray() }, "u64:9"},
		{func() arrow.Array { b := array.NewFloat32Builder(mem); b.Append(1.5); return b.NewArray() }, "f32:1.5"},
		{func() arrow.Array { b := array.NewBooleanBuilder(mem); b.Append(true); return b.NewArray() }, true},
		{func() arrow.Array { b := array.NewStringBuilder(mem); b.Append("é"); return b.NewArray() }, "str:é"},
		{func() arrow.Array {
			b := array.NewBinaryBuilder(mem, arrow.BinaryTypes.Binary)
			b.Append([]byte{1, 255})
			return b.NewArray()
		}, "bytes:01ff"},
		{func() arrow.Array {
			b := array.NewTimestampBuilder(mem, &arrow.TimestampType{Unit: arrow.Nanosecond, TimeZone: "UTC"})
			b.Append(5)
			return b.NewArray()
		}, "ts:5"},
	} {
		arr := c.build()
		got, err := Value(arr, 0, "f", tagged{})
		if err != nil || !reflect.DeepEqual(got, c.want) {
			t.Errorf("Value(%s) = %v, %v, want %v", arr.DataType(), got, err, c.want)
		}
		arr.Release()
	}
}

func TestValueLists(t *testing.T) {
	mem := memory.NewGoAllocator()
	// [[1, 2], [NaN]] and [[3], [null]] as a list of lists of float64,
	// and an invalid string inside a list.
	lb := array.NewListBuilder(mem, arrow.ListOf(arrow.PrimitiveTypes.Float64))
	inner := lb.ValueBuilder().(*array.ListBuilder)
	fb := inner.ValueBuilder().(*array.Float64Builder)
	lb.Append(true)
	inner.Append(true)
	fb.AppendValues([]float64{1, 2}, nil)
	inner.Append(true)
	fb.Append(math.NaN())
	lb.Append(true)
	inner.Append(true)
	fb.Append(3)
	inner.Append(true)
	fb.AppendNull()
	lists := lb.NewArray()
	defer lists.Release()

	sb := array.NewListBuilder(mem, arrow.BinaryTypes.String)
	sb.Append(true)
	sb.ValueBuilder().(*array.StringBuilder).AppendValues([]string{"ok", "\xff"}, nil)
	strs := sb.NewArray()
	defer strs.Release()

	ub := array.NewUint64Builder(mem)
	ub.Append(math.MaxUint64)
	big := ub.NewArray()
	defer big.Release()

	for _, c := range []struct {
		arr  arrow.Array
		row  int
		want string
	}{
		{lists, 0, `field f[1][0]: NaN element`},
		{lists, 1, `field f[1][0]: null collection element`},
		{strs, 0, `field f[1]: text is not valid UTF-8`},
		{big, 0, `field f: too large`},
	} {
		_, err := Value(c.arr, c.row, "f", tagged{})
		if err == nil || err.Error() != c.want {
			t.Errorf("Value(%s, row %d) error = %v, want %s", c.arr.DataType(), c.row, err, c.want)
		}
	}
	got, err := Value(lists, 0, "f", allFloats{})
	want := []any{[]any{"f64:1", "f64:2"}, []any{"f64:NaN"}}
	if err != nil || !reflect.DeepEqual(got, want) {
		t.Errorf("Value(lists, 0) = %v, %v, want %v", got, err, want)
	}
}

// allFloats is tagged accepting every element.
type allFloats struct{ tagged }

func (allFloats) Elem(any) *values.Error { return nil }
