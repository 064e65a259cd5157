package types

import (
	"testing"
)

func TestArrowMapping(t *testing.T) {
	f32 := Scalar(F32)
	tests := []struct {
		typ  Type
		text string
		arw  string
	}{
		{Scalar(U8), "U8", "uint8"},
		{Scalar(I64), "I64", "int64"},
		{Scalar(Bool), "BOOL", "bool"},
		{Scalar(String), "STRING", "utf8"},
		{Scalar(Bytes), "BYTES", "binary"},
		{Scalar(Datetime), "DATETIME", "timestamp[ns, tz=UTC]"},
		{ArrayOf(f32, 64), "ARRAY<F32, 64>", "fixed_size_list<item: float32>[64]"},
		{ArrayOf(f32, 2, 3), "ARRAY<F32, 2, 3>", "fixed_size_list<item: fixed_size_list<item: float32>[3]>[2]"},
		{ArrayOf(ArrayOf(f32, 3), 2), "ARRAY<F32, 2, 3>", "fixed_size_list<item: fixed_size_list<item: float32>[3]>[2]"},
		{VecOf(ArrayOf(f32, 6)), "VEC<ARRAY<F32, 6>>", "list<item: fixed_size_list<item: float32>[6]>"},
		{ArrayOf(VecOf(Scalar(String)), 4), "ARRAY<VEC<STRING>, 4>", "fixed_size_list<item: list<item: utf8>>[4]"},
	}
	for _, tt := range tests {
		if got := tt.typ.String(); got != tt.text {
			t.Errorf("String() = %q, want %q", got, tt.text)
		}
		if got := tt.typ.ArrowType().String(); got != tt.arw {
			t.Errorf("%s: ArrowType() = %q, want %q", tt.text, got, tt.arw)
		}
	}
}

func TestArrowNullability(t *testing.T) {
	s := &Schema{Name: "s", Fields: []Field{
		{Name: "a", Type: Scalar(U32)},
		{Name: "b", Type: VecOf(Scalar(F32)), Optional: true},
	}}
	as := s.ArrowSchema()
	if as.Field(0).Nullable || !as.Field(1).Nullable {
		t.Fatalf("nullability: %v", as)
	}
}

func TestValidate(t *testing.T) {
	tests := []struct {
		s    *Schema
		want string
	}{
		{&Schema{Name: "s"}, "schema s must declare at least one field"},
		{&Schema{Name: "s", Fields: []Field{{Name: "a", Type: Scalar(U8)}, {Name: "a", Type: Scalar(U8)}}}, "schema s declares field a twice"},
		{&Schema{Name: "s", Fields: []Field{{Name: "a", Type: Type{Kind: Array, Elem: &Type{Kind: U8}, Dims: []int{0}}}}}, "schema s field a: ARRAY axis length 0 is outside 1…2147483647"},
	}
	for _, tt := range tests {
		err := tt.s.Validate()
		if err == nil || err.Error() != tt.want {
			t.Errorf("Validate() = %v, want %q", err, tt.want)
		}
	}
}

// TestFNV1a32 pins protoarray's ids (the FNV-1a ids of docs/codecs.md,
// "Fingerprints").
func TestFNV1a32(t *testing.T) {
	tests := []struct{ in, want string }{
		{"{id:number,name:string}", "030d98ef"},
		{"{id:number,name:string,email:?string,score:?number=0}", "aafe8696"},
		{"{name:string,userId:?string}", "6817895b"},
		{"{né:string}", "698b58a5"},
	}
	for _, tt := range tests {
		if got := FNV1a32(tt.in); got != tt.want {
			t.Errorf("FNV1a32(%q) = %s, want %s", tt.in, got, tt.want)
		}
	}
	if got := SHA256x64("{id:number,name:string}"); got != "17ad5aba43b19ad4" {
		t.Errorf("SHA256x64 = %s", got)
	}
}

func TestQuote(t *testing.T) {
	tests := []struct{ in, want string }{
		{"user_id", "user_id"}, {"SCHEMA", "SCHEMA"}, {"a-b", "`a-b`"}, {"x`y", "`x``y`"}, {"1a", "`1a`"},
	}
	for _, tt := range tests {
		if got := Quote(tt.in); got != tt.want {
			t.Errorf("Quote(%q) = %q, want %q", tt.in, got, tt.want)
		}
	}
}

// TestSignatureExampleIDs: the schema-evolution rules compute a schema id
// over "its canonical form …, followed by the canonical form of every
// other entity it references by name", and the custom fingerprint gets
// "the signature, … which is the canonical form itself for a schema that
// references no other entity". Their example ids reproduce through
// Signature and FingerprintOf, and a referenced entity's canonical form
// changes the id.
func TestSignatureExampleIDs(t *testing.T) {
	v1 := Signature("{id:number,name:string}")
	v2 := Signature("{id:number,name:string,email:?string,score:?number=0}")
	if v1 != "{id:number,name:string}" {
		t.Fatalf("the signature of an entity without references is %q, want its canonical form", v1)
	}
	if fp := FingerprintOf(v1); fp.ID32 != "030d98ef" || fp.ID64 != "17ad5aba43b19ad4" {
		t.Errorf("V1: %+v, want ids 030d98ef and 17ad5aba43b19ad4", fp)
	}
	if fp := FingerprintOf(v2); fp.ID32 != "aafe8696" {
		t.Errorf("V2: %+v, want id aafe8696", fp)
	}
	user := "{name:string,address:@Address}"
	a1 := Signature(user, "{street:string}")
	a2 := Signature(user, "{street:string,city:?string}")
	if a1 != user+"\n{street:string}" {
		t.Fatalf("signature %q", a1)
	}
	if f1, f2 := FingerprintOf(a1), FingerprintOf(a2); f1.ID32 == f2.ID32 || f1.ID64 == f2.ID64 {
		t.Errorf("a change to Address kept the id of the User that references it: %+v", f1)
	}
}
