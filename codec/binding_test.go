package codec

import (
	"encoding/hex"
	"testing"

	"github.com/apache/arrow-go/v18/arrow/memory"
)

// decodeErr decodes payload through c and returns the row view or the
// error's text; for a StoredDecoder it checks that DecodeStored agrees.
func decodeErr(t *testing.T, c *Codec, payload []byte) string {
	t.Helper()
	b := c.NewBuilder(memory.NewGoAllocator())
	defer b.Release()
	dec := c.NewDecoder()
	_, err := dec.Decode(payload, b)
	rec, ferr := b.NewRecordBatch()
	if ferr != nil {
		t.Fatal(ferr)
	}
	defer rec.Release()
	got := ""
	if err != nil {
		if rec.NumRows() != 0 {
			t.Fatal("a failed decode left a row")
		}
		got = err.Error()
	} else {
		got = decodeView(t, c, payload)
	}
	if sd, ok := dec.(StoredDecoder); ok {
		if _, serr := sd.DecodeStored(nil, payload); (serr == nil) != (err == nil) || serr != nil && serr.Error() != err.Error() {
			t.Errorf("DecodeStored: %v, Decode: %v", serr, err)
		}
	}
	return got
}

// TestOptionalOnOneSide checks the rule "Append OPTIONAL to either an
// internal schema field or a wire schema field when the value may be
// absent" where the two sides disagree: a decode fails only when a
// required internal value is actually missing, and an encode only when a
// required wire value is null ("required null fields fail encoding").
// Field a is OPTIONAL on the wire only, c in the internal schema only, e
// has no wire field.
func TestOptionalOnOneSide(t *testing.T) {
	const defs = `CREATE SCHEMA s (a U32, c STRING OPTIONAL, e U8 OPTIONAL);
CREATE WIRE JSON SCHEMA w (a integer OPTIONAL, c string);
CREATE WIRE CBOR SCHEMA w (a integer OPTIONAL, c string);
CREATE WIRE AVRO SCHEMA w (a LONG OPTIONAL, c STRING);
CREATE CODEC j FROM WIRE JSON SCHEMA w TO SCHEMA s;
CREATE CODEC c FROM WIRE CBOR SCHEMA w TO SCHEMA s;
CREATE CODEC a FROM WIRE AVRO SCHEMA w TO SCHEMA s;`
	const ok = `{"a":1,"c":"x","e":null}`
	missing := "field a: required field is missing (it is OPTIONAL in the wire schema only)"
	tests := []struct {
		codec   string
		payload string // hex for CBOR and AVRO
		want    string
	}{
		{"j", `{"a":1,"c":"x"}`, ok},
		{"j", `{"c":"x"}`, missing},
		{"j", `{"a":null,"c":"x"}`, "field a: null in a required field (it is OPTIONAL in the wire schema only) (at byte 9)"},
		{"c", "a2616101616361" + "78", ok}, // {"a": 1, "c": "x"}
		{"c", "a1616361" + "78", missing},  // {"c": "x"}
		{"c", "a26161f6616361" + "78", "field a: null (or a non-finite float, read as null) in a required field (it is OPTIONAL in the wire schema only)"},
		{"a", "020202" + "78", ok}, // a: union branch 1, 1; c: "x"
		{"a", "0002" + "78", "field a: null in a required field (it is OPTIONAL in the wire schema only)"},
	}
	for _, tt := range tests {
		c := compileDefs(t, defs, tt.codec)
		payload := []byte(tt.payload)
		if tt.codec != "j" {
			var err error
			if payload, err = hex.DecodeString(tt.payload); err != nil {
				t.Fatal(err)
			}
		}
		if got := decodeErr(t, c, payload); got != tt.want {
			t.Errorf("%s %s:\n got %s\nwant %s", tt.codec, tt.payload, got, tt.want)
		}
	}
	for _, name := range []string{"j", "c", "a"} {
		c := compileDefs(t, defs, name)
		rec := fromView(t, c, `{"a":1,"c":null,"e":7}`)
		_, err := c.Encoder.AppendRow(nil, rec, 0)
		rec.Release()
		if want := "field c: null in a field the wire schema requires (it is OPTIONAL in the internal schema only)"; err == nil || err.Error() != want {
			t.Errorf("%s: encoding a null into a required wire field: %v, want %s", name, err, want)
		}
		out, code := encodeView(t, c, `{"a":1,"c":"x","e":7}`)
		if code != "" {
			t.Fatalf("%s: %s", name, code)
		}
		if got := decodeView(t, c, out); got != ok {
			t.Errorf("%s: round trip %s, want %s", name, got, ok)
		}
	}
}

// TestUnboundRequiredField: the chapter's first codec binds three wire
// fields into the six-field internal schema notification. It compiles,
// encodes rows (the wire leaves the unbound fields out), and fails each
// decode with an error naming the first required field no wire field
// binds: the value is always missing there.
func TestUnboundRequiredField(t *testing.T) {
	const defs = `CREATE SCHEMA notification (
  user_id U32, created_at DATETIME, payload STRING OPTIONAL,
  cpu_last_64 ARRAY<F32, 64>, image ARRAY<F32, 3, 224, 224>, detections VEC<ARRAY<F32, 6>> OPTIONAL);
CREATE WIRE JSON SCHEMA notification_wire MODE STRICT (user_id integer, created_at string, payload string OPTIONAL);
CREATE WIRE CBOR SCHEMA notification_wire MODE LOOSE (user_id integer, created_at string, payload string OPTIONAL);
CREATE WIRE AVRO SCHEMA notification_wire MODE STRICT (user_id LONG, created_at STRING, payload STRING OPTIONAL);
CREATE CODEC j FROM WIRE JSON SCHEMA notification_wire TO SCHEMA notification ENCODE created_at AS RFC3339;
CREATE CODEC c FROM WIRE CBOR SCHEMA notification_wire TO SCHEMA notification ENCODE created_at AS RFC3339;
CREATE CODEC a FROM WIRE AVRO SCHEMA notification_wire TO SCHEMA notification ENCODE created_at AS RFC3339;`
	row := `{"user_id":7,"created_at":"2026-09-24T08:15:00Z","payload":"ready","cpu_last_64":[` + zeros(64) + `],"image":[` + nested(3, 224, 224) + `],"detections":null}`
	for _, tt := range []struct{ name, format, wire string }{
		{"j", "JSON", `{"user_id":7,"created_at":"2026-09-24T08:15:00Z","payload":"ready"}`},
		// {"user_id": 7, "created_at": "2026-09-24T08:15:00Z", "payload": "ready"}
		{"c", "CBOR", "a3" + "67757365725f6964" + "07" + "6a637265617465645f6174" + "74323032362d30392d32345430383a31353a30305a" + "677061796c6f6164" + "657265616479"},
		// 7, "2026-09-24T08:15:00Z", union branch 1, "ready"
		{"a", "AVRO", "0e" + "28323032362d30392d32345430383a31353a30305a" + "02" + "0a7265616479"},
	} {
		c := compileDefs(t, defs, tt.name)
		out, code := encodeView(t, c, row)
		if code != "" {
			t.Fatalf("%s: encode: %s", tt.name, code)
		}
		if tt.name != "j" {
			out = []byte(hex.EncodeToString(out))
		}
		if string(out) != tt.wire {
			t.Errorf("%s: encoded %s, want %s", tt.name, out, tt.wire)
		}
		payload := []byte(tt.wire)
		if tt.name != "j" {
			payload, _ = hex.DecodeString(tt.wire)
		}
		if got, want := decodeErr(t, c, payload), "field cpu_last_64: required field is missing: wire "+tt.format+" schema notification_wire declares no field of that name, so no payload can supply it"; got != want {
			t.Errorf("%s: decode:\n got %s\nwant %s", tt.name, got, want)
		}
	}
}

func zeros(n int) string {
	s := "0"
	for i := 1; i < n; i++ {
		s += ",0"
	}
	return s
}

func nested(dims ...int) string {
	if len(dims) == 1 {
		return zeros(dims[0])
	}
	inner := "[" + nested(dims[1:]...) + "]"
	s := inner
	for i := 1; i < dims[0]; i++ {
		s += "," + inner
	}
	return s
}
