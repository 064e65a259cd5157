package store_test

import (
	"bytes"
	"encoding/hex"
	"strings"
	"testing"

	"github.com/herald-gateway/herald/codec/rows"
	"github.com/herald-gateway/herald/codec/store"
	wjson "github.com/herald-gateway/herald/codec/wire/json"
)

const fuzzSchema = `CREATE SCHEMA s (x U64 OPTIONAL, i I64 OPTIONAL, f F32 OPTIONAL, d F64 OPTIONAL, b BOOL OPTIONAL,
  s STRING OPTIONAL, y BYTES OPTIONAL, t DATETIME OPTIONAL, a ARRAY<U8, 2> OPTIONAL, v VEC<VEC<F32>> OPTIONAL, r I8)`

// FuzzDecode: no panic, no row left by a failed decode, and a decoded row
// encodes to a canonical item that decodes to the same row and encodes
// to the same bytes again. Lookup and AppendJSON never panic either.
func FuzzDecode(f *testing.F) {
	s := schema(f, fuzzSchema)
	for _, line := range []string{
		`{"r":0}`,
		`{"x":18446744073709551615,"i":-9223372036854775808,"f":"NaN","d":"-Infinity","b":true,"s":"é\u0000","y":"AAE=","t":"1677-09-21T00:12:43.145224192Z","a":[0,255],"v":[[1.5],[]],"r":-128}`,
		`{"t":"2262-04-11T23:47:16.854775807Z","r":127,"d":-0}`,
	} {
		f.Add(row(f, s, line))
	}
	for _, h := range []string{"", "a0", "a1617201", "bf617201ff", "a1617238ff", "a16172f6", "a2617201617201",
		"a261720161749903e9a10100", "a16176 99ffff", "a1617319ffff", "a1 6174 d903e9 a2 01 3b7fffffffffffffff 28 1a3b9ac9ff"} {
		b, _ := hex.DecodeString(strings.ReplaceAll(h, " ", ""))
		f.Add(b)
	}
	enc := store.NewEncoder(s)
	dec := store.NewDecoder(s, nil)
	f.Fuzz(func(t *testing.T, data []byte) {
		for _, f := range s.Fields {
			_, _, _ = store.Lookup(data, f.Name)
			_, _, _ = store.AppendJSON(nil, data, f.Name)
		}
		b := rows.NewBuilder(nil, s)
		defer b.Release()
		err := dec.Decode(data, b)
		rec, ferr := b.NewRecordBatch()
		if ferr != nil {
			t.Fatal(ferr)
		}
		defer rec.Release()
		if err != nil {
			if rec.NumRows() != 0 {
				t.Fatal("a failed decode left a row")
			}
			return
		}
		if rec.NumRows() != 1 {
			t.Fatalf("%d rows", rec.NumRows())
		}
		out, err := enc.AppendRow(nil, rec, 0)
		if err != nil {
			t.Fatal(err)
		}
		b2 := rows.NewBuilder(nil, s)
		defer b2.Release()
		if err := dec.Decode(out, b2); err != nil {
			t.Fatalf("re-decode: %v", err)
		}
		rec2, _ := b2.NewRecordBatch()
		defer rec2.Release()
		again, err := enc.AppendRow(nil, rec2, 0)
		if err != nil || !bytes.Equal(again, out) {
			t.Fatalf("not canonical: %x then %x (%v)", out, again, err)
		}
		x, _ := wjson.NewRowViewEncoder(s, true).AppendRow(nil, rec, 0)
		y, _ := wjson.NewRowViewEncoder(s, true).AppendRow(nil, rec2, 0)
		if !bytes.Equal(x, y) {
			t.Fatalf("%s vs %s", x, y)
		}
	})
}
