package payload

import (
	"context"
	"strings"
	"testing"

	"github.com/herald-gateway/herald/codec"
	"github.com/herald-gateway/herald/codec/catalog"
)

// compile builds the typed payload of event type r from defs, whose
// codec c decodes WIRE JSON, with history h (nil: none).
func compile(t *testing.T, defs string, h *History) *TypedPayload {
	t.Helper()
	cat := catalog.New()
	if _, err := cat.Exec(defs); err != nil {
		t.Fatal(err)
	}
	p, err := New("r", nil, "c", NewCache(cat, false, codec.Options{}, h))
	if err != nil {
		t.Fatal(err)
	}
	return p
}

const (
	defsV1 = `CREATE SCHEMA reading (station STRING, temperature F64, gone I32 OPTIONAL);
CREATE WIRE JSON SCHEMA w MODE STRICT (station string, temperature number, gone integer OPTIONAL);
CREATE CODEC c FROM WIRE JSON SCHEMA w TO SCHEMA reading;`
	defsV2 = `CREATE SCHEMA reading (station STRING, temperature STRING OPTIONAL, added BOOL OPTIONAL);
CREATE WIRE JSON SCHEMA w MODE STRICT (station string, temperature string OPTIONAL, added boolean OPTIONAL);
CREATE CODEC c FROM WIRE JSON SCHEMA w TO SCHEMA reading;`
)

// TestProjectionByName checks the rule of the registry of past schemas:
// a stored row is decoded with the schema that wrote it and projected
// onto the current schema by field name. The row view keeps each value
// as its writer stored it, a field the writer did not have is null, and
// a field only the writer had is left out; a codec's view reads a field
// whose stored type it cannot read as null. A row whose writer the
// history does not know is read under the current schema as it is, which
// fails after a breaking change (the caller then delivers a null payload
// with the reason).
func TestProjectionByName(t *testing.T) {
	p1 := compile(t, defsV1, nil)
	rec, err := p1.Decode(context.Background(), []byte(`{"station":"s1","temperature":21.5,"gone":3}`))
	if err != nil {
		t.Fatal(err)
	}
	row, err := p1.EncodeRow(nil, rec, 0)
	rec.Release()
	if err != nil {
		t.Fatal(err)
	}
	ct := p1.ContentType()

	unknown := compile(t, defsV2, NewHistory())
	if out, err := unknown.Row().AppendPayload(nil, row, ct); err == nil || !strings.Contains(err.Error(), "temperature") {
		t.Fatalf("unknown writer: %s %v, want the breaking field's error", out, err)
	}

	h := NewHistory()
	if fp := h.Add("r", p1.Schema()); fp != p1.Fingerprint().ID64 {
		t.Fatalf("History.Add fingerprint %s, want %s", fp, p1.Fingerprint().ID64)
	}
	p2 := compile(t, defsV2, h)
	out, err := p2.Row().AppendPayload(nil, row, ct)
	if err != nil || string(out) != `{"station":"s1","temperature":21.5,"added":null}` {
		t.Fatalf("row view of the old row: %s %v", out, err)
	}
	v, ok := p2.View("c")
	if !ok {
		t.Fatal("no view c")
	}
	out, err = v.AppendPayload(nil, row, ct)
	if err != nil || string(out) != `{"station":"s1"}` {
		t.Fatalf("codec view of the old row: %s %v", out, err)
	}
	// A row of the current schema reads directly.
	rec, err = p2.Decode(context.Background(), []byte(`{"station":"s2","temperature":"warm"}`))
	if err != nil {
		t.Fatal(err)
	}
	row2, _ := p2.EncodeRow(nil, rec, 0)
	rec.Release()
	if out, err := p2.Row().AppendPayload(nil, row2, p2.ContentType()); err != nil || string(out) != `{"station":"s2","temperature":"warm","added":null}` {
		t.Fatalf("row view of a new row: %s %v", out, err)
	}
}
