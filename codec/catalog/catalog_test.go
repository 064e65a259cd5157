package catalog

import (
	"strings"
	"testing"

	"github.com/herald-gateway/herald/codec/ddl"
	"github.com/herald-gateway/herald/codec/types"
)

const base = `
CREATE SCHEMA notification (
  user_id U32,
  created_at DATETIME,
  payload STRING OPTIONAL
);
CREATE WIRE JSON SCHEMA notification_wire MODE STRICT (
  user_id integer,
  created_at string,
  payload string OPTIONAL
);
CREATE CODEC notification_codec
  FROM WIRE JSON SCHEMA notification_wire
  TO SCHEMA notification
  ENCODE created_at AS RFC3339;
`

func mustExec(t *testing.T, c *Catalog, src string) []Result {
	t.Helper()
	res, err := c.Exec(src)
	if err != nil {
		t.Fatalf("Exec: %v", err)
	}
	return res
}

func show(t *testing.T, c *Catalog) string {
	t.Helper()
	var parts []string
	for _, k := range c.Keys() {
		s, _ := c.ShowCreate(k)
		parts = append(parts, s)
	}
	return strings.Join(parts, "\n")
}

// TestShowCreateRoundTrip: every statement form renders canonically and
// parse → SHOW CREATE → parse is the identity.
func TestShowCreateRoundTrip(t *testing.T) {
	tests := []struct{ src, want string }{
		{
			"create if not exists schema notification (user_id u32, created_at DATETIME, payload STRING OPTIONAL, cpu_last_64 ARRAY<F32,64>, image ARRAY<F32, 3, 224, 224>, detections VEC<ARRAY<F32, 6>> OPTIONAL)",
			"CREATE SCHEMA notification (\n  user_id U32,\n  created_at DATETIME,\n  payload STRING OPTIONAL,\n  cpu_last_64 ARRAY<F32, 64>,\n  image ARRAY<F32, 3, 224, 224>,\n  detections VEC<ARRAY<F32, 6>> OPTIONAL\n);",
		},
		{
			"CREATE SCHEMA `odd name` (`select` ARRAY<VEC<STRING>, 4> SENSITIVE OPTIONAL, `a``b` ARRAY<ARRAY<BYTES, 3>, 2>, schema BOOL)",
			"CREATE SCHEMA `odd name` (\n  select ARRAY<VEC<STRING>, 4> OPTIONAL SENSITIVE,\n  `a``b` ARRAY<BYTES, 2, 3>,\n  schema BOOL\n);",
		},
		{
			"CREATE WIRE CBOR SCHEMA w MODE LOOSE (a INTEGER, b U64, c DATETIME OPTIONAL, d bytes, e Array)",
			"CREATE WIRE CBOR SCHEMA w MODE LOOSE (\n  a integer,\n  b U64,\n  c DATETIME OPTIONAL,\n  d bytes,\n  e array\n);",
		},
		{
			"CREATE WIRE JSON SCHEMA w (a number)",
			"CREATE WIRE JSON SCHEMA w MODE STRICT (\n  a number\n);",
		},
		{
			"CREATE WIRE AVRO SCHEMA w MODE STRICT (a long, b STRING OPTIONAL, c array, d bytes, e float, f double, g int, h boolean)",
			"CREATE WIRE AVRO SCHEMA w MODE STRICT (\n  a LONG,\n  b STRING OPTIONAL,\n  c ARRAY,\n  d BYTES,\n  e FLOAT,\n  f DOUBLE,\n  g INT,\n  h BOOLEAN\n);",
		},
	}
	for _, tt := range tests {
		c := New()
		mustExec(t, c, tt.src)
		got := show(t, c)
		if got != tt.want {
			t.Errorf("SHOW CREATE of %q\n got: %s\nwant: %s", tt.src, got, tt.want)
			continue
		}
		c2 := New()
		mustExec(t, c2, got)
		if again := show(t, c2); again != got {
			t.Errorf("round trip changed:\n%s\n%s", got, again)
		}
	}
}

func TestCodecForms(t *testing.T) {
	c := New()
	mustExec(t, c, base+`
CREATE SCHEMA syslog_event (facility U8, severity U8, message STRING, timestamp DATETIME OPTIONAL SENSITIVE);
CREATE CODEC syslog_codec FROM SYSLOG TO SCHEMA syslog_event;
CREATE IF NOT EXISTS CODEC syslog_codec FROM SYSLOG TO SCHEMA nothing;
`)
	got, _ := c.ShowCreate(Key{Kind: ddl.KindCodec, Name: "notification_codec"})
	want := "CREATE CODEC notification_codec\n  FROM WIRE JSON SCHEMA notification_wire\n  TO SCHEMA notification\n  ENCODE created_at AS RFC3339;"
	if got != want {
		t.Errorf("got %s", got)
	}
	got, _ = c.ShowCreate(Key{Kind: ddl.KindCodec, Name: "syslog_codec"})
	if want := "CREATE CODEC syslog_codec\n  FROM SYSLOG\n  TO SCHEMA syslog_event;"; got != want {
		t.Errorf("got %s", got)
	}
	res := mustExec(t, c, "SHOW CREATE CODEC syslog_codec; SHOW CREATE WIRE JSON SCHEMA notification_wire")
	if res[0].Text != got || !strings.HasPrefix(res[1].Text, "CREATE WIRE JSON SCHEMA notification_wire MODE STRICT") {
		t.Errorf("SHOW results %q %q", res[0].Text, res[1].Text)
	}
}

func TestAlterOperations(t *testing.T) {
	tests := []struct{ alter, want string }{
		{
			"ALTER SCHEMA notification ADD FIELD note STRING OPTIONAL, RENAME FIELD payload TO body, ALTER FIELD body SET SENSITIVE",
			"CREATE SCHEMA notification (\n  user_id U32,\n  created_at DATETIME,\n  body STRING OPTIONAL SENSITIVE,\n  note STRING OPTIONAL\n);",
		},
		{
			// each operation sees the previous one
			"ALTER SCHEMA notification ADD FIELD x U8, RENAME FIELD x TO y, ALTER FIELD y SET TYPE VEC<U8>, ALTER FIELD y SET OPTIONAL, ALTER FIELD y SET SENSITIVE, ALTER FIELD y DROP SENSITIVE, ALTER FIELD y DROP OPTIONAL, DROP FIELD y, ALTER FIELD payload DROP OPTIONAL, ALTER FIELD payload SET OPTIONAL",
			"CREATE SCHEMA notification (\n  user_id U32,\n  created_at DATETIME,\n  payload STRING OPTIONAL\n);",
		},
	}
	for _, tt := range tests {
		c := New()
		mustExec(t, c, "CREATE SCHEMA notification (user_id U32, created_at DATETIME, payload STRING OPTIONAL)")
		mustExec(t, c, tt.alter)
		got, _ := c.ShowCreate(Key{Kind: ddl.KindSchema, Name: "notification"})
		if got != tt.want {
			t.Errorf("%s\n got: %s\nwant: %s", tt.alter, got, tt.want)
		}
	}
	c := New()
	mustExec(t, c, base)
	mustExec(t, c, "ALTER WIRE JSON SCHEMA notification_wire ADD FIELD note string OPTIONAL, ALTER FIELD note SET TYPE bytes, RENAME FIELD note TO blob; ALTER WIRE JSON SCHEMA notification_wire MODE LOOSE")
	got, _ := c.ShowCreate(Key{Kind: ddl.KindWire, Format: types.JSON, Name: "notification_wire"})
	if want := "CREATE WIRE JSON SCHEMA notification_wire MODE LOOSE (\n  user_id integer,\n  created_at string,\n  payload string OPTIONAL,\n  blob bytes OPTIONAL\n);"; got != want {
		t.Errorf("got %s", got)
	}
}

func TestErrors(t *testing.T) {
	tests := []struct{ src, want string }{
		{"CREATE SCHEMA notification (a U8)", "1:1: SCHEMA notification already exists (use CREATE IF NOT EXISTS, or ALTER it)"},
		{"CREATE SCHEMA s (a U8, a U16)", "1:1: schema s declares field a twice"},
		{"CREATE CODEC notification_codec FROM SYSLOG TO SCHEMA notification", "1:1: CODEC notification_codec already exists (DROP it first, in the same transaction)"},
		{"ALTER SCHEMA nope ADD FIELD a U8", "1:1: SCHEMA nope does not exist"},
		{"ALTER SCHEMA notification DROP FIELD nope", "1:27: DROP FIELD nope: schema notification has no field nope"},
		{"ALTER SCHEMA notification ADD FIELD user_id U8", "1:27: ADD FIELD user_id U8: schema notification already has a field user_id"},
		{"ALTER SCHEMA notification RENAME FIELD payload TO user_id", "1:27: RENAME FIELD payload TO user_id: schema notification already has a field user_id"},
		{"CREATE SCHEMA one (a U8); ALTER SCHEMA one DROP FIELD a", "1:44: DROP FIELD a: schema one must retain at least one field"},
		{"DROP SCHEMA notification", "1:1: codec notification_codec uses SCHEMA notification, which does not exist: drop or recreate the codec too (change a codec and its schemas together in one BEGIN … COMMIT)"},
		{"DROP WIRE CBOR SCHEMA notification_wire", "1:1: WIRE CBOR SCHEMA notification_wire does not exist"},
		{"ALTER SCHEMA notification ALTER FIELD user_id SET TYPE F64", "1:1: codec notification_codec cannot bind field user_id (wire integer, internal F64): a JSON integer binds only U8…U64 and I8…I64 (change a codec and its schemas together in one BEGIN … COMMIT)"},
		{"BEGIN;\nDROP SCHEMA notification;\nCOMMIT", "2:1: codec notification_codec uses SCHEMA notification, which does not exist: drop or recreate the codec too"},
		{"BEGIN; BEGIN", "1:8: BEGIN inside the transaction begun at 1:1: expected COMMIT or ROLLBACK first"},
		{"COMMIT", "1:1: COMMIT without BEGIN"},
		{"ROLLBACK", "1:1: ROLLBACK without BEGIN"},
		{"BEGIN; DROP CODEC notification_codec", "1:1: BEGIN without COMMIT: expected COMMIT before the end of input; nothing of the transaction was applied"},
		{"SHOW CREATE CODEC nope", "1:1: CODEC nope does not exist"},
		{"CREATE SCHEMA t (d DATETIME); CREATE WIRE JSON SCHEMA t (d string); CREATE CODEC c FROM WIRE JSON SCHEMA t TO SCHEMA t", "1:69: codec c cannot bind field d (wire string, internal DATETIME): a string wire field binds DATETIME only with ENCODE d AS RFC3339"},
		{"CREATE SCHEMA t (d DATETIME); CREATE WIRE JSON SCHEMA t (d DATETIME); CREATE CODEC c FROM WIRE JSON SCHEMA t TO SCHEMA t ENCODE d AS RFC3339", "1:71: codec c cannot bind field d (wire DATETIME, internal DATETIME): an exact DATETIME wire field already carries RFC 3339 text: remove the ENCODE rule"},
		{"CREATE SCHEMA t (d U8); CREATE WIRE JSON SCHEMA t (d U16); CREATE CODEC c FROM WIRE JSON SCHEMA t TO SCHEMA t", "1:60: codec c cannot bind field d (wire U16, internal U8): an exact wire type binds only the internal type of the same name (U16)"},
		{"CREATE SCHEMA t (d BYTES); CREATE WIRE JSON SCHEMA t (d string); CREATE CODEC c FROM WIRE JSON SCHEMA t TO SCHEMA t", "1:66: codec c cannot bind field d (wire string, internal BYTES): a string wire field cannot bind BYTES: declare the wire field as bytes (padded base64 text)"},
		{"CREATE SCHEMA t (d U8); CREATE WIRE AVRO SCHEMA t (d U8)", "1:54: expected an AVRO wire type (BOOLEAN, INT, LONG, FLOAT, DOUBLE, STRING, BYTES, ARRAY), found \"U8\""},
		{"CREATE SCHEMA t (d U64); CREATE WIRE AVRO SCHEMA t (d INT); CREATE CODEC c FROM WIRE AVRO SCHEMA t TO SCHEMA t", "1:61: codec c cannot bind field d (wire INT, internal U64): an Avro INT binds only I8, I16, I32, U8 and U16 (use LONG for wider integers)"},
		{"CREATE WIRE AVRO SCHEMA t (`a-b` INT)", "1:1: wire AVRO schema t field `a-b`: an Avro field name must match [A-Za-z_][A-Za-z0-9_]*"},
		{"CREATE SCHEMA t (message STRING, level U8); CREATE CODEC c FROM SYSLOG TO SCHEMA t", "1:45: codec c cannot bind field level (wire none, internal U8): the SYSLOG contract has no such field; a SYSLOG target schema declares a subset of: facility U8, severity U8, timestamp DATETIME OPTIONAL, hostname STRING OPTIONAL, app_name STRING OPTIONAL, proc_id STRING OPTIONAL, msg_id STRING OPTIONAL, structured_data STRING OPTIONAL, message STRING"},
		{"CREATE SCHEMA t (timestamp DATETIME); CREATE CODEC c FROM SYSLOG TO SCHEMA t", "1:39: codec c cannot bind field timestamp (wire SYSLOG DATETIME OPTIONAL, internal DATETIME): the SYSLOG contract requires timestamp DATETIME OPTIONAL"},
		{"CREATE CODEC c2 FROM WIRE JSON SCHEMA notification_wire TO SCHEMA notification ENCODE payload AS RFC3339", "1:1: codec c2 cannot bind field payload (wire none, internal STRING): ENCODE … AS RFC3339 applies only to an internal DATETIME field"},
	}
	for _, tt := range tests {
		c := New()
		mustExec(t, c, base)
		before := show(t, c)
		_, err := c.Exec(tt.src)
		if err == nil || err.Error() != tt.want {
			t.Errorf("%s\n got: %v\nwant: %s", tt.src, err, tt.want)
		}
		if tt.src[0] == 'B' { // a failed transaction changes nothing
			if after := show(t, c); after != before {
				t.Errorf("failed transaction changed the catalog:\n%s", after)
			}
		}
	}
}

// TestTransaction: the spec's coordinated replacement commits atomically;
// the same steps outside a transaction fail at the first.
func TestTransaction(t *testing.T) {
	tx := `
BEGIN;
ALTER WIRE JSON SCHEMA notification_wire
  ALTER FIELD user_id SET TYPE number;
ALTER SCHEMA notification
  ALTER FIELD user_id SET TYPE F64;
DROP CODEC notification_codec;
CREATE CODEC notification_codec
  FROM WIRE JSON SCHEMA notification_wire
  TO SCHEMA notification
  ENCODE created_at AS RFC3339;
COMMIT;`
	c := New()
	mustExec(t, c, base)
	mustExec(t, c, tx)
	s, _ := c.Schema("notification")
	if s.Fields[0].Type.Kind != types.F64 {
		t.Fatalf("not applied: %v", s.Fields[0])
	}
	c = New()
	mustExec(t, c, base)
	_, err := c.Exec(strings.NewReplacer("BEGIN;", "", "COMMIT;", "").Replace(tx))
	if err == nil || !strings.HasPrefix(err.Error(), "3:1: codec notification_codec cannot bind field user_id") {
		t.Fatalf("got %v", err)
	}
	// a failing statement inside a transaction discards it all
	c = New()
	mustExec(t, c, base)
	before := show(t, c)
	if _, err := c.Exec("BEGIN; ALTER SCHEMA notification ADD FIELD x U8 OPTIONAL; ALTER SCHEMA nope ADD FIELD y U8; COMMIT;"); err == nil {
		t.Fatal("no error")
	}
	if show(t, c) != before {
		t.Fatal("changed")
	}
	// ROLLBACK discards
	mustExec(t, c, "BEGIN; DROP CODEC notification_codec; ROLLBACK")
	if show(t, c) != before {
		t.Fatal("rollback changed")
	}
	// dropping a schema with its codec in one transaction works
	mustExec(t, c, "BEGIN; DROP SCHEMA notification; DROP CODEC notification_codec; COMMIT")
	if _, ok := c.Schema("notification"); ok {
		t.Fatal("not dropped")
	}
	// wire schemas of the same name in different formats do not collide
	mustExec(t, c, "CREATE WIRE CBOR SCHEMA notification_wire (a integer); CREATE WIRE AVRO SCHEMA notification_wire (a LONG); DROP WIRE CBOR SCHEMA notification_wire")
	if _, ok := c.Wire(types.AVRO, "notification_wire"); !ok {
		t.Fatal("avro dropped")
	}
	if _, ok := c.Wire(types.JSON, "notification_wire"); !ok {
		t.Fatal("json dropped")
	}
}

func TestVerdicts(t *testing.T) {
	tests := []struct{ alter, want string }{
		{
			"ALTER SCHEMA notification ADD FIELD note STRING OPTIONAL, RENAME FIELD payload TO body",
			`SCHEMA notification via JSON (by field name): backward BREAKING, forward BREAKING
  forward: ADD FIELD note STRING OPTIONAL: old STRICT readers reject note, which new payloads may carry
  backward: RENAME FIELD payload TO body: old payloads may carry payload, which the STRICT schema no longer declares
  forward: RENAME FIELD payload TO body: old STRICT readers reject body, which new payloads may carry
SCHEMA notification via CBOR (by field name): backward BREAKING, forward BREAKING
  forward: ADD FIELD note STRING OPTIONAL: old STRICT readers reject note, which new payloads may carry
  backward: RENAME FIELD payload TO body: old payloads may carry payload, which the STRICT schema no longer declares
  forward: RENAME FIELD payload TO body: old STRICT readers reject body, which new payloads may carry
SCHEMA notification via AVRO (by position): backward BREAKING, forward BREAKING
  backward: ADD FIELD note STRING OPTIONAL: old payloads end before position 4 (note): a raw Avro datum has no room for new fields
  forward: ADD FIELD note STRING OPTIONAL: old readers reject the trailing position 4 (note)
`,
		},
		{
			"ALTER SCHEMA notification ALTER FIELD user_id SET TYPE U64, ALTER FIELD payload SET SENSITIVE",
			`SCHEMA notification via JSON (by field name): backward compatible, forward BREAKING
  forward: ALTER FIELD user_id SET TYPE U64: field user_id: new values of U64 may not fit U32 for old readers
SCHEMA notification via CBOR (by field name): backward compatible, forward BREAKING
  forward: ALTER FIELD user_id SET TYPE U64: field user_id: new values of U64 may not fit U32 for old readers
SCHEMA notification via AVRO (by position): backward compatible, forward BREAKING
  forward: ALTER FIELD user_id SET TYPE U64: position 1 (user_id): new values of U64 may not fit U32 for old readers
`,
		},
		{
			"ALTER WIRE JSON SCHEMA notification_wire MODE LOOSE; ALTER WIRE JSON SCHEMA notification_wire ADD FIELD note string OPTIONAL",
			`WIRE JSON SCHEMA notification_wire via JSON (by field name): backward compatible, forward compatible
WIRE JSON SCHEMA notification_wire via JSON (by field name): backward compatible, forward compatible
`,
		},
		{
			"ALTER WIRE JSON SCHEMA notification_wire ALTER FIELD payload DROP OPTIONAL, ALTER FIELD payload SET OPTIONAL",
			`WIRE JSON SCHEMA notification_wire via JSON (by field name): backward BREAKING, forward BREAKING
  backward: ALTER FIELD payload DROP OPTIONAL: old payloads may omit payload, which is now required
  forward: ALTER FIELD payload SET OPTIONAL: new payloads may omit payload, which old readers require
`,
		},
	}
	for _, tt := range tests {
		c := New()
		mustExec(t, c, "CREATE SCHEMA notification (user_id U32, created_at DATETIME, payload STRING OPTIONAL); CREATE WIRE JSON SCHEMA notification_wire (user_id integer, payload string OPTIONAL)")
		res := mustExec(t, c, tt.alter)
		var b strings.Builder
		for _, r := range res {
			for _, v := range r.Verdicts {
				b.WriteString(v.String())
			}
		}
		if b.String() != tt.want {
			t.Errorf("%s\n got:\n%s\nwant:\n%s", tt.alter, b.String(), tt.want)
		}
	}
}

func TestFingerprint(t *testing.T) {
	c := New()
	mustExec(t, c, "CREATE SCHEMA s (a U8)")
	fp, _ := c.Fingerprint(Key{Kind: ddl.KindSchema, Name: "s"})
	if fp.Canonical != "CREATE SCHEMA s (\n  a U8\n);" || fp.ID64 != types.SHA256x64(fp.Canonical) || fp.ID32 != types.FNV1a32(fp.Canonical) {
		t.Fatalf("%+v", fp)
	}
	mustExec(t, c, "ALTER SCHEMA s RENAME FIELD a TO b")
	fp2, _ := c.Fingerprint(Key{Kind: ddl.KindSchema, Name: "s"})
	if fp2.ID64 == fp.ID64 {
		t.Fatal("rename kept the fingerprint")
	}
}

// FuzzExec: any statement text either fails with a positioned error or
// leaves a catalog whose SHOW CREATE texts parse back to the same
// catalog.
func FuzzExec(f *testing.F) {
	for _, s := range []string{
		base,
		"CREATE SCHEMA `a b` (`select` ARRAY<VEC<STRING>, 4> SENSITIVE OPTIONAL, x ARRAY<ARRAY<BYTES, 3>, 2>)",
		"CREATE WIRE AVRO SCHEMA w (a LONG, b ARRAY); CREATE SCHEMA s (a U64, b VEC<U8>); CREATE CODEC c FROM WIRE AVRO SCHEMA w TO SCHEMA s",
		"CREATE SCHEMA ev (facility U8, severity U8, message STRING); CREATE CODEC c FROM SYSLOG TO SCHEMA ev",
		base + "BEGIN; ALTER WIRE JSON SCHEMA notification_wire ALTER FIELD user_id SET TYPE number; ALTER SCHEMA notification ALTER FIELD user_id SET TYPE F64; COMMIT;",
		base + "ALTER SCHEMA notification ADD FIELD note STRING OPTIONAL, RENAME FIELD note TO n2, ALTER FIELD n2 SET SENSITIVE; ALTER WIRE JSON SCHEMA notification_wire MODE LOOSE",
	} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, src string) {
		c := New()
		if _, err := c.Exec(src); err != nil {
			if _, ok := err.(*ddl.Error); !ok {
				t.Fatalf("error of type %T: %v", err, err)
			}
		}
		text := show(t, c)
		c2 := New()
		if _, err := c2.Exec(text); err != nil {
			t.Fatalf("SHOW CREATE does not parse back: %v\n%s", err, text)
		}
		if again := show(t, c2); again != text {
			t.Fatalf("round trip changed\n%s\n%s", text, again)
		}
	})
}

func TestKeysOrder(t *testing.T) {
	c := New()
	mustExec(t, c, base+"BEGIN; DROP CODEC notification_codec; DROP SCHEMA notification; CREATE CODEC notification_codec FROM WIRE JSON SCHEMA notification_wire TO SCHEMA notification ENCODE created_at AS RFC3339; CREATE SCHEMA notification (user_id U32, created_at DATETIME, payload STRING OPTIONAL); COMMIT")
	var got []string
	for _, k := range c.Keys() {
		got = append(got, k.String())
	}
	if strings.Join(got, "; ") != "SCHEMA notification; WIRE JSON SCHEMA notification_wire; CODEC notification_codec" {
		t.Fatal(got)
	}
}
