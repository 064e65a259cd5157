package catalog

import "testing"

// TestChapterCodecBinds checks the codec rule as the specification states
// it: "Append OPTIONAL to either an internal schema field or a wire schema
// field when the value may be absent", with no rule that every required
// internal field has a wire field or that both sides agree on OPTIONAL.
// The chapter's first codec binds its three-field wire schemas into the
// six-field internal schema notification (with the conversion rule the
// chapter declares next, "ENCODE created_at AS RFC3339", since "a JSON
// string wire field does not implicitly decode into an internal DATETIME
// field"); what the sides disagree on is decided per value at run time
// (package codec's tests).
func TestChapterCodecBinds(t *testing.T) {
	const chapter = `
CREATE IF NOT EXISTS SCHEMA notification (
  user_id U32,
  created_at DATETIME,
  payload STRING OPTIONAL,
  cpu_last_64 ARRAY<F32, 64>,
  image ARRAY<F32, 3, 224, 224>,
  detections VEC<ARRAY<F32, 6>> OPTIONAL
);
CREATE IF NOT EXISTS WIRE JSON SCHEMA notification_wire MODE STRICT (
  user_id integer,
  created_at string,
  payload string OPTIONAL
);
CREATE IF NOT EXISTS WIRE CBOR SCHEMA notification_wire MODE LOOSE (
  user_id integer,
  created_at string,
  payload string OPTIONAL
);
CREATE IF NOT EXISTS WIRE AVRO SCHEMA notification_wire MODE STRICT (
  user_id LONG,
  created_at STRING,
  payload STRING OPTIONAL
);
CREATE IF NOT EXISTS CODEC notification_codec
  FROM WIRE JSON SCHEMA notification_wire
  TO SCHEMA notification
  ENCODE created_at AS RFC3339;
CREATE CODEC notification_cbor FROM WIRE CBOR SCHEMA notification_wire TO SCHEMA notification ENCODE created_at AS RFC3339;
CREATE CODEC notification_avro FROM WIRE AVRO SCHEMA notification_wire TO SCHEMA notification ENCODE created_at AS RFC3339;
`
	c := New()
	mustExec(t, c, chapter)
	for _, n := range []string{"notification_codec", "notification_cbor", "notification_avro"} {
		p, err := c.Plan(n)
		if err != nil {
			t.Fatal(err)
		}
		var unbound []string
		for _, f := range p.Unbound() {
			unbound = append(unbound, f.Name)
		}
		if len(unbound) != 2 || unbound[0] != "cpu_last_64" || unbound[1] != "image" {
			t.Errorf("%s: unbound required fields %v, want [cpu_last_64 image]", n, unbound)
		}
	}
	// OPTIONAL on one side only binds, either way round
	mustExec(t, c, "ALTER WIRE JSON SCHEMA notification_wire ALTER FIELD payload DROP OPTIONAL, ALTER FIELD user_id SET OPTIONAL")
	p, err := c.Plan("notification_codec")
	if err != nil {
		t.Fatal(err)
	}
	for _, f := range p.Fields[:3] {
		want := map[string][2]bool{"user_id": {false, true}, "created_at": {false, false}, "payload": {true, false}}[f.Name]
		if f.Optional != want[0] || f.WireOptional != want[1] {
			t.Errorf("field %s: OPTIONAL internal %v, wire %v; want %v", f.Name, f.Optional, f.WireOptional, want)
		}
	}
}
