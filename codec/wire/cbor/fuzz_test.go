package cbor

import (
	"encoding/hex"
	"testing"

	"github.com/apache/arrow-go/v18/arrow/memory"

	"github.com/herald-gateway/herald/codec/bind"
	"github.com/herald-gateway/herald/codec/catalog"
	"github.com/herald-gateway/herald/codec/rows"
	"github.com/herald-gateway/herald/codec/values"
	wjson "github.com/herald-gateway/herald/codec/wire/json"
)

func plan(t testing.TB, defs string) *bind.Plan {
	t.Helper()
	cat := catalog.New()
	if _, err := cat.Exec(defs); err != nil {
		t.Fatal(err)
	}
	p, err := cat.Plan("c")
	if err != nil {
		t.Fatal(err)
	}
	return p
}

const fuzzDefs = `CREATE SCHEMA s (x U64 OPTIONAL, i I64 OPTIONAL, f F32 OPTIONAL, d F64 OPTIONAL, b BOOL OPTIONAL, s STRING OPTIONAL,
  y BYTES OPTIONAL, t DATETIME OPTIONAL, a ARRAY<U8, 2> OPTIONAL, v VEC<VEC<F32>> OPTIONAL);
CREATE WIRE CBOR SCHEMA w MODE LOOSE (x integer OPTIONAL, i integer OPTIONAL, f number OPTIONAL, d number OPTIONAL,
  b boolean OPTIONAL, s string OPTIONAL, y bytes OPTIONAL, t DATETIME OPTIONAL, a array OPTIONAL, v array OPTIONAL, k integer OPTIONAL);
CREATE CODEC c FROM WIRE CBOR SCHEMA w TO SCHEMA s`

const strictDefs = `CREATE SCHEMA s (u U8, i I16 OPTIONAL, f F32, d F64 OPTIONAL, m ARRAY<F32, 2, 3> OPTIONAL, v VEC<STRING> OPTIONAL,
  t DATETIME OPTIONAL, y BYTES OPTIONAL, q VEC<VEC<I64>> OPTIONAL, e F32 OPTIONAL);
CREATE WIRE CBOR SCHEMA w (u integer, i integer OPTIONAL, f number, d number OPTIONAL, m array OPTIONAL, v array OPTIONAL,
  t DATETIME OPTIONAL, y bytes OPTIONAL, q array OPTIONAL, wb bytes OPTIONAL, wa array OPTIONAL, wn number OPTIONAL,
  wt DATETIME OPTIONAL, wo boolean OPTIONAL, ws string OPTIONAL, e number OPTIONAL);
CREATE CODEC c FROM WIRE CBOR SCHEMA w TO SCHEMA s`

// oneSideDefs declares OPTIONAL on one side only (u on the wire, o in the
// internal schema) and an internal field no wire field binds (n); the
// unbound plan has a required one (r), so every decode fails.
const (
	oneSideDefs = `CREATE SCHEMA s (u U8, o STRING OPTIONAL, n U8 OPTIONAL);
CREATE WIRE CBOR SCHEMA w (u integer OPTIONAL, o string);
CREATE CODEC c FROM WIRE CBOR SCHEMA w TO SCHEMA s`
	unboundDefs = `CREATE SCHEMA s (u U8, r U8);
CREATE WIRE CBOR SCHEMA w (u integer);
CREATE CODEC c FROM WIRE CBOR SCHEMA w TO SCHEMA s`
)

// fuzzSeeds are hex payloads for the fuzz plans: the golden vectors,
// every refusal class, indefinite lengths, nested maps in undeclared
// fields, and rows the direct walk decodes.
var fuzzSeeds = []string{
	"a161781bffffffffffffffff", "a161693b7fffffffffffffff", "a161693bffffffffffffffff", "a16166fa7fc00000",
	"a16164fbfff0000000000000", "a0", "a161796464326b3d", "a1617942ffef", "a161618201 1818", "a2617801617802",
	"a161780100", "a16178f7", "a16178c101", "a10101", "a16178f93c00", "a1617362c328", "", "80", "bf617801ff",
	"a1616b a1 6171 01", "a1617682 81 fa3f800000 80",
	// strict plan: a full row, then variants
	"a3 6175 18ff 6166 fa3fc00000 616d 82 83 fa3f800000 01 f93c00 83 fb3ff0000000000000 20 3a7fffffff",
	"a3 6175 01 6166 01 6176 82 6161 6162",
	"a3 6175 01 6166 01 6171 82 82 01 20 80",
	"a3 6175 01 6166 01 6174 74 323032362d30392d32345430383a31353a30305a",
	"a3 6175 01 6166 01 6179 64 2f2b383d",
	"a4 6175 01 6166 01 627762 64 2f2b383d 627761 82 a0 f8ff",
	"a4 6175 01 6166 01 62776e 3bffffffffffffffff 62776f f5",
	"a3 6175 01 6166 1b0020000000000001 6164 3b0020000000000000",
	"a3 6175 01 6166 01 6165 fa7f800000",
	"a2 6175 01 6166 f6", "a2 6175 0100", "a2 6175 01 6166 01 00", "a2 6175 f4 6166 01",
	"a3 6175 01 6166 01 616d 82 83 01 02 03 82 01 02", "a3 6175 01 6166 01 6176 9f 6161 ff",
	"a3 6175 01 6166 01 617a 01", "a3 6175 01 6166 01 f6 01", "a3 6175 01 6166 01 6165 f97e00",
	"a2 7f 6175 ff 01 6166 01", "b9000d 6175 01", "a2 6175 01 6166 9b7fffffffffffffff",
	// doubles beyond F32's range, in a field and an element; F32's largest
	"a2 6175 01 6166 fb48078287f49c4a1d", "a3 6175 01 6166 01 616d 82 83 01 02 03 83 01 02 fb47effffff0000000",
	"a2 6175 01 6166 fb47efffffe0000000",
	// loose plan: undeclared keys, nested maps, simple values
	"a3 617a a2 6161 01 6161 02 6178 01 617a 02", "a2 617a e0 617a f8ff", "a1 617a 81 f7",
	"a2 617a 82 e0 f8ff 6178 05", "a1 617a 9a00010000 00", "a1 616b 3bffffffffffffffff",
	"a1 6166 1bffffffffffffffff", "a1 6164 3bffffffffffffffff", "a1 f6 01", "a2 60 01 f6 02",
	// one-side OPTIONAL and unbound plans
	"a2 6175 01 616f 6178", "a1 616f 6178", "a2 6175 f6 616f 6178", "a2 6175 fa7fc00000 616f 6178", "a1 6175 01",
}

func decodePlans(t testing.TB) []*bind.Plan {
	return []*bind.Plan{plan(t, fuzzDefs), plan(t, strictDefs), plan(t, oneSideDefs), plan(t, unboundDefs)}
}

// FuzzDecode: no panic, whole rows only, a decoded row re-encodes to a
// payload that decodes to the same row, and the decoder agrees with the
// library decoder (the generic path, the previous decoder) as an oracle:
// the same verdict, the same error and the same row, and the direct walk
// never accepts what the library refuses.
func FuzzDecode(f *testing.F) {
	for _, h := range fuzzSeeds {
		b, err := hex.DecodeString(stripSpaces(h))
		if err != nil {
			f.Fatalf("seed %q: %v", h, err)
		}
		f.Add(b)
	}
	type fixture struct {
		p  *bind.Plan
		d  *Decoder
		e  *Encoder
		rv *wjson.Encoder
	}
	var fs []fixture
	for _, p := range decodePlans(f) {
		d, err := NewDecoder(p)
		if err != nil {
			f.Fatal(err)
		}
		fs = append(fs, fixture{p, d, NewEncoder(p), wjson.NewRowViewEncoder(p.Schema, true)})
	}
	f.Fuzz(func(t *testing.T, payload []byte) {
		for _, fx := range fs {
			checkDecode(t, fx.p, fx.d, fx.e, fx.rv, payload)
		}
	})
}

// decodeOne decodes payload with fn into a fresh builder and returns the
// row count, the error and the row view of the finished batch.
func decodeOne(t *testing.T, p *bind.Plan, rv *wjson.Encoder, payload []byte, fn func([]byte, *rows.Builder) (int, error)) (int, string, error) {
	t.Helper()
	b := rows.NewBuilder(memory.NewGoAllocator(), p.Schema)
	defer b.Release()
	n, err := fn(payload, b)
	rec, ferr := b.NewRecordBatch()
	if ferr != nil {
		t.Fatal(ferr)
	}
	defer rec.Release()
	if int(rec.NumRows()) != n {
		t.Fatalf("rows %d vs %d", rec.NumRows(), n)
	}
	if n == 0 {
		return n, "", err
	}
	x, xerr := rv.AppendRow(nil, rec, 0)
	if xerr != nil {
		t.Fatal(xerr)
	}
	return n, string(x), err
}

func checkDecode(t *testing.T, p *bind.Plan, d *Decoder, e *Encoder, rv *wjson.Encoder, payload []byte) {
	n, row, err := decodeOne(t, p, rv, payload, d.Decode)
	gn, grow, gerr := decodeOne(t, p, rv, payload, d.DecodeGeneric)
	if n != gn || (err == nil) != (gerr == nil) {
		t.Fatalf("%x: decoder %d rows (%v), library %d rows (%v)", payload, n, err, gn, gerr)
	}
	if err != nil {
		a, b := err.(*values.Error), gerr.(*values.Error)
		if a.Code != b.Code || a.Msg != b.Msg || (a.Path != b.Path && a.Code != values.CodeUnexpectedField) {
			t.Fatalf("%x: decoder %v, library %v", payload, err, gerr)
		}
		// The direct walk alone must refuse too (it leaves the row to the
		// generic path).
		b2 := rows.NewBuilder(memory.NewGoAllocator(), p.Schema)
		defer b2.Release()
		if d.fast(payload, b2) {
			t.Fatalf("%x: the direct walk accepts what the library refuses (%v)", payload, gerr)
		}
		return
	}
	if row != grow {
		t.Fatalf("%x: decoder row\n%s\nlibrary row\n%s", payload, row, grow)
	}
	b := rows.NewBuilder(memory.NewGoAllocator(), p.Schema)
	defer b.Release()
	if _, err := d.Decode(payload, b); err != nil {
		t.Fatal(err)
	}
	rec, _ := b.NewRecordBatch()
	defer rec.Release()
	out, err := e.AppendRow(nil, rec, 0)
	if err != nil {
		t.Fatal(err)
	}
	// The encoder's output is canonical: the direct walk must take it.
	b2 := rows.NewBuilder(memory.NewGoAllocator(), p.Schema)
	defer b2.Release()
	if !d.fast(out, b2) {
		t.Fatalf("re-encoded %x: the direct walk leaves it to the library", out)
	}
	rec2, _ := b2.NewRecordBatch()
	defer rec2.Release()
	y, _ := rv.AppendRow(nil, rec2, 0)
	if row != string(y) {
		t.Fatalf("round trip\n%s\n%s", row, y)
	}
}

func stripSpaces(s string) string {
	out := make([]byte, 0, len(s))
	for i := 0; i < len(s); i++ {
		if s[i] != ' ' {
			out = append(out, s[i])
		}
	}
	return string(out)
}
