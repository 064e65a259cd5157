package bind

import (
	"testing"

	"github.com/herald-gateway/herald/codec/types"
)

func TestCompile(t *testing.T) {
	s := &types.Schema{Name: "s", Fields: []types.Field{
		{Name: "a", Type: types.Scalar(types.U8)},
		{Name: "n", Type: types.Scalar(types.String), Optional: true},
		{Name: "t", Type: types.Scalar(types.Datetime)},
	}}
	w := &types.WireSchema{Format: types.JSON, Name: "w", Fields: []types.WireField{
		{Name: "t", Type: types.WString},
		{Name: "extra", Type: types.WBytes, Optional: true},
		{Name: "a", Type: types.WInteger},
	}}
	c := &types.Codec{Name: "c", Format: types.JSON, Wire: "w", Schema: "s", RFC3339: []string{"t"}}
	p, err := Compile(c, s, w)
	if err != nil {
		t.Fatal(err)
	}
	if len(p.Fields) != 3 || p.Fields[1].Wire != -1 || len(p.WireOnly) != 1 || p.WireOnly[0].Type.Kind != types.Bytes {
		t.Fatalf("%+v", p)
	}
	if got := p.WireOrder; got[0] != 2 || got[1] != -1 || got[2] != 0 {
		t.Fatalf("wire order %v", got)
	}
	// an AVRO ARRAY needs an internal field to infer its items
	aw := &types.WireSchema{Format: types.AVRO, Name: "w", Fields: []types.WireField{
		{Name: "a", Type: types.ALong}, {Name: "t", Type: types.AString}, {Name: "v", Type: types.AArray, Optional: true},
	}}
	ac := &types.Codec{Name: "c", Format: types.AVRO, Wire: "w", Schema: "s", RFC3339: []string{"t"}}
	if _, err := Compile(ac, s, aw); err == nil || err.Error() != "codec c cannot bind field v (wire ARRAY OPTIONAL, internal none): an Avro ARRAY infers its items from the internal field, so it needs an internal field of the same name" {
		t.Fatal(err)
	}
}

func TestSyslogPlan(t *testing.T) {
	s := &types.Schema{Name: "ev", Fields: []types.Field{
		{Name: "message", Type: types.Scalar(types.String), Sensitive: true},
		{Name: "hostname", Type: types.Scalar(types.String), Optional: true},
	}}
	p, err := Compile(&types.Codec{Name: "c", Format: types.SYSLOG, Schema: "ev"}, s, nil)
	if err != nil {
		t.Fatal(err)
	}
	sp := p.Syslog
	if sp.Index[SyslogMessage] != 0 || sp.Index[SyslogHostname] != 1 || sp.Index[SyslogFacility] != -1 {
		t.Fatalf("%+v", sp)
	}
	if len(sp.EncodeMissing) != 2 || sp.EncodeMissing[0] != "facility" || sp.EncodeMissing[1] != "severity" {
		t.Fatalf("%v", sp.EncodeMissing)
	}
}
