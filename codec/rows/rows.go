// Package rows owns the batch builder every decoder writes into: an Arrow
// record builder for one internal schema whose rows are always whole. A
// row that fails part-way is padded to a well-formed shape and masked
// (pad and mask), and masked rows are removed when the batch is finished,
// so a failed payload never leaves a malformed or partial row behind. It
// also owns the way back: Value walks one value of a finished batch (the
// type switch over Arrow arrays, collections, null elements) for the
// encoders that build a value tree (rowview's gojq values, WIRE AVRO's
// goavro values), each converting scalars through Scalars.
//
// It must not parse or write any wire format or apply value rules;
// decoders and encoders do that (with package values) and call the typed
// column handles and Value here.
package rows

import (
	"fmt"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/apache/arrow-go/v18/arrow/memory"

	"github.com/herald-gateway/herald/codec/types"
)

// Col is a typed handle on one column builder (or one nested element
// builder). Exactly one of the typed builder pointers is set, matching
// Kind; Elem is the element handle of an ARRAY axis or a VEC.
type Col struct {
	Type types.Type
	Kind types.Kind
	B    array.Builder

	U8   *array.Uint8Builder
	U16  *array.Uint16Builder
	U32  *array.Uint32Builder
	U64  *array.Uint64Builder
	I8   *array.Int8Builder
	I16  *array.Int16Builder
	I32  *array.Int32Builder
	I64  *array.Int64Builder
	F32  *array.Float32Builder
	F64  *array.Float64Builder
	Bool *array.BooleanBuilder
	Str  *array.StringBuilder
	Bin  *array.BinaryBuilder
	TS   *array.TimestampBuilder
	FSL  *array.FixedSizeListBuilder
	List *array.ListBuilder

	// N is the length of a fixed axis (Kind Array).
	N    int
	Elem *Col
}

// NewCol wraps builder b, which must have been made for type t.
func NewCol(t types.Type, b array.Builder) *Col {
	c := &Col{Type: t, Kind: t.Kind, B: b}
	switch t.Kind {
	case types.U8:
		c.U8 = b.(*array.Uint8Builder)
	case types.U16:
		c.U16 = b.(*array.Uint16Builder)
	case types.U32:
		c.U32 = b.(*array.Uint32Builder)
	case types.U64:
		c.U64 = b.(*array.Uint64Builder)
	case types.I8:
		c.I8 = b.(*array.Int8Builder)
	case types.I16:
		c.I16 = b.(*array.Int16Builder)
	case types.I32:
		c.I32 = b.(*array.Int32Builder)
	case types.I64:
		c.I64 = b.(*array.Int64Builder)
	case types.F32:
		c.F32 = b.(*array.Float32Builder)
	case types.F64:
		c.F64 = b.(*array.Float64Builder)
	case types.Bool:
		c.Bool = b.(*array.BooleanBuilder)
	case types.String:
		c.Str = b.(*array.StringBuilder)
	case types.Bytes:
		c.Bin = b.(*array.BinaryBuilder)
	case types.Datetime:
		c.TS = b.(*array.TimestampBuilder)
	case types.Array:
		c.FSL = b.(*array.FixedSizeListBuilder)
		c.N = t.Dims[0]
		c.Elem = NewCol(t.Inner(), c.FSL.ValueBuilder())
	case types.Vec:
		c.List = b.(*array.ListBuilder)
		c.Elem = NewCol(t.Inner(), c.List.ValueBuilder())
	}
	return c
}

// AppendInt appends a signed value already range-checked for Kind.
func (c *Col) AppendInt(v int64) {
	switch c.Kind {
	case types.I8:
		c.I8.Append(int8(v))
	case types.I16:
		c.I16.Append(int16(v))
	case types.I32:
		c.I32.Append(int32(v))
	case types.I64:
		c.I64.Append(v)
	}
}

// AppendUint appends an unsigned value already range-checked for Kind.
func (c *Col) AppendUint(v uint64) {
	switch c.Kind {
	case types.U8:
		c.U8.Append(uint8(v))
	case types.U16:
		c.U16.Append(uint16(v))
	case types.U32:
		c.U32.Append(uint32(v))
	case types.U64:
		c.U64.Append(v)
	}
}

// complete pads a partially written nested value so every fixed-size list
// holds exactly length × size children.
func complete(b array.Builder) {
	switch x := b.(type) {
	case *array.FixedSizeListBuilder:
		child := x.ValueBuilder()
		complete(child)
		n := x.Type().(*arrow.FixedSizeListType).Len()
		for want := x.Len() * int(n); child.Len() < want; {
			child.AppendNull()
		}
	case *array.ListBuilder:
		complete(x.ValueBuilder())
	}
}

// Builder builds one record batch of an internal schema from whole rows.
// It is not safe for concurrent use.
type Builder struct {
	schema  *types.Schema
	arrow   *arrow.Schema
	rb      *array.RecordBuilder
	mem     memory.Allocator
	cols    []*Col
	n       int   // rows begun and finished, dropped ones included
	dropped []int // positions of dropped rows, ascending
	open    bool
}

// NewBuilder returns a builder for schema s using allocator mem (nil means
// the Go allocator).
func NewBuilder(mem memory.Allocator, s *types.Schema) *Builder {
	if mem == nil {
		mem = memory.NewGoAllocator()
	}
	as := s.ArrowSchema()
	rb := array.NewRecordBuilder(mem, as)
	b := &Builder{schema: s, arrow: as, rb: rb, mem: mem}
	b.cols = make([]*Col, len(s.Fields))
	for i, f := range s.Fields {
		b.cols[i] = NewCol(f.Type, rb.Field(i))
	}
	return b
}

// Schema returns the internal schema.
func (b *Builder) Schema() *types.Schema { return b.schema }

// Col returns the handle of column i.
func (b *Builder) Col(i int) *Col { return b.cols[i] }

// Len returns the number of rows kept so far.
func (b *Builder) Len() int { return b.n - len(b.dropped) }

// BeginRow starts a row. Every column must then receive exactly one value
// or null before Commit; Abandon may be called at any point instead.
func (b *Builder) BeginRow() { b.open = true }

// Commit ends the current row. It reports an error (and abandons the row)
// if a column did not receive exactly one value: a decoder bug, never a
// payload fault.
func (b *Builder) Commit() error {
	b.open = false
	for i, c := range b.cols {
		if c.B.Len() != b.n+1 {
			err := fmt.Errorf("rows: column %d has %d values for row %d", i, c.B.Len()-b.n, b.n)
			b.abandon()
			return err
		}
	}
	b.n++
	return nil
}

// Abandon ends the current row as dropped: partial nested values are
// padded, columns that received nothing get a null, and the row is masked
// out of the finished batch.
func (b *Builder) Abandon() {
	b.open = false
	b.abandon()
}

func (b *Builder) abandon() {
	for _, c := range b.cols {
		complete(c.B)
		for c.B.Len() < b.n+1 {
			c.B.AppendNull()
		}
	}
	b.dropped = append(b.dropped, b.n)
	b.n++
}

// Mark returns the position the next row will take, for Rollback.
func (b *Builder) Mark() int { return b.n }

// Rollback masks every row begun at or after mark (an open row is
// abandoned first), so a payload that unfolds into several rows and fails
// part-way leaves none of them in the finished batch.
func (b *Builder) Rollback(mark int) {
	if b.open {
		b.Abandon()
	}
	var keep []int
	for _, d := range b.dropped {
		if d < mark {
			keep = append(keep, d)
		}
	}
	b.dropped = keep
	for r := mark; r < b.n; r++ {
		b.dropped = append(b.dropped, r)
	}
}

// NewRecordBatch finishes the batch: the rows kept so far, in order, and
// resets the builder for the next batch. The caller releases the result.
func (b *Builder) NewRecordBatch() (arrow.RecordBatch, error) {
	rec := b.rb.NewRecordBatch()
	dropped := b.dropped
	b.dropped = nil
	b.n = 0
	if len(dropped) == 0 {
		return rec, nil
	}
	defer rec.Release()
	// kept ranges [lo, hi)
	var ranges [][2]int64
	lo := int64(0)
	for _, d := range dropped {
		if int64(d) > lo {
			ranges = append(ranges, [2]int64{lo, int64(d)})
		}
		lo = int64(d) + 1
	}
	if lo < rec.NumRows() {
		ranges = append(ranges, [2]int64{lo, rec.NumRows()})
	}
	switch len(ranges) {
	case 0:
		return rec.NewSlice(0, 0), nil
	case 1:
		return rec.NewSlice(ranges[0][0], ranges[0][1]), nil
	}
	cols := make([]arrow.Array, rec.NumCols())
	var total int64
	for _, r := range ranges {
		total += r[1] - r[0]
	}
	for i := range cols {
		parts := make([]arrow.Array, len(ranges))
		for j, r := range ranges {
			parts[j] = array.NewSlice(rec.Column(i), r[0], r[1])
		}
		c, err := array.Concatenate(parts, b.mem)
		for _, p := range parts {
			p.Release()
		}
		if err != nil {
			for _, done := range cols[:i] {
				done.Release()
			}
			return nil, fmt.Errorf("rows: removing dropped rows: %w", err)
		}
		cols[i] = c
	}
	out := array.NewRecordBatch(b.arrow, cols, total)
	for _, c := range cols {
		c.Release()
	}
	return out, nil
}

// Release frees the builder's memory.
func (b *Builder) Release() { b.rb.Release() }
