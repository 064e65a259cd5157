package ddl

import (
	"testing"

	"github.com/herald-gateway/herald/codec/types"
)

func TestParseErrors(t *testing.T) {
	tests := []struct{ src, want string }{
		{"CREATE TABLE x (a U8)", `1:8: expected SCHEMA, WIRE or CODEC after CREATE, found "TABLE"`},
		{"CREATE SCHEMA s ()", "1:18: expected a field definition: a schema must declare at least one field"},
		{"CREATE SCHEMA s (a U9)", `1:20: expected a type (U8…I64, F32, F64, BOOL, STRING, BYTES, DATETIME, ARRAY<…>, VEC<…>), found "U9"`},
		{"CREATE SCHEMA s (a ARRAY<F32>)", `1:29: expected ',' and at least one axis length in ARRAY<T, D1, …>, found '>'`},
		{"CREATE SCHEMA s (a ARRAY<F32, 0>)", "1:31: expected an axis length from 1 to 2147483647, found 0"},
		{"CREATE SCHEMA s (a ARRAY<F32, 2147483648>)", "1:31: expected an axis length from 1 to 2147483647, found 2147483648"},
		{"CREATE SCHEMA s (a U8 OPTIONAL OPTIONAL)", "1:32: OPTIONAL is given twice"},
		{"CREATE SCHEMA s (a U8 b U8)", `1:23: expected ',' or ')' after a field definition, found "b"`},
		{"CREATE SCHEMA s (a U8)\nCREATE SCHEMA t (a U8)", `2:1: expected ';' or end of input after the statement, found "CREATE"`},
		{"CREATE WIRE XML SCHEMA w (a string)", `1:13: expected a wire format (JSON, CBOR or AVRO), found "XML"`},
		{"CREATE WIRE SYSLOG SCHEMA w (a string)", "1:13: SYSLOG is a predefined wire schema without a declaration: expected JSON, CBOR or AVRO"},
		{"CREATE WIRE JSON SCHEMA w MODE FAST (a string)", `1:32: expected STRICT or LOOSE, found "FAST"`},
		{"CREATE WIRE JSON SCHEMA w (a LONG)", `1:30: expected a JSON wire type (integer, number, string, boolean, bytes, array, U8, U16, U32, U64, I8, I16, I32, I64, F32, F64, DATETIME), found "LONG"`},
		{"CREATE WIRE AVRO SCHEMA w (a integer)", `1:30: expected an AVRO wire type (BOOLEAN, INT, LONG, FLOAT, DOUBLE, STRING, BYTES, ARRAY), found "integer"`},
		{"CREATE WIRE JSON SCHEMA w (a string SENSITIVE)", "1:37: SENSITIVE belongs to internal schema fields, not wire schema fields"},
		{"CREATE CODEC c FROM JSON TO SCHEMA s", "1:37: a JAQ-native codec (FROM JSON) must declare WITH JAQ TRANSFORMATIONS ON INGESTION '…' and/or ON EMITTING '…', found end of input"},
		{"CREATE CODEC c FROM JSON TO SCHEMA s WITH JAQ TRANSFORMATIONS", "1:62: WITH JAQ TRANSFORMATIONS requires ON INGESTION '…', ON EMITTING '…', or both in that order, found end of input"},
		{"CREATE CODEC c FROM JSON TO SCHEMA s WITH JAQ TRANSFORMATIONS ON EMITTING '.' ON INGESTION '.'", "1:79: ON INGESTION must come before ON EMITTING (at 1:63)"},
		{"CREATE CODEC c FROM JSON TO SCHEMA s WITH JAQ TRANSFORMATIONS ON EMITTING BATCH '.'", "1:63: ON EMITTING BATCH is written only after ON EMITTING: its input is the array of ON EMITTING's outputs"},
		{"CREATE CODEC c FROM JSON TO SCHEMA s WITH JAQ TRANSFORMATIONS ON INGESTION '.' ON EMITTING BATCH '.' ON EMITTING '.'", "1:80: ON EMITTING BATCH is written only after ON EMITTING: its input is the array of ON EMITTING's outputs"},
		{"CREATE CODEC c FROM JSON TO SCHEMA s WITH JAQ TRANSFORMATIONS ON INGESTION '.' ON INGESTION '.'", "1:80: ON INGESTION is given twice (first at 1:63)"},
		{"CREATE CODEC c FROM JSON TO SCHEMA s WITH JAQ TRANSFORMATIONS ON INGESTION .", "1:76: expected a JAQ program after ON INGESTION: a string literal '…' or $jaq$ … $jaq$, found '.'"},
		{"CREATE CODEC c FROM JSON TO SCHEMA s ENCODE x AS RFC3339", "1:38: a JAQ-native codec (FROM JSON) takes no field encoding rules (its programs decide the shape): expected WITH JAQ TRANSFORMATIONS"},
		{"CREATE CODEC c FROM JSON TO SCHEMA s WITH JAQ TRANSFORMATIONS ON EMITTING '.' ENCODE x AS RFC3339", "1:79: a JAQ-native codec (FROM JSON) takes no field encoding rules (its programs decide the shape): expected ';'"},
		{"CREATE CODEC c FROM WIRE YAML SCHEMA w TO SCHEMA s", "1:26: there is no WIRE YAML SCHEMA: a YAML codec is JAQ-native, written FROM YAML TO SCHEMA … WITH JAQ TRANSFORMATIONS …"},
		{"CREATE CODEC c FROM PROTOBUF TO SCHEMA s", "1:30: a protobuf codec is written FROM PROTOBUF USING RESOURCE name VERSION n|LATEST CONFIG {…} MESSAGE '…': expected USING, found \"TO\""},
		{"CREATE CODEC c FROM PROTOBUF USING RESOURCE r CONFIG {} MESSAGE 'm' TO SCHEMA s WITH JAQ TRANSFORMATIONS ON INGESTION '.'", "1:47: USING RESOURCE requires VERSION <n> or VERSION LATEST, found \"CONFIG\""},
		{"CREATE CODEC c FROM PROTOBUF USING RESOURCE r VERSION 0 CONFIG {} MESSAGE 'm' TO SCHEMA s WITH JAQ TRANSFORMATIONS ON INGESTION '.'", "1:55: expected a resource version from 1 to 2147483647 or LATEST, found 0"},
		{"CREATE CODEC c FROM PROTOBUF USING RESOURCE r VERSION 1 MESSAGE 'm' TO SCHEMA s WITH JAQ TRANSFORMATIONS ON INGESTION '.'", "1:57: expected CONFIG {'file' = …, 'include' = …} after the resource version, found \"MESSAGE\""},
		{"CREATE CODEC c FROM PROTOBUF USING RESOURCE r VERSION 1 CONFIG {'file' = ['a', 'b']} MESSAGE 'm' TO SCHEMA s WITH JAQ TRANSFORMATIONS ON INGESTION '.'", "1:74: CONFIG key 'file' takes one path: use 'files' = […] for several"},
		{"CREATE CODEC c FROM PROTOBUF USING RESOURCE r VERSION 1 CONFIG {'files' = 'a', 'files' = 'b'} MESSAGE 'm' TO SCHEMA s WITH JAQ TRANSFORMATIONS ON INGESTION '.'", "1:80: CONFIG key 'files' is given twice (first at 1:65)"},
		{"CREATE CODEC c FROM PROTOBUF USING RESOURCE r VERSION 1 CONFIG {'path' = 'a'} MESSAGE 'm' TO SCHEMA s WITH JAQ TRANSFORMATIONS ON INGESTION '.'", "1:65: unknown CONFIG key 'path': expected 'file', 'files', 'include' or 'includes'"},
		{"CREATE CODEC c FROM PROTOBUF USING RESOURCE r VERSION LATEST CONFIG {} MESSAGE m TO SCHEMA s WITH JAQ TRANSFORMATIONS ON INGESTION '.'", "1:80: expected the full name of a message, e.g. 'pkg.Message' as a string literal, found \"m\""},
		{"CREATE CODEC c FROM PROTOBUF USING RESOURCE r VERSION LATEST CONFIG {} MESSAGE 'm' TO SCHEMA s", "1:95: a protobuf codec must declare WITH JAQ TRANSFORMATIONS ON INGESTION '…' and/or ON EMITTING '…', found end of input"},
		{"CREATE CODEC c FROM XLS TO SCHEMA s", "1:21: expected WIRE, SYSLOG, JSON, YAML, TOML, XML, CBOR or PROTOBUF after FROM, found \"XLS\""},
		{"CREATE CODEC c FROM JSON TO SCHEMA s WITH JAQ TRANSFORMATIONS ON INGESTION $x$ . $y$", "1:76: unterminated dollar-quoted string: expected the closing $x$"},
		{"CREATE CODEC c FROM JSON TO SCHEMA s WITH JAQ TRANSFORMATIONS ON INGESTION $ $", "1:76: expected a dollar-quoted string: $tag$ … $tag$, the tag a name or empty"},
		{"CREATE CODEC c FROM SYSLOG TO SCHEMA s ENCODE t AS RFC3339", "1:40: a SYSLOG codec takes no field encoding rules: expected ';'"},
		{"CREATE CODEC c FROM WIRE JSON SCHEMA w TO SCHEMA s ENCODE t AS RFC3339, t AS RFC3339", "1:73: field t already has an ENCODE rule (at 1:59)"},
		{"CREATE CODEC c FROM WIRE JSON SCHEMA w TO SCHEMA s ENCODE t AS ISO8601", `1:64: expected RFC3339, found "ISO8601"`},
		{"CREATE CODEC c FROM WIRE JSON SCHEMA w TO SCHEMA s WITH JAQ", "1:52: a codec using a declared wire schema takes no JAQ transformations: expected ENCODE or ';'"},
		{"ALTER SCHEMA s FROB FIELD a", `1:16: expected ADD FIELD, DROP FIELD, RENAME FIELD or ALTER FIELD, found "FROB"`},
		{"ALTER SCHEMA s ALTER FIELD a SET COLOR", `1:34: expected TYPE, OPTIONAL or SENSITIVE after SET, found "COLOR"`},
		{"ALTER WIRE JSON SCHEMA w ALTER FIELD a SET SENSITIVE", "1:44: SENSITIVE belongs to internal schema fields, not wire schema fields"},
		{"ALTER WIRE JSON SCHEMA w ALTER FIELD a DROP TYPE", `1:45: expected OPTIONAL after DROP, found "TYPE"`},
		{"ALTER CODEC c", "1:7: a codec cannot be altered: DROP CODEC and CREATE CODEC it again (in one BEGIN … COMMIT)"},
		{"DROP TABLE x", `1:6: expected SCHEMA, WIRE or CODEC after DROP, found "TABLE"`},
		{"SHOW TABLES", `1:6: expected CREATE, found "TABLES"`},
		{"SELECT 1", `1:1: expected a statement (CREATE, ALTER, DROP, BEGIN, COMMIT, ROLLBACK or SHOW CREATE), found "SELECT"`},
		{"CREATE SCHEMA `a (x U8)", "1:15: unterminated quoted name: expected a closing backtick"},
		{"CREATE SCHEMA s (x U8) /* open", "1:24: unterminated comment: expected */"},
		{"CREATE SCHEMA s (1x U8)", "1:18: expected a number or a name: a name cannot start with a digit (quote it with backticks)"},
		{"CREATE SCHEMA s (x U8) #", "1:24: unexpected character '#': expected a keyword, a name, a number or punctuation"},
		{"CREATE SCHEMA s (x VEC<U8)", "1:26: expected '>', found ')'"},
		{"CREATE SCHEMA", "1:14: expected a schema name, found end of input"},
	}
	for _, tt := range tests {
		_, err := Parse(tt.src)
		if err == nil || err.Error() != tt.want {
			t.Errorf("Parse(%q)\n got: %v\nwant: %s", tt.src, err, tt.want)
		}
	}
}

func TestParseKeywordNames(t *testing.T) {
	stmts, err := Parse("create schema `select` (schema U8, optional STRING OPTIONAL, `a b` BOOL sensitive optional, field VEC<ARRAY<F32,6>>); -- comment\n")
	if err != nil {
		t.Fatal(err)
	}
	cs := stmts[0].(*CreateSchema)
	if cs.Schema.Name != "select" || len(cs.Schema.Fields) != 4 {
		t.Fatalf("got %+v", cs.Schema)
	}
	f := cs.Schema.Fields[2]
	if f.Name != "a b" || !f.Optional || !f.Sensitive {
		t.Fatalf("field 2: %+v", f)
	}
	if got := cs.Schema.Fields[3].Type.String(); got != "VEC<ARRAY<F32, 6>>" {
		t.Fatalf("type: %s", got)
	}
}

func TestOpString(t *testing.T) {
	stmts, err := Parse("ALTER SCHEMA s ADD FIELD note STRING OPTIONAL SENSITIVE, DROP FIELD a, RENAME FIELD b TO `c d`, ALTER FIELD x SET TYPE ARRAY<U8, 2>, ALTER FIELD x SET OPTIONAL, ALTER FIELD x DROP OPTIONAL, ALTER FIELD x SET SENSITIVE, ALTER FIELD x DROP SENSITIVE")
	if err != nil {
		t.Fatal(err)
	}
	want := []string{
		"ADD FIELD note STRING OPTIONAL SENSITIVE", "DROP FIELD a", "RENAME FIELD b TO `c d`",
		"ALTER FIELD x SET TYPE ARRAY<U8, 2>", "ALTER FIELD x SET OPTIONAL", "ALTER FIELD x DROP OPTIONAL",
		"ALTER FIELD x SET SENSITIVE", "ALTER FIELD x DROP SENSITIVE",
	}
	ops := stmts[0].(*AlterSchema).Ops
	for i, w := range want {
		if got := ops[i].String(); got != w {
			t.Errorf("op %d = %q, want %q", i, got, w)
		}
	}
}

func FuzzParse(f *testing.F) {
	for _, s := range []string{
		"CREATE IF NOT EXISTS SCHEMA notification (user_id U32, created_at DATETIME, payload STRING OPTIONAL, cpu_last_64 ARRAY<F32, 64>, image ARRAY<F32, 3, 224, 224>, detections VEC<ARRAY<F32, 6>> OPTIONAL);",
		"CREATE IF NOT EXISTS WIRE JSON SCHEMA notification_wire MODE STRICT (user_id integer, created_at string, payload string OPTIONAL);",
		"CREATE CODEC c FROM WIRE JSON SCHEMA w TO SCHEMA s ENCODE created_at AS RFC3339;",
		"CREATE CODEC syslog_codec FROM SYSLOG TO SCHEMA syslog_event;",
		"BEGIN; ALTER WIRE JSON SCHEMA w ALTER FIELD user_id SET TYPE number; ALTER SCHEMA s ALTER FIELD user_id SET TYPE F64; DROP CODEC c; COMMIT;",
		"ALTER WIRE JSON SCHEMA notification_wire MODE LOOSE; SHOW CREATE WIRE JSON SCHEMA w; DROP IF EXISTS CODEC `x``y`",
		"/* c */ -- d\n'str'",
		"CREATE CODEC c FROM JSON TO SCHEMA s WITH JAQ TRANSFORMATIONS ON INGESTION $a$'x'$jaq$a$",
		"CREATE CODEC c FROM JSON TO SCHEMA s WITH JAQ TRANSFORMATIONS ON INGESTION $jaq$.lines[] | select(.quantity > 0)$jaq$ ON EMITTING '{id: .user_id}' ON EMITTING BATCH '{count: length, records: .}'",
		"CREATE CODEC p FROM PROTOBUF USING RESOURCE r VERSION 1 CONFIG {'file' = 'n.proto', 'include' = '.'} MESSAGE 'nervix.test.Notification' BATCH MESSAGE 'nervix.test.NotificationBatch' TO SCHEMA s WITH JAQ TRANSFORMATIONS ON EMITTING '{user_id: .user_id}'",
		"CREATE CODEC x FROM XML TO SCHEMA s WITH JAQ TRANSFORMATIONS ON INGESTION '{user_id: (.c[] | select(.t == \"user_id\").c[0] | tonumber)}'",
	} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, src string) {
		stmts, err := Parse(src)
		if err != nil {
			if _, ok := err.(*Error); !ok {
				t.Fatalf("error of type %T", err)
			}
			return
		}
		for _, st := range stmts {
			if cc, ok := st.(*CreateCodec); ok && cc.Codec.Jaq != nil {
				// the canonical text parses back to the same definition
				text := types.CreateCodec(cc.Codec)
				again, err := Parse(text)
				if err != nil {
					t.Fatalf("SHOW CREATE text does not parse: %v\n%s", err, text)
				}
				if got := types.CreateCodec(again[0].(*CreateCodec).Codec); got != text {
					t.Fatalf("canonical text changed:\n%s\n%s", text, got)
				}
				for d, p := range cc.Codec.Jaq.Programs {
					if p.Set {
						_ = cc.ProgramPos(types.Direction(d), len(p.Text)+1)
					}
				}
			}
		}
	})
}
