package codec

import (
	"encoding/hex"
	"strings"
	"testing"
)

func oneField(format, internal, wire string) string {
	opt := ""
	if strings.HasSuffix(internal, "OPTIONAL") {
		opt = " OPTIONAL"
	}
	return "CREATE SCHEMA s (x " + internal + "); CREATE WIRE " + format + " SCHEMA w (x " + wire + opt + "); CREATE CODEC c FROM WIRE " + format + " SCHEMA w TO SCHEMA s"
}

func unhex(t *testing.T, s string) []byte {
	t.Helper()
	b, err := hex.DecodeString(strings.ReplaceAll(s, " ", ""))
	if err != nil {
		t.Fatal(err)
	}
	return b
}

// TestGoldenBinary pins the CBOR and AVRO golden vectors (rows 11–15, 27,
// 28). The JSON rows (1–10, 16–26, 29–46) are pinned byte for
// byte in wire/json's TestVectors, SYSLOG's row 34 in wire/syslog's
// TestEncode; rows 47–49 belong to the JAQ-native and protobuf codecs.
func TestGoldenBinary(t *testing.T) {
	tests := []struct {
		row                 int
		format, internal, w string
		view                string // row view to encode ("" to skip)
		wire                string // expected payload hex, or error code
		decode              string // payload hex to decode ("" = wire)
		back                string // expected row view or code after decoding
	}{
		{11, "CBOR", "U64", "integer", `{"x":18446744073709551615}`, "a1 61 78 1b ffffffffffffffff", "", `{"x":18446744073709551615}`},
		{12, "CBOR", "I64", "integer", `{"x":-9223372036854775808}`, "a1 61 78 3b 7fffffffffffffff", "", `{"x":-9223372036854775808}`},
		{12, "CBOR", "I64", "integer", "", "", "a1 61 78 3b ffffffffffffffff", "OUT_OF_RANGE"},
		{27, "CBOR", "F32 OPTIONAL", "number", `{"x":"NaN"}`, "a1 61 78 fa 7fc00000", "", `{"x":null}`},
		{27, "CBOR", "F64", "number", `{"x":"-Infinity"}`, "a1 61 78 fb fff0000000000000", "", "NULL_VALUE"},
		{27, "CBOR", "F64 OPTIONAL", "number", `{"x":null}`, "a0", "", `{"x":null}`},
		{0, "CBOR", "BYTES", "bytes", `{"x":"/+8="}`, "a1 61 78 64 2f2b383d", "", `{"x":"/+8="}`},
		{0, "CBOR", "BYTES", "bytes", "", "", "a1 61 78 42 ffef", "TYPE_MISMATCH"},
		{0, "CBOR", "ARRAY<U8, 2>", "array", `{"x":[1,24]}`, "a1 61 78 82 01 1818", "", `{"x":[1,24]}`},
		{0, "CBOR", "U8", "integer", "", "", "a2 61 78 01 61 78 02", "DUPLICATE_FIELD"},
		{0, "CBOR", "U8", "integer", "", "", "a1 61 78 01 00", "TRAILING_DATA"},
		{0, "CBOR", "U8", "integer", "", "", "a1 61 78 f7", "SYNTAX"},
		{0, "CBOR", "U8", "integer", "", "", "a1 61 78 c1 01", "SYNTAX"},
		{0, "CBOR", "U8", "integer", "", "", "a1 01 01", "TYPE_MISMATCH"},
		{0, "CBOR", "U8", "integer", "", "", "a1 61 78 f9 3c00", "NOT_INTEGER"},
		{0, "CBOR", "DATETIME", "DATETIME", `{"x":"2026-09-24T08:15:00.123456789Z"}`, "a1 61 78 78 1e 323032362d30392d32345430383a31353a30302e3132333435363738395a", "", `{"x":"2026-09-24T08:15:00.123456789Z"}`},
		{0, "CBOR", "STRING", "string", "", "", "a1 61 78 62 c328", "INVALID_UTF8"},
		{0, "CBOR", "STRING", "string", "", "", "", "EMPTY_PAYLOAD"},
		{13, "AVRO", "I64", "LONG", `{"x":-9223372036854775808}`, "ff ff ff ff ff ff ff ff ff 01", "", `{"x":-9223372036854775808}`},
		{14, "AVRO", "U32", "LONG", `{"x":4294967295}`, "fe ff ff ff 1f", "", `{"x":4294967295}`},
		{14, "AVRO", "U32", "LONG", "", "", "80 80 80 80 20", "OUT_OF_RANGE"},
		{14, "AVRO", "U8", "INT", "", "", "01", "OUT_OF_RANGE"},
		// "A schemaful codec decodes every row it encodes back to the same
		// values: every integer width to its extremes"; WIRE AVRO "writes
		// an unsigned element of an ARRAY or VEC as an Avro long, so an
		// element above 9223372036854775807 fails to encode": only
		// elements. A single U64 travels as the long with its 64 bits.
		{0, "AVRO", "U64", "LONG", `{"x":18446744073709551615}`, "01", "", `{"x":18446744073709551615}`},
		{0, "AVRO", "U64", "LONG", `{"x":9223372036854775808}`, "ff ff ff ff ff ff ff ff ff 01", "", `{"x":9223372036854775808}`},
		{0, "AVRO", "U64", "LONG", `{"x":9223372036854775807}`, "fe ff ff ff ff ff ff ff ff 01", "", `{"x":9223372036854775807}`},
		{0, "AVRO", "U64 OPTIONAL", "LONG", `{"x":18446744073709551615}`, "02 01", "", `{"x":18446744073709551615}`},
		{15, "AVRO", "VEC<U64>", "ARRAY", `{"x":[9223372036854775808]}`, "UNENCODABLE", "", ""},
		{15, "AVRO", "VEC<U64>", "ARRAY", "", "", "02 01 00", "OUT_OF_RANGE"},
		{15, "AVRO", "VEC<U64>", "ARRAY", `{"x":[9223372036854775807]}`, "02 feffffffffffffffff01 00", "", `{"x":[9223372036854775807]}`},
		{28, "AVRO", "F32", "FLOAT", "", "", "01 00 c0 7f", `{"x":"NaN"}`},
		{0, "AVRO", "STRING OPTIONAL", "STRING", `{"x":"é"}`, "02 04 c3a9", "", `{"x":"é"}`},
		{0, "AVRO", "STRING OPTIONAL", "STRING", `{"x":null}`, "00", "", `{"x":null}`},
		{0, "AVRO", "STRING", "STRING", "", "", "04 c328", "INVALID_UTF8"},
		{0, "AVRO", "STRING", "STRING", "", "", "02 61 00", "TRAILING_DATA"},
		{0, "AVRO", "BYTES", "BYTES", `{"x":"/+8="}`, "04 ffef", "", `{"x":"/+8="}`},
		{0, "AVRO", "ARRAY<F32, 2, 1>", "ARRAY", `{"x":[[1],[2]]}`, "04 02 0000803f 00 02 00000040 00 00", "", `{"x":[[1],[2]]}`},
		{0, "AVRO", "ARRAY<F32, 2>", "ARRAY", "", "", "02 0000803f 00", "SHAPE"},
	}
	for _, tt := range tests {
		c := compileDefs(t, oneField(tt.format, tt.internal, tt.w), "c")
		payload := tt.decode
		if tt.view != "" {
			out, code := encodeView(t, c, tt.view)
			got := code
			if code == "" {
				got = hex.EncodeToString(out)
			}
			if want := strings.ReplaceAll(tt.wire, " ", ""); got != want {
				t.Errorf("row %d %s %s: encode %s = %s, want %s", tt.row, tt.format, tt.internal, tt.view, got, want)
			}
			if payload == "" {
				payload = got
			}
		}
		if tt.back == "" {
			continue
		}
		if got := decodeView(t, c, unhex(t, payload)); got != tt.back {
			t.Errorf("row %d %s %s: decode %s = %s, want %s", tt.row, tt.format, tt.internal, payload, got, tt.back)
		}
	}
}

// TestBatchContainers pins each format's batch container.
func TestBatchContainers(t *testing.T) {
	lines := []string{`{"x":1}`, `{"x":2}`}
	tests := []struct{ format, wire, want string }{
		{"JSON", "integer", `[{"x":1},{"x":2}]`},
		{"CBOR", "integer", "82a1617801a1617802"},
		{"AVRO", "LONG", "04020400"},
	}
	for _, tt := range tests {
		c := compileDefs(t, oneField(tt.format, "U8", tt.wire), "c")
		b := c.NewBuilder(nil)
		for _, l := range lines {
			rec := fromView(t, c, l)
			out, _ := c.Encoder.AppendRow(nil, rec, 0)
			rec.Release()
			if _, err := c.NewDecoder().Decode(out, b); err != nil {
				t.Fatal(err)
			}
		}
		rec, _ := b.NewRecordBatch()
		out, n, err := c.Batch.AppendBatch(nil, rec, []int{0, 1})
		rec.Release()
		b.Release()
		if err != nil || n != 2 {
			t.Fatal(err, n)
		}
		got := string(out)
		if tt.format != "JSON" {
			got = hex.EncodeToString(out)
		}
		if got != tt.want {
			t.Errorf("%s batch = %s, want %s", tt.format, got, tt.want)
		}
	}
}
