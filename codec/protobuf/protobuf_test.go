package protobuf

import (
	"encoding/hex"
	"strings"
	"testing"

	"github.com/herald-gateway/herald/codec/jaq/formats"
	"github.com/herald-gateway/herald/codec/resource"
	"github.com/herald-gateway/herald/codec/types"
	"github.com/herald-gateway/herald/codec/values"
)

const testProto = `syntax = "proto3";
package p;
import "google/protobuf/struct.proto";
import "google/protobuf/wrappers.proto";
message M {
  double d = 1;
  float f = 2;
  int32 i = 3;
  repeated double ds = 4;
  map<int32, string> m = 5;
  google.protobuf.Struct st = 6;
  google.protobuf.Int32Value w = 7;
  optional double od = 8;
  E e = 9;
  N n = 10;
}
message N { double d = 1; }
enum E { Z = 0; ONE = 1; }
message B { repeated M ms = 1; }
`

func testFormat(t testing.TB) *Format {
	t.Helper()
	set := resource.NewSet()
	if err := set.Add("r", 1, resource.Files{"m.proto": []byte(testProto)}); err != nil {
		t.Fatal(err)
	}
	s, err := Build(set, &types.Proto{Resource: "r", Version: 1, Message: "p.M", BatchMessage: "p.B"}, false)
	if err != nil {
		t.Fatal(err)
	}
	return NewFormat(s)
}

func view(t *testing.T, f *Format, payload []byte) string {
	t.Helper()
	var out string
	err := f.Read(payload, func(v any) error {
		b, err := formats.For(types.JSON).Append(nil, v, formats.Lexical{})
		out = string(b)
		return err
	})
	if err != nil {
		return "error[" + string(values.CodeOf(err)) + "] " + err.Error()
	}
	return out
}

// TestView pins the JSON view: default values absent (a zero of either
// sign included, vector 49), explicit presence kept, well-known types in
// their JSON form, enums by name, map keys as text.
func TestView(t *testing.T) {
	f := testFormat(t)
	tests := []struct{ in, want string }{
		{`{"d": -0.0, "f": 0, "i": 0, "ds": [-0.0, 1], "od": -0.0, "n": {"d": -0.0}}`, `{"ds": [-0.0, 1.0], "n": {}, "od": -0.0}`},
		{`{"m": {"2": "x"}, "st": {"a": [1, "b"]}, "w": 0, "e": "ONE", "f": 0.1}`, `{"e": "ONE", "f": 0.1, "m": {"2": "x"}, "st": {"a": [1, "b"]}, "w": 0}`},
		{`{"e": 7}`, `{"e": 7}`},
	}
	for _, tt := range tests {
		var v any
		if err := formats.For(types.JSON).Read([]byte(tt.in), func(x any) error { v = x; return nil }); err != nil {
			t.Fatal(err)
		}
		payload, err := f.Append(nil, v, nil)
		if err != nil {
			t.Fatalf("%s: %v", tt.in, err)
		}
		if got := view(t, f, payload); got != tt.want {
			t.Errorf("%s:\n got %s\nwant %s", tt.in, got, tt.want)
		}
	}
	// a -0.0 another writer put on the wire reads as absent too
	if got := view(t, f, []byte{0x09, 0, 0, 0, 0, 0, 0, 0, 0x80}); got != "{}" {
		t.Errorf("-0 on the wire: %s", got)
	}
	if _, err := f.Append(nil, map[string]any{"i": 4294967296}, nil); err == nil || strings.Contains(err.Error(), "4294967296") {
		t.Errorf("range: %v", err)
	}
}

// FuzzRead: any payload either reads into a view that writes back to a
// message with the same view, or fails with a typed error.
func FuzzRead(f *testing.F) {
	for _, h := range []string{"", "0900000000000000" + "80", "0d9a99993d" + "1801", "2a050801120178", "4a00", "52020801"} {
		b, _ := hex.DecodeString(h)
		f.Add(b)
	}
	format := testFormat(f)
	f.Fuzz(func(t *testing.T, payload []byte) {
		var v any
		err := format.Read(payload, func(x any) error { v = x; return nil })
		if err != nil {
			if values.CodeOf(err) == "" {
				t.Fatalf("untyped error %v", err)
			}
			return
		}
		out, err := format.Append(nil, v, nil)
		if err != nil {
			return // a NaN, or a value protojson refuses, has no JSON form
		}
		first := view(t, format, out)
		again, _ := format.Append(nil, v, nil)
		if view(t, format, again) != first {
			t.Fatalf("view not stable: %s", first)
		}
	})
}
