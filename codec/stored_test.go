package codec

import (
	"fmt"
	"math/rand/v2"
	"testing"

	"github.com/apache/arrow-go/v18/arrow/memory"

	"github.com/herald-gateway/herald/codec/store"
	"github.com/herald-gateway/herald/codec/types"
)

// The stored decode (StoredDecoder) against the batch path it replaces
// for one-record notifies: decode into a batch, then store.Encoder's
// AppendRow. Both must give the same bytes or the same error text, and
// StoredValue must give each field's value as the stored row holds it.

// storedLooseDefs adds what the fidelity schema lacks: LOOSE mode (an
// undeclared member skipped), a wire-only field, an internal-only
// optional column (always null) and a wire name that differs from
// nothing but its type.
const storedLooseDefs = `CREATE SCHEMA s (u U64 OPTIONAL, i I8 OPTIONAL, f F32 OPTIONAL, d F64 OPTIONAL, b BOOL OPTIONAL,
  s STRING, y BYTES OPTIONAL, t DATETIME OPTIONAL, a ARRAY<F32, 2, 3> OPTIONAL,
  v VEC<ARRAY<I16, 2>> OPTIONAL, w ARRAY<VEC<STRING>, 2> OPTIONAL, x VEC<BYTES> OPTIONAL, z I32 OPTIONAL);
CREATE WIRE JSON SCHEMA w MODE LOOSE (u integer OPTIONAL, i I8 OPTIONAL, f F32 OPTIONAL, d number OPTIONAL,
  b boolean OPTIONAL, s string, y bytes OPTIONAL, t string OPTIONAL, a array OPTIONAL, v array OPTIONAL,
  w array OPTIONAL, x array OPTIONAL, k integer OPTIONAL);
CREATE CODEC c FROM WIRE JSON SCHEMA w TO SCHEMA s ENCODE t AS RFC3339`

// storedViaBatch is today's path: the row Decode adds, encoded by the
// store encoder.
func storedViaBatch(c *Codec, enc *store.Encoder, payload []byte) ([]byte, error) {
	b := c.NewBuilder(memory.NewGoAllocator())
	defer b.Release()
	_, err := c.NewDecoder().Decode(payload, b)
	rec, ferr := b.NewRecordBatch()
	if ferr != nil {
		return nil, ferr
	}
	defer rec.Release()
	if err != nil {
		return nil, err
	}
	return enc.AppendRow(nil, rec, 0)
}

// checkStored compares both paths on one payload; dec is reused, as a
// notify worker reuses its decoder.
func checkStored(t testing.TB, c *Codec, enc *store.Encoder, dec StoredDecoder, payload []byte) (ok bool) {
	t.Helper()
	want, werr := storedViaBatch(c, enc, payload)
	prefix := []byte("prefix")
	got, gerr := dec.DecodeStored(prefix, payload)
	if string(got[:len(prefix)]) != "prefix" {
		t.Fatalf("%q: DecodeStored changed dst's bytes", payload)
	}
	got = got[len(prefix):]
	switch {
	case werr != nil || gerr != nil:
		if werr == nil || gerr == nil || werr.Error() != gerr.Error() {
			t.Fatalf("%q: errors differ\nbatch:  %v\nstored: %v", payload, werr, gerr)
		}
		if len(got) != 0 {
			t.Fatalf("%q: DecodeStored appended %d bytes with its error", payload, len(got))
		}
		return false
	case string(want) != string(got):
		t.Fatalf("%q: stored bytes differ\nbatch:  %x\nstored: %x", payload, want, got)
	}
	for k, f := range c.Schema.Fields {
		wantJ, found, werr := store.AppendJSON(nil, want, f.Name)
		if !found {
			t.Fatalf("%q: field %s not in the row", payload, f.Name)
		}
		gotJ, gerr := store.AppendItemJSON(nil, dec.StoredValue(k), f.Name)
		if fmt.Sprint(werr) != fmt.Sprint(gerr) || string(wantJ) != string(gotJ) {
			t.Fatalf("%q: field %s: StoredValue reads %s (%v), the row %s (%v)", payload, f.Name, gotJ, gerr, wantJ, werr)
		}
	}
	return true
}

func storedCodecs(t testing.TB) []*Codec {
	return []*Codec{
		compileDefs(t, fidelitySchema+";"+namedWire("JSON"), "c"),
		compileDefs(t, storedLooseDefs, "c"),
	}
}

// mutate returns a variant of payload: truncated, a byte changed, a
// byte inserted or a span dropped, to reach the decoder's errors.
func mutate(r *rand.Rand, payload []byte) []byte {
	p := append([]byte(nil), payload...)
	if len(p) == 0 {
		return p
	}
	at := r.IntN(len(p))
	const junk = `{}[]",:-+.0123456789eEtfnul\ ` + "\xff\x01"
	switch r.IntN(4) {
	case 0:
		return p[:at]
	case 1:
		p[at] = junk[r.IntN(len(junk))]
		return p
	case 2:
		return append(p[:at], append([]byte{junk[r.IntN(len(junk))]}, payload[at:]...)...)
	}
	end := min(len(p), at+1+r.IntN(12))
	return append(p[:at], p[end:]...)
}

// TestStoredDecodeMatchesBatch: the fidelity vectors (every type, its
// extremes, float bits, nulls, nested collections), encoded as WIRE JSON
// payloads, and mutations of them, decode to the same stored bytes or the
// same error on both paths.
func TestStoredDecodeMatchesBatch(t *testing.T) {
	c := storedCodecs(t)[0]
	enc := store.NewEncoder(c.Schema)
	dec, ok := c.NewDecoder().(StoredDecoder)
	if !ok {
		t.Fatal("the WIRE JSON decoder is not a StoredDecoder")
	}
	in := generate(c, types.JSON, 600, 23)
	defer in.Release()
	r := rand.New(rand.NewPCG(23, 5))
	var stored, refused int
	for i := 0; i < int(in.NumRows()); i++ {
		payload, err := c.Encoder.AppendRow(nil, in, i)
		if err != nil {
			t.Fatalf("row %d: encode: %v", i, err)
		}
		if !checkStored(t, c, enc, dec, payload) {
			t.Fatalf("row %d: refused", i)
		}
		stored++
		for range 8 {
			if checkStored(t, c, enc, dec, mutate(r, payload)) {
				stored++
			} else {
				refused++
			}
		}
	}
	if refused == 0 || stored < 600 {
		t.Fatalf("stored %d, refused %d: the mutations reach neither side", stored, refused)
	}
}

// storedSeeds are payloads for both codecs of storedCodecs: the LOOSE
// one's vectors and the decoder's error cases.
var storedSeeds = []string{
	`{"s":"x","u":18446744073709551615,"i":-128,"f":7.038531e-26,"d":5e-324,"b":true,"y":"/+8=","t":"2026-09-24T10:15:00.123456789+02:00"}`,
	`{"s":"","a":[[1,2,3],[4,5,6]],"v":[[1,2],[-3,4]],"w":[[],["a","b"]],"x":["","AA==","AAA="]}`,
	`{"s":"é\ud83d\ude00","k":5,"zz":{"q":[1,{"r":null}]}}`, `{"s":"a","k":1.5}`, `{"s":null}`, `{}`,
	`{"s":"a","a":[[1,2,3]]}`, `{"s":"a","a":[1,2,3,4,5,6]}`, `{"s":"a","a":[[1,2,3],[4,5,6,7]]}`,
	`{"s":"a","a":[[1,2,3],[4,5,null]]}`, `{"s":"a","v":[[1]]}`, `{"s":"a","v":[[1,2,3]]}`, `{"s":"a","i":-129}`,
	`{"s":"a","u":-1}`, `{"s":"a","u":1.0}`, `{"s":"a","f":3.4028236e38}`, `{"s":"a","f":-0.0}`, `{"s":"a","d":1e400}`,
	`{"s":"a","y":"AA"}`, `{"s":"a","y":"AB=="}`, `{"s":"a","t":"2026-09-24T10:15:00,5Z"}`,
	`{"s":"a","t":"1677-09-21T00:12:43.145224191Z"}`, `{"s":"\ud800"}`, "{\"s\":\"\xff\"}", "{\"s\":\"\x01\"}",
	`{"s":"\x"}`, `{"s":"\u12"}`, `{"s":"a","u":1,"u":2}`, `{"s":"a","zz":1,"zz":2}`, `{"s":"a"} x`,
	`{"s":"a"}{"s":"b"}`, `[1]`, ``, ` `, `{"s":"a","u":01}`, `{"s":"a","b":nul}`, `{"s":"a","w":[["x"],null]}`,
	`{"s":"a","x":[]}`, `{"s":"a","v":[]}`, `{"s":"a","z":1}`, `{"s":"a",}`, `{"s" "a"}`, `{"s":"a"`,
	`{"u8":0}`, `{"u8":255,"zz":1}`,
}

// FuzzStoredDecode compares the stored decode with the batch path on
// arbitrary payloads, for a STRICT codec over every type and a LOOSE one
// with wire-only and internal-only fields: the same bytes or the same
// error text.
func FuzzStoredDecode(f *testing.F) {
	cs := storedCodecs(f)
	for _, s := range storedSeeds {
		f.Add([]byte(s))
	}
	in := generate(cs[0], types.JSON, 8, 3)
	for i := 0; i < int(in.NumRows()); i++ {
		payload, err := cs[0].Encoder.AppendRow(nil, in, i)
		if err != nil {
			f.Fatal(err)
		}
		f.Add(payload)
	}
	in.Release()
	encs := make([]*store.Encoder, len(cs))
	decs := make([]StoredDecoder, len(cs))
	for i, c := range cs {
		encs[i] = store.NewEncoder(c.Schema)
		decs[i] = c.NewDecoder().(StoredDecoder)
	}
	f.Fuzz(func(t *testing.T, payload []byte) {
		for i, c := range cs {
			checkStored(t, c, encs[i], decs[i], payload)
		}
	})
}
