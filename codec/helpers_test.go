package codec

import (
	"testing"
	"time"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/memory"

	"github.com/herald-gateway/herald/codec/catalog"
	"github.com/herald-gateway/herald/codec/values"
	wjson "github.com/herald-gateway/herald/codec/wire/json"
)

func compileDefs(t testing.TB, defs, name string) *Codec {
	t.Helper()
	cat := catalog.New()
	if _, err := cat.Exec(defs); err != nil {
		t.Fatal(err)
	}
	c, err := Compile(cat, name, Options{Now: func() time.Time { return time.Date(2026, 12, 2, 0, 0, 0, 0, time.UTC) }})
	if err != nil {
		t.Fatal(err)
	}
	return c
}

// decodeView decodes a payload and returns its row view, or "CODE".
func decodeView(t testing.TB, c *Codec, payload []byte) string {
	t.Helper()
	b := c.NewBuilder(memory.NewGoAllocator())
	defer b.Release()
	_, err := c.NewDecoder().Decode(payload, b)
	rec, ferr := b.NewRecordBatch()
	if ferr != nil {
		t.Fatal(ferr)
	}
	defer rec.Release()
	if err != nil {
		if rec.NumRows() != 0 {
			t.Fatal("failed decode left rows")
		}
		return string(values.CodeOf(err))
	}
	out, err := wjson.NewRowViewEncoder(c.Schema, true).AppendRow(nil, rec, 0)
	if err != nil {
		t.Fatal(err)
	}
	return string(out)
}

// fromView builds a one-row batch from a row view line.
func fromView(t testing.TB, c *Codec, line string) arrow.RecordBatch {
	t.Helper()
	b := c.NewBuilder(memory.NewGoAllocator())
	defer b.Release()
	if _, err := wjson.NewRowViewDecoder(c.Schema).Decode([]byte(line), b); err != nil {
		t.Fatalf("row view %s: %v", line, err)
	}
	rec, err := b.NewRecordBatch()
	if err != nil {
		t.Fatal(err)
	}
	return rec
}

// encodeView encodes a row view line; it returns the payload or the code.
func encodeView(t testing.TB, c *Codec, line string) ([]byte, string) {
	t.Helper()
	rec := fromView(t, c, line)
	defer rec.Release()
	out, err := c.Encoder.AppendRow(nil, rec, 0)
	if err != nil {
		return nil, string(values.CodeOf(err))
	}
	return out, ""
}
