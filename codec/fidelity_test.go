package codec

import (
	"fmt"
	"math"
	"math/rand/v2"
	"strings"
	"testing"
	"unicode/utf8"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/apache/arrow-go/v18/arrow/memory"

	"github.com/herald-gateway/herald/codec/rows"
	"github.com/herald-gateway/herald/codec/store"
	"github.com/herald-gateway/herald/codec/types"
)

// The value-fidelity property (spec "Value Fidelity"): for each format, a
// generated batch of every type encodes row by row, the payloads decode as
// one group, and the result equals the input, float bits included, within
// the bounds each format sets.

const fidelitySchema = `CREATE SCHEMA s (
  u8 U8, u16 U16, u32 U32, u64 U64, i8 I8, i16 I16, i32 I32, i64 I64,
  f32 F32, f64 F64, fo32 F32 OPTIONAL, fo64 F64 OPTIONAL, b BOOL, s STRING, y BYTES, t DATETIME,
  so STRING OPTIONAL, yo BYTES OPTIONAL, to DATETIME OPTIONAL, io I64 OPTIONAL,
  a ARRAY<F32, 2, 3>, v VEC<ARRAY<I16, 2>>, w ARRAY<VEC<STRING>, 2> OPTIONAL, vy VEC<BYTES>,
  vu VEC<U64>, vt VEC<DATETIME>, vf VEC<F64>, vb VEC<BOOL> OPTIONAL
)`

func namedWire(format string) string {
	return `CREATE WIRE ` + format + ` SCHEMA w MODE STRICT (
  u8 U8, u16 integer, u32 U32, u64 integer, i8 integer, i16 I16, i32 integer, i64 I64,
  f32 F32, f64 number, fo32 number OPTIONAL, fo64 F64 OPTIONAL, b boolean, s string, y bytes, t string,
  so string OPTIONAL, yo bytes OPTIONAL, to DATETIME OPTIONAL, io integer OPTIONAL,
  a array, v array, w array OPTIONAL, vy array, vu array, vt array, vf array, vb array OPTIONAL);
CREATE CODEC c FROM WIRE ` + format + ` SCHEMA w TO SCHEMA s ENCODE t AS RFC3339`
}

const avroWire = `CREATE WIRE AVRO SCHEMA w MODE STRICT (
  u8 INT, u16 INT, u32 LONG, u64 LONG, i8 INT, i16 INT, i32 INT, i64 LONG,
  f32 FLOAT, f64 DOUBLE, fo32 FLOAT OPTIONAL, fo64 DOUBLE OPTIONAL, b BOOLEAN, s STRING, y BYTES, t STRING,
  so STRING OPTIONAL, yo BYTES OPTIONAL, to STRING OPTIONAL, io LONG OPTIONAL,
  a ARRAY, v ARRAY, w ARRAY OPTIONAL, vy ARRAY, vu ARRAY, vt ARRAY, vf ARRAY, vb ARRAY OPTIONAL);
CREATE CODEC c FROM WIRE AVRO SCHEMA w TO SCHEMA s ENCODE t AS RFC3339, to AS RFC3339`

type gen struct {
	r      *rand.Rand
	format types.Format
	elem   bool // generating an ARRAY or VEC element
}

const (
	minNS = math.MinInt64
	maxNS = math.MaxInt64
)

func (g *gen) intBits(bits int, signed bool) uint64 {
	switch g.r.IntN(6) {
	case 0:
		return 0
	case 1: // max
		if signed {
			return 1<<(bits-1) - 1
		}
		if bits == 64 {
			return math.MaxUint64
		}
		return 1<<bits - 1
	case 2: // min (two's complement of signed min)
		if signed {
			return uint64(-(int64(1) << (bits - 1)))
		}
		return 0
	}
	return g.r.Uint64()
}

func (g *gen) float(bits int, finite bool) float64 {
	for {
		var f float64
		switch g.r.IntN(10) {
		case 0:
			f = 0
		case 1:
			f = math.Copysign(0, -1)
		case 2: // subnormal
			if bits == 32 {
				f = float64(math.Float32frombits(uint32(g.r.IntN(1<<23-1) + 1)))
			} else {
				f = math.Float64frombits(uint64(g.r.Int64N(1<<52-1) + 1))
			}
		case 3:
			if bits == 32 {
				f = math.MaxFloat32
			} else {
				f = math.MaxFloat64
			}
		case 4:
			f = math.Inf(1 - 2*g.r.IntN(2))
		case 5:
			if bits == 32 {
				f = float64(math.Float32frombits(0x7fc00000 | uint32(g.r.IntN(1<<22))))
			} else {
				f = math.Float64frombits(0x7ff8000000000000 | uint64(g.r.Int64N(1<<51)))
			}
		case 6:
			f = 7.038531e-26 // the F32 halfway value
		default:
			if bits == 32 {
				f = float64(math.Float32frombits(g.r.Uint32()))
			} else {
				f = math.Float64frombits(g.r.Uint64())
			}
		}
		if finite && (math.IsNaN(f) || math.IsInf(f, 0)) {
			continue
		}
		return f
	}
}

var runePool = []rune{'a', 'Z', '"', '\\', '/', '\n', '\t', 0, 1, 0x1f, 0x7f, 'é', 0xFEFF, 0x2028, '😀', 0x10FFFF, 0xFFFD, '<', '&', ' '}

func (g *gen) text() string {
	var b strings.Builder
	n := g.r.IntN(12)
	for i := 0; i < n; i++ {
		if g.r.IntN(3) == 0 {
			b.WriteRune(runePool[g.r.IntN(len(runePool))])
			continue
		}
		r := rune(g.r.IntN(0x10FFFF + 1))
		if !utf8.ValidRune(r) {
			r = 'x'
		}
		b.WriteRune(r)
	}
	return b.String()
}

func (g *gen) bytes() []byte {
	b := make([]byte, g.r.IntN(9))
	for i := range b {
		b[i] = byte(g.r.UintN(256))
	}
	return b
}

func (g *gen) datetime() int64 {
	switch g.r.IntN(5) {
	case 0:
		return minNS
	case 1:
		return maxNS
	case 2:
		return 1790237700123456789
	}
	return int64(g.r.Uint64())
}

// value appends one value of c's type; elem says it is a collection
// element (never null, and never non-finite for JSON/CBOR).
func (g *gen) value(c *rows.Col, finite bool) {
	switch k := c.Kind; {
	case k.IsUnsigned():
		v := g.intBits(k.Bits(), false)
		if g.format == types.AVRO && k == types.U64 && g.elem {
			v &= math.MaxInt64 // an Avro long holds a U64 element up to 2^63-1
		}
		c.AppendUint(v & values64(k.Bits()))
	case k.IsInteger():
		v := int64(g.intBits(k.Bits(), true))
		c.AppendInt(v << (64 - k.Bits()) >> (64 - k.Bits()))
	case k == types.F32:
		c.F32.Append(float32(g.float(32, finite)))
	case k == types.F64:
		c.F64.Append(g.float(64, finite))
	case k == types.Bool:
		c.Bool.Append(g.r.IntN(2) == 0)
	case k == types.String:
		c.Str.Append(g.text())
	case k == types.Bytes:
		c.Bin.Append(g.bytes())
	case k == types.Datetime:
		c.TS.Append(arrow.Timestamp(g.datetime()))
	case k == types.Array:
		c.FSL.Append(true)
		elem := g.elem
		g.elem = true
		for i := 0; i < c.N; i++ {
			g.value(c.Elem, finite)
		}
		g.elem = elem
	case k == types.Vec:
		c.List.Append(true)
		elem := g.elem
		g.elem = true
		for i, n := 0, g.r.IntN(4); i < n; i++ {
			g.value(c.Elem, finite)
		}
		g.elem = elem
	}
}

func values64(bits int) uint64 {
	if bits == 64 {
		return math.MaxUint64
	}
	return 1<<bits - 1
}

// dump renders a batch with floats as bits; nonFiniteNull renders a
// non-finite top-level optional float as null (JSON and CBOR read it so).
func dump(rec arrow.RecordBatch, nonFiniteNull bool) []string {
	var out []string
	for i := 0; i < int(rec.NumRows()); i++ {
		var b strings.Builder
		for j := 0; j < int(rec.NumCols()); j++ {
			col := rec.Column(j)
			fmt.Fprintf(&b, "%s=", rec.ColumnName(j))
			if col.IsNull(i) {
				b.WriteString("null ")
				continue
			}
			if nonFiniteNull {
				switch a := col.(type) {
				case *array.Float32:
					if f := float64(a.Value(i)); math.IsNaN(f) || math.IsInf(f, 0) {
						if rec.Schema().Field(j).Nullable {
							b.WriteString("null ")
							continue
						}
					}
				case *array.Float64:
					if f := a.Value(i); math.IsNaN(f) || math.IsInf(f, 0) {
						if rec.Schema().Field(j).Nullable {
							b.WriteString("null ")
							continue
						}
					}
				}
			}
			dumpValue(&b, col, i)
			b.WriteByte(' ')
		}
		out = append(out, b.String())
	}
	return out
}

func dumpValue(b *strings.Builder, arr arrow.Array, i int) {
	switch a := arr.(type) {
	case *array.Float32:
		fmt.Fprintf(b, "f%08x", math.Float32bits(a.Value(i)))
	case *array.Float64:
		fmt.Fprintf(b, "d%016x", math.Float64bits(a.Value(i)))
	case *array.String:
		fmt.Fprintf(b, "%q", a.Value(i))
	case *array.Binary:
		fmt.Fprintf(b, "%x", a.Value(i))
	case *array.FixedSizeList:
		lo, hi := a.ValueOffsets(i)
		b.WriteByte('[')
		for j := lo; j < hi; j++ {
			dumpValue(b, a.ListValues(), int(j))
			b.WriteByte(',')
		}
		b.WriteByte(']')
	case *array.List:
		lo, hi := a.ValueOffsets(i)
		b.WriteByte('[')
		for j := lo; j < hi; j++ {
			dumpValue(b, a.ListValues(), int(j))
			b.WriteByte(',')
		}
		b.WriteByte(']')
	default:
		b.WriteString(a.ValueStr(i))
	}
}

func generate(c *Codec, format types.Format, n int, seed uint64) arrow.RecordBatch {
	g := &gen{r: rand.New(rand.NewPCG(seed, 7)), format: format}
	b := c.NewBuilder(memory.NewGoAllocator())
	defer b.Release()
	named := format == types.JSON || format == types.CBOR
	for r := 0; r < n; r++ {
		b.BeginRow()
		for i, f := range c.Schema.Fields {
			col := b.Col(i)
			if f.Optional && g.r.IntN(4) == 0 {
				col.B.AppendNull()
				continue
			}
			// JSON and CBOR read a non-finite float as null: only an
			// optional top-level float may hold one.
			finite := named && !(f.Optional && f.Type.Kind.IsFloat())
			g.value(col, finite)
		}
		if err := b.Commit(); err != nil {
			panic(err)
		}
	}
	rec, err := b.NewRecordBatch()
	if err != nil {
		panic(err)
	}
	return rec
}

func TestValueFidelity(t *testing.T) {
	tests := []struct {
		format types.Format
		defs   string
	}{
		{types.JSON, fidelitySchema + ";" + namedWire("JSON")},
		{types.CBOR, fidelitySchema + ";" + namedWire("CBOR")},
		{types.AVRO, fidelitySchema + ";" + avroWire},
	}
	for _, tt := range tests {
		t.Run(tt.format.String(), func(t *testing.T) {
			c := compileDefs(t, tt.defs, "c")
			in := generate(c, tt.format, 400, uint64(tt.format))
			defer in.Release()
			mem := memory.NewCheckedAllocator(memory.NewGoAllocator())
			defer mem.AssertSize(t, 0)
			b := c.NewBuilder(mem)
			defer b.Release()
			dec := c.NewDecoder()
			var buf []byte
			for i := 0; i < int(in.NumRows()); i++ {
				var err error
				buf, err = c.Encoder.AppendRow(buf[:0], in, i)
				if err != nil {
					t.Fatalf("row %d: encode: %v", i, err)
				}
				if _, err := dec.Decode(buf, b); err != nil {
					t.Fatalf("row %d: decode: %v\n%s", i, err, dump(in, false)[i])
				}
			}
			out, err := b.NewRecordBatch()
			if err != nil {
				t.Fatal(err)
			}
			defer out.Release()
			want := dump(in, tt.format != types.AVRO)
			got := dump(out, false)
			for i := range want {
				if want[i] != got[i] {
					t.Fatalf("row %d differs\nwant %s\n got %s", i, want[i], got[i])
				}
			}
		})
	}
}

// TestFidelityBounds pins the bounds the formats set: JSON/CBOR refuse a
// non-finite float in a required field or element on reading it back, and
// AVRO refuses an unsigned element above the long range on writing ("an
// element above 9223372036854775807 fails to encode") while a single U64
// keeps its whole range.
func TestFidelityBounds(t *testing.T) {
	for _, f := range []string{"JSON", "CBOR"} {
		c := compileDefs(t, oneField(f, "VEC<F64>", "array"), "c")
		out, code := encodeView(t, c, `{"x":[1,"NaN"]}`)
		if code != "" {
			t.Fatal(code)
		}
		if got := decodeView(t, c, out); got != "NULL_VALUE" {
			t.Errorf("%s: %s", f, got)
		}
		c = compileDefs(t, oneField(f, "F32", "number"), "c")
		out, _ = encodeView(t, c, `{"x":"Infinity"}`)
		if got := decodeView(t, c, out); got != "NULL_VALUE" {
			t.Errorf("%s required: %s", f, got)
		}
	}
	c := compileDefs(t, oneField("AVRO", "VEC<U64>", "ARRAY"), "c")
	if _, code := encodeView(t, c, `{"x":[9223372036854775808]}`); code != "UNENCODABLE" {
		t.Errorf("avro u64 element: %s", code)
	}
	c = compileDefs(t, oneField("AVRO", "U64", "LONG"), "c")
	for _, v := range []string{`{"x":9223372036854775808}`, `{"x":18446744073709551615}`} {
		out, code := encodeView(t, c, v)
		if code != "" {
			t.Fatalf("avro u64 %s: %s", v, code)
		}
		if got := decodeView(t, c, out); got != v {
			t.Errorf("avro u64: %s reads back as %s", v, got)
		}
	}
}

// TestSyslogFidelity: rows within the SYSLOG contract (timestamps to the
// microsecond, printable headers, well-formed SD, text without a leading
// BOM or trailing CR/LF/NUL) encode and decode to the same values.
func TestSyslogFidelity(t *testing.T) {
	c := compileDefs(t, `CREATE SCHEMA ev (facility U8, severity U8, timestamp DATETIME OPTIONAL, hostname STRING OPTIONAL,
  app_name STRING OPTIONAL, proc_id STRING OPTIONAL, msg_id STRING OPTIONAL, structured_data STRING OPTIONAL, message STRING SENSITIVE);
CREATE CODEC c FROM SYSLOG TO SCHEMA ev`, "c")
	g := &gen{r: rand.New(rand.NewPCG(5, 5))}
	word := func(max int) string {
		n := 1 + g.r.IntN(max)
		b := make([]byte, n)
		for i := range b {
			b[i] = byte('!' + g.r.IntN(94))
		}
		if string(b) == "-" {
			return "x"
		}
		return string(b)
	}
	sdName := func() string {
		for {
			s := word(32)
			if !strings.ContainsAny(s, `="]`) {
				return s
			}
		}
	}
	b := c.NewBuilder(nil)
	defer b.Release()
	for r := 0; r < 300; r++ {
		b.BeginRow()
		b.Col(0).U8.Append(uint8(g.r.IntN(24)))
		b.Col(1).U8.Append(uint8(g.r.IntN(8)))
		if g.r.IntN(4) == 0 {
			b.Col(2).TS.AppendNull()
		} else {
			b.Col(2).TS.Append(arrow.Timestamp(g.datetime() / 1000 * 1000))
		}
		for i, max := range []int{255, 48, 128, 32} {
			if g.r.IntN(3) == 0 {
				b.Col(3 + i).Str.AppendNull()
			} else {
				b.Col(3 + i).Str.Append(word(max))
			}
		}
		if g.r.IntN(2) == 0 {
			b.Col(7).Str.AppendNull()
		} else {
			b.Col(7).Str.Append("[" + sdName() + " " + sdName() + `="a\"b\\c\]` + strings.NewReplacer(`\`, `\\`, `"`, `\"`, `]`, `\]`).Replace(g.text()) + `"]`)
		}
		msg := strings.TrimPrefix(g.text(), "\ufeff")
		msg = strings.TrimRight(msg, "\r\n\x00")
		b.Col(8).Str.Append(msg)
		if err := b.Commit(); err != nil {
			t.Fatal(err)
		}
	}
	in, _ := b.NewRecordBatch()
	defer in.Release()
	out := c.NewBuilder(nil)
	defer out.Release()
	for i := 0; i < int(in.NumRows()); i++ {
		frame, err := c.Encoder.AppendRow(nil, in, i)
		if err != nil {
			t.Fatalf("row %d: %v", i, err)
		}
		if _, err := c.NewDecoder().Decode(frame, out); err != nil {
			t.Fatalf("row %d: %v: %q", i, err, frame)
		}
	}
	got, _ := out.NewRecordBatch()
	defer got.Release()
	want, have := dump(in, false), dump(got, false)
	for i := range want {
		if want[i] != have[i] {
			t.Fatalf("row %d\nwant %s\n got %s", i, want[i], have[i])
		}
	}
}

// TestStoreFidelity: herald's stored encoding (codec/store) keeps every
// value the internal type system holds, with no format bound: every
// float bit pattern (NaN payloads, -0, infinities, also as collection
// elements and in required fields), U64 above the Avro long range, both
// DATETIME extremes, bytes, any text, nested ARRAY and VEC, optional
// nulls. Each row encodes to one canonical item that decodes back to the
// same values and encodes again to the same bytes.
func TestStoreFidelity(t *testing.T) {
	c := compileDefs(t, fidelitySchema+";"+namedWire("JSON"), "c")
	// SYSLOG-free generation with no format bound: non-finite floats and
	// the whole U64 range everywhere.
	in := generate(c, types.SYSLOG, 600, 11)
	defer in.Release()
	mem := memory.NewCheckedAllocator(memory.NewGoAllocator())
	defer mem.AssertSize(t, 0)
	b := c.NewBuilder(mem)
	defer b.Release()
	enc := store.NewEncoder(c.Schema)
	dec := store.NewDecoder(c.Schema, nil)
	var stored [][]byte
	for i := 0; i < int(in.NumRows()); i++ {
		buf, err := enc.AppendRow(nil, in, i)
		if err != nil {
			t.Fatalf("row %d: encode: %v", i, err)
		}
		if err := dec.Decode(buf, b); err != nil {
			t.Fatalf("row %d: decode: %v\n%s", i, err, dump(in, false)[i])
		}
		stored = append(stored, buf)
	}
	out, err := b.NewRecordBatch()
	if err != nil {
		t.Fatal(err)
	}
	defer out.Release()
	want, got := dump(in, false), dump(out, false)
	for i := range want {
		if want[i] != got[i] {
			t.Fatalf("row %d differs\nwant %s\n got %s", i, want[i], got[i])
		}
		again, err := enc.AppendRow(nil, out, i)
		if err != nil || string(again) != string(stored[i]) {
			t.Fatalf("row %d: encoding the decoded row gives other bytes (%v)", i, err)
		}
	}
}
