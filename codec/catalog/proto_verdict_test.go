package catalog

import (
	"testing"

	"github.com/herald-gateway/herald/codec/resource"
)

// TestProtobufVerdictByFieldNumber checks the schema-evolution rule "A
// position is forever. Append new fields at the end. Never insert,
// reorder or delete. Renaming is free: names never travel." where the
// positions are protobuf field numbers: `herald codec diff` judges a
// protobuf codec whose descriptors changed by field number, and says so.
func TestProtobufVerdictByFieldNumber(t *testing.T) {
	const head = "syntax = \"proto3\";\npackage t;\nmessage Inner { int32 x = 1; int32 y = 2; }\n"
	const oldMsg = "message M { uint32 a = 1; uint32 b = 2; string s = 3; Inner in = 4; }\n"
	build := func(proto string) *Catalog {
		set := resource.NewSet()
		if err := set.Add("bundle", 1, resource.Files{"m.proto": []byte(head + proto)}); err != nil {
			t.Fatal(err)
		}
		c := NewWithResources(set)
		mustExec(t, c, `CREATE SCHEMA s (a U32 OPTIONAL);
CREATE CODEC p FROM PROTOBUF USING RESOURCE bundle VERSION 1 CONFIG {'file' = 'm.proto'} MESSAGE 't.M'
  TO SCHEMA s WITH JAQ TRANSFORMATIONS ON INGESTION '{a: .a}';`)
		return c
	}
	old := build(oldMsg)
	const compatible = "CODEC p via PROTOBUF (by field number): backward compatible, forward compatible\n"
	tests := []struct{ name, proto, want string }{
		{"swap two numbers of one type", "message M { uint32 b = 1; uint32 a = 2; string s = 3; Inner in = 4; }\n",
			"CODEC p via PROTOBUF (by field number): backward BREAKING, forward BREAKING\n" +
				"  backward: MESSAGE t.M: field number 1: old payloads hold a there, which the new message reads as b (fields renumbered: a number is forever)\n" +
				"  forward: MESSAGE t.M: field number 1: new payloads hold b there, which old readers read as a (fields renumbered)\n" +
				"  backward: MESSAGE t.M: field number 2: old payloads hold b there, which the new message reads as a (fields renumbered: a number is forever)\n" +
				"  forward: MESSAGE t.M: field number 2: new payloads hold a there, which old readers read as b (fields renumbered)\n"},
		{"swap inside a nested message", "message M { uint32 a = 1; uint32 b = 2; string s = 3; Inner2 in = 4; }\nmessage Inner2 { int32 y = 1; int32 x = 2; }\n",
			"CODEC p via PROTOBUF (by field number): backward BREAKING, forward BREAKING\n" +
				"  backward: MESSAGE t.M: field 4 (in).field number 1: old payloads hold x there, which the new message reads as y (fields renumbered: a number is forever)\n" +
				"  forward: MESSAGE t.M: field 4 (in).field number 1: new payloads hold y there, which old readers read as x (fields renumbered)\n" +
				"  backward: MESSAGE t.M: field 4 (in).field number 2: old payloads hold y there, which the new message reads as x (fields renumbered: a number is forever)\n" +
				"  forward: MESSAGE t.M: field 4 (in).field number 2: new payloads hold x there, which old readers read as y (fields renumbered)\n"},
		{"rename", "message M { uint32 a2 = 1; uint32 b = 2; string s = 3; Inner in = 4; }\n", compatible},
		{"append", "message M { uint32 a = 1; uint32 b = 2; string s = 3; Inner in = 4; bool d = 5; }\n", compatible},
		{"delete, number reserved", "message M { reserved 3; uint32 a = 1; uint32 b = 2; Inner in = 4; }\n", compatible},
		{"delete", "message M { uint32 a = 1; uint32 b = 2; Inner in = 4; }\n",
			"CODEC p via PROTOBUF (by field number): backward BREAKING, forward compatible\n" +
				"  backward: MESSAGE t.M: field 3 (s) is deleted without reserving its number: a field that later takes number 3 reads the values old payloads hold there (reserve the number, or keep the field)\n"},
		{"widen and change a type", "message M { uint64 a = 1; uint32 b = 2; int32 s = 3; Inner in = 4; }\n",
			"CODEC p via PROTOBUF (by field number): backward BREAKING, forward BREAKING\n" +
				"  forward: MESSAGE t.M: field 1 (a): new values of uint64 cannot be read as uint32 for old readers\n" +
				"  backward: MESSAGE t.M: field 3 (s): old values of string cannot be read as int32\n" +
				"  forward: MESSAGE t.M: field 3 (s): new values of int32 cannot be read as string for old readers\n"},
		{"repeated", "message M { repeated uint32 a = 1; uint32 b = 2; string s = 3; Inner in = 4; }\n",
			"CODEC p via PROTOBUF (by field number): backward BREAKING, forward BREAKING\n" +
				"  backward: MESSAGE t.M: field 1 (a): old values of a singular field cannot be read as a repeated one\n" +
				"  forward: MESSAGE t.M: field 1 (a): new values of a repeated field cannot be read as a singular one for old readers\n"},
	}
	for _, tt := range tests {
		var got string
		for _, ch := range Diff(old, build(tt.proto)) {
			if ch.Key != codecKey("p") {
				continue
			}
			if ch.Kind != Changed || len(ch.Verdicts) != 1 {
				t.Fatalf("%s: %+v", tt.name, ch)
			}
			got = ch.Verdicts[0].String()
		}
		if got != tt.want {
			t.Errorf("%s:\n got:\n%s\nwant:\n%s", tt.name, got, tt.want)
		}
	}
}
