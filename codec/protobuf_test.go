package codec

import (
	"encoding/hex"
	"strings"
	"testing"

	"github.com/herald-gateway/herald/codec/catalog"
	"github.com/herald-gateway/herald/codec/resource"
)

// protoResources holds version 1 and 2 of resource bundle: a message that
// imports an enum from a second import root and a well-known type.
func protoResources(t testing.TB) *resource.Set {
	t.Helper()
	set := resource.NewSet()
	v1 := resource.Files{
		"protos/event.proto": []byte(`syntax = "proto3";
package t.v1;
import "levels/level.proto";
import "google/protobuf/timestamp.proto";
message Event {
  uint32 id = 1;
  double x = 2;
  float f = 3;
  int64 i = 4;
  uint64 u = 5;
  bool ok = 6;
  string s = 7;
  bytes b = 8;
  common.Level level = 9;
  repeated int32 xs = 10;
  google.protobuf.Timestamp at = 11;
  Inner inner = 12;
  optional int32 maybe = 13;
}
message Inner { string name = 1; }
message Batch { repeated Event events = 1; }
message TwoFields { repeated Event events = 1; uint32 count = 2; }
message Envelope { uint32 count = 1; repeated Event records = 2; }
enum Color { RED = 0; }
`),
		"shared/levels/level.proto": []byte(`syntax = "proto3";
package common;
enum Level { LEVEL_UNSPECIFIED = 0; INFO = 1; WARN = 2; }
`),
		"README": []byte("not a proto file"),
	}
	if err := set.Add("bundle", 1, v1); err != nil {
		t.Fatal(err)
	}
	if err := set.Add("bundle", 2, resource.Files{"broken.proto": []byte("syntax = \"proto3\";\nmessage A {\n  int32 x = ;\n}\n")}); err != nil {
		t.Fatal(err)
	}
	return set
}

const eventSchema = "CREATE SCHEMA s (id U32, x F64 OPTIONAL, f F32 OPTIONAL, i I64 OPTIONAL, u U64 OPTIONAL, ok BOOL OPTIONAL, s STRING OPTIONAL, b BYTES OPTIONAL, level STRING OPTIONAL, xs VEC<I32> OPTIONAL, at DATETIME OPTIONAL, name STRING OPTIONAL);\n"

func protoDefs(extra string) string {
	return eventSchema + "CREATE CODEC c FROM PROTOBUF USING RESOURCE bundle VERSION 1 CONFIG {'files' = ['event.proto'], 'includes' = ['protos', 'shared']} " + extra
}

func TestProtobufCodec(t *testing.T) {
	set := protoResources(t)
	c := jaqCodec(t, protoDefs(`MESSAGE 't.v1.Event' BATCH MESSAGE 't.v1.Batch' TO SCHEMA s WITH JAQ TRANSFORMATIONS
	  ON INGESTION '.id //= 0 | . + {name: .inner.name}' ON EMITTING '. + {inner: {name: .name}} | del(.name)'`), set, nil)
	full := `{"id":7,"x":-0,"f":7.038531e-26,"i":-9223372036854775808,"u":18446744073709551615,"ok":true,"s":"é","b":"AAE=","level":"WARN","xs":[1,-2],"at":"2026-09-24T08:15:00.5Z","name":"n"}`
	payload := encodeRows(t, c, false, full)
	if strings.HasPrefix(payload, "error") {
		t.Fatal(payload)
	}
	// x = -0.0 is a default value: the message does not carry it (vector 49)
	want := "0807" + "1dfd43ae15" + "20808080808080808080" + "01" + "28ffffffffffffffffff01" + "3001" + "3a02c3a9" + "42020001" + "4802" + "520b01feffffffffffffffff01" + "5a0c0884b8d3d5061080cab5ee01" + "6203" + "0a016e"
	if got := hex.EncodeToString([]byte(payload)); got != want {
		t.Errorf("message:\n%s\nwant:\n%s", got, want)
	}
	back := strings.Replace(full, `"x":-0`, `"x":null`, 1)
	if got := decodeRows(t, c, []byte(payload)); got != back {
		t.Errorf("read back:\n%s\nwant:\n%s", got, back)
	}
	// default-valued fields are absent from the JSON view; the program
	// restores id
	if got := decodeRows(t, c, nil); got != `{"id":0,"x":null,"f":null,"i":null,"u":null,"ok":null,"s":null,"b":null,"level":null,"xs":null,"at":null,"name":null}` {
		t.Errorf("empty message: %s", got)
	}
	if got := decodeRows(t, c, []byte{0xff}); got != "error[PROTOBUF] codec c: ON INGESTION, input value 0: payload is not a valid t.v1.Event message" {
		t.Errorf("malformed: %s", got)
	}
	// the batch container: BATCH MESSAGE's repeated field
	batch := encodeRows(t, c, true, `{"id":1}`, `{"id":2,"s":"x"}`)
	if got := hex.EncodeToString([]byte(batch)); got != "0a04"+"0801"+"6200"+"0a07"+"0802"+"3a0178"+"6200" {
		t.Errorf("batch: %s", got)
	}
}

func TestProtobufBatchReadBack(t *testing.T) {
	set := protoResources(t)
	enc := jaqCodec(t, protoDefs(`MESSAGE 't.v1.Event' BATCH MESSAGE 't.v1.Batch' TO SCHEMA s WITH JAQ TRANSFORMATIONS ON EMITTING '{id, s}'`), set, nil)
	batch := encodeRows(t, enc, true, `{"id":1,"s":"a"}`, `{"id":0,"s":"b"}`)
	dec := jaqCodec(t, protoDefs(`MESSAGE 't.v1.Batch' TO SCHEMA s WITH JAQ TRANSFORMATIONS ON INGESTION '.events[] | {id: (.id // 0), s}'`), set, nil)
	want := `{"id":1,"x":null,"f":null,"i":null,"u":null,"ok":null,"s":"a","b":null,"level":null,"xs":null,"at":null,"name":null}` + "\n" +
		`{"id":0,"x":null,"f":null,"i":null,"u":null,"ok":null,"s":"b","b":null,"level":null,"xs":null,"at":null,"name":null}`
	if got := decodeRows(t, dec, []byte(batch)); got != want {
		t.Errorf("read back:\n%s", got)
	}
	env := jaqCodec(t, protoDefs(`MESSAGE 't.v1.Event' BATCH MESSAGE 't.v1.Envelope' TO SCHEMA s WITH JAQ TRANSFORMATIONS ON EMITTING '{id}' ON EMITTING BATCH '{count: length, records: .}'`), set, nil)
	if got := hex.EncodeToString([]byte(encodeRows(t, env, true, `{"id":1}`, `{"id":2}`))); got != "0802"+"12020801"+"12020802" {
		t.Errorf("envelope: %s", got)
	}
	if got := encodeRows(t, env, true, `{"id":1}`); got != "" && !strings.HasPrefix(got, "\x08\x01") {
		t.Errorf("envelope of one: %q", got)
	}
	bad := jaqCodec(t, protoDefs(`MESSAGE 't.v1.Event' TO SCHEMA s WITH JAQ TRANSFORMATIONS ON EMITTING '{id, nope: 1}'`), set, nil)
	if got := encodeRows(t, bad, false, `{"id":1}`); got != "error[PROTOBUF] codec c: ON EMITTING, row 0: output is not a valid instance of message t.v1.Event (field names and value types must match the message)" {
		t.Errorf("invalid instance: %s", got)
	}
	if got := encodeRows(t, bad, true, `{"id":1}`); got != "error[UNENCODABLE] codec c: ON EMITTING: a protobuf batch needs BATCH MESSAGE with one repeated field of MESSAGE (or ON EMITTING BATCH)" {
		t.Errorf("no batch message: %s", got)
	}
}

// TestProtobufCreateErrors: a protobuf codec is checked when it is
// created, and the error points at the clause at fault.
func TestProtobufCreateErrors(t *testing.T) {
	set := protoResources(t)
	tests := []struct{ defs, want string }{
		{protoDefs(`MESSAGE 't.v1.Nope' TO SCHEMA s WITH JAQ TRANSFORMATIONS ON INGESTION '.'`),
			"2:140: codec c: MESSAGE 't.v1.Nope' is not a message of the compiled files (they define t.v1.Batch, t.v1.Envelope, t.v1.Event, t.v1.Inner, t.v1.TwoFields)"},
		{protoDefs(`MESSAGE 't.v1.Color' TO SCHEMA s WITH JAQ TRANSFORMATIONS ON INGESTION '.'`), "2:140: codec c: MESSAGE 't.v1.Color' names a enum, not a message"},
		{protoDefs(`MESSAGE 't.v1.Event' BATCH MESSAGE 't.v1.TwoFields' TO SCHEMA s WITH JAQ TRANSFORMATIONS ON EMITTING '.'`),
			"2:167: codec c: BATCH MESSAGE 't.v1.TwoFields' must declare exactly one field, repeated t.v1.Event, to hold the members (or the codec must declare ON EMITTING BATCH)"},
		{protoDefs(`MESSAGE 't.v1.Event' BATCH MESSAGE 't.v1.Inner' TO SCHEMA s WITH JAQ TRANSFORMATIONS ON EMITTING '.'`),
			"2:167: codec c: BATCH MESSAGE 't.v1.Inner' must declare exactly one field, repeated t.v1.Event, to hold the members (or the codec must declare ON EMITTING BATCH)"},
		{protoDefs(`MESSAGE 't.v1.Event' TO SCHEMA s WITH JAQ TRANSFORMATIONS ON EMITTING '.' ON EMITTING BATCH '.'`),
			"2:140: codec c: ON EMITTING BATCH yields a BATCH MESSAGE: declare BATCH MESSAGE '…' after MESSAGE"},
		{eventSchema + "CREATE CODEC c FROM PROTOBUF USING RESOURCE bundle VERSION 3 CONFIG {} MESSAGE 'm' TO SCHEMA s WITH JAQ TRANSFORMATIONS ON INGESTION '.'",
			"2:45: codec c: resource bundle has no version 3 (it has 1, 2)"},
		{eventSchema + "CREATE CODEC c FROM PROTOBUF USING RESOURCE other VERSION 1 CONFIG {} MESSAGE 'm' TO SCHEMA s WITH JAQ TRANSFORMATIONS ON INGESTION '.'",
			"2:45: codec c: resource other does not exist (declare it in the config file, or pass --resource other=DIR)"},
		{eventSchema + "CREATE CODEC c FROM PROTOBUF USING RESOURCE bundle VERSION LATEST CONFIG {} MESSAGE 'm' TO SCHEMA s WITH JAQ TRANSFORMATIONS ON INGESTION '.'",
			"2:67: codec c: resource bundle version 2 does not compile: broken.proto:3:13: syntax error: unexpected ';', expecting int literal"},
		{eventSchema + "CREATE CODEC c FROM PROTOBUF USING RESOURCE bundle VERSION 1 CONFIG {'file' = 'protos/event.proto'} MESSAGE 'm' TO SCHEMA s WITH JAQ TRANSFORMATIONS ON INGESTION '.'",
			"2:62: codec c: resource bundle version 1 does not compile: protos/event.proto:3:8: levels/level.proto: file does not exist"},
		{eventSchema + "CREATE CODEC c FROM PROTOBUF USING RESOURCE bundle VERSION 1 CONFIG {'include' = '../x'} MESSAGE 'm' TO SCHEMA s WITH JAQ TRANSFORMATIONS ON INGESTION '.'",
			"2:62: codec c: resource bundle version 1 does not compile: path \"../x\" leaves the resource root"},
	}
	for _, tt := range tests {
		cat := catalog.NewWithResources(set)
		_, err := cat.Exec(tt.defs)
		if err == nil || err.Error() != tt.want {
			t.Errorf("%s\n got: %v\nwant: %s", tt.defs, err, tt.want)
		}
	}
	// all .proto files of the resource, named relative to the most specific
	// import root
	cat := catalog.NewWithResources(set)
	if _, err := cat.Exec(eventSchema + "CREATE CODEC c FROM PROTOBUF USING RESOURCE bundle VERSION 1 CONFIG {'includes' = ['protos', 'shared']} MESSAGE 'common.Level' TO SCHEMA s WITH JAQ TRANSFORMATIONS ON INGESTION '.'"); err == nil ||
		!strings.Contains(err.Error(), "MESSAGE 'common.Level' names a enum, not a message") {
		t.Errorf("all files: %v", err)
	}
}
