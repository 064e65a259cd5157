package catalog

import (
	"crypto/sha256"
	"encoding/hex"
	"strings"
	"testing"

	"github.com/herald-gateway/herald/codec/ddl"
	"github.com/herald-gateway/herald/codec/resource"
	"github.com/herald-gateway/herald/codec/types"
)

// The schema-evolution rule these tests check: a schema id is a
// fingerprint of "its canonical form …, followed by the canonical form of
// every other entity it references by name …: a change to Address changes
// the id of a User that references it, so a registry or a handshake tells
// the two versions apart." A codec references its wire schema (or the
// resource version its descriptors come from) and its internal schema.

func codecKey(name string) Key { return Key{Kind: ddl.KindCodec, Name: name} }

func fingerprint(t *testing.T, c *Catalog, k Key) types.Fingerprint {
	t.Helper()
	fp, ok := c.Fingerprint(k)
	if !ok {
		t.Fatalf("%s does not exist", k)
	}
	return fp
}

// TestCodecFingerprintCoversReferences: changing any entity a codec
// references changes the codec's ids (both of them) while its own SHOW
// CREATE text stays the same; changing an entity it does not reference
// leaves them alone.
func TestCodecFingerprintCoversReferences(t *testing.T) {
	const defs = `
CREATE SCHEMA s (a U32, b STRING OPTIONAL);
CREATE WIRE JSON SCHEMA w MODE STRICT (a integer, b string OPTIONAL);
CREATE WIRE AVRO SCHEMA w (a LONG, b STRING OPTIONAL);
CREATE SCHEMA ev (facility U8, severity U8, message STRING);
CREATE SCHEMA other (x U8);
CREATE CODEC wire_json FROM WIRE JSON SCHEMA w TO SCHEMA s;
CREATE CODEC wire_avro FROM WIRE AVRO SCHEMA w TO SCHEMA s;
CREATE CODEC jaq FROM YAML TO SCHEMA s WITH JAQ TRANSFORMATIONS ON INGESTION '.';
CREATE CODEC sys FROM SYSLOG TO SCHEMA ev;
`
	tests := []struct {
		change  string
		changed []string // the codecs whose ids must change; the others keep theirs
	}{
		{"ALTER SCHEMA s ADD FIELD c STRING OPTIONAL", []string{"wire_json", "wire_avro", "jaq"}},
		{"ALTER SCHEMA s RENAME FIELD b TO b2", []string{"wire_json", "wire_avro", "jaq"}},
		{"ALTER SCHEMA s ALTER FIELD a SET SENSITIVE", []string{"wire_json", "wire_avro", "jaq"}},
		{"ALTER WIRE JSON SCHEMA w MODE LOOSE", []string{"wire_json"}},
		{"ALTER WIRE JSON SCHEMA w ALTER FIELD a SET TYPE U32", []string{"wire_json"}},
		{"ALTER WIRE AVRO SCHEMA w ADD FIELD c STRING OPTIONAL", []string{"wire_avro"}},
		{"ALTER SCHEMA ev ADD FIELD hostname STRING OPTIONAL", []string{"sys"}},
		{"ALTER SCHEMA other ADD FIELD y U8 OPTIONAL", nil},
	}
	codecs := []string{"wire_json", "wire_avro", "jaq", "sys"}
	for _, tt := range tests {
		c := New()
		mustExec(t, c, defs)
		before := map[string]types.Fingerprint{}
		shows := map[string]string{}
		for _, n := range codecs {
			before[n] = fingerprint(t, c, codecKey(n))
			shows[n], _ = c.ShowCreate(codecKey(n))
		}
		mustExec(t, c, tt.change)
		for _, n := range codecs {
			after := fingerprint(t, c, codecKey(n))
			if show, _ := c.ShowCreate(codecKey(n)); show != shows[n] {
				t.Fatalf("%s: the SHOW CREATE text of codec %s changed", tt.change, n)
			}
			want := false
			for _, m := range tt.changed {
				want = want || m == n
			}
			if got64, got32 := after.ID64 != before[n].ID64, after.ID32 != before[n].ID32; got64 != want || got32 != want {
				t.Errorf("%s: codec %s: id changed (sha256/64 %v, fnv1a32 %v), want %v", tt.change, n, got64, got32, want)
			}
		}
	}
}

// TestCodecCanonicalForm pins the canonical form of a declared wire codec:
// the codec's SHOW CREATE text, then its wire schema's, then its internal
// schema's, and checks that a codec's canonical form reads back, as one
// transaction, to a catalog where the codec has the same fingerprint.
func TestCodecCanonicalForm(t *testing.T) {
	c := New()
	mustExec(t, c, base)
	got, _ := c.Canonical(codecKey("notification_codec"))
	want := `CREATE CODEC notification_codec
  FROM WIRE JSON SCHEMA notification_wire
  TO SCHEMA notification
  ENCODE created_at AS RFC3339;
CREATE WIRE JSON SCHEMA notification_wire MODE STRICT (
  user_id integer,
  created_at string,
  payload string OPTIONAL
);
CREATE SCHEMA notification (
  user_id U32,
  created_at DATETIME,
  payload STRING OPTIONAL
);`
	if got != want {
		t.Fatalf("canonical form:\n%s\nwant:\n%s", got, want)
	}
	fp := fingerprint(t, c, codecKey("notification_codec"))
	if fp.Canonical != want || fp.ID64 != types.SHA256x64(want) || fp.ID32 != types.FNV1a32(want) {
		t.Fatalf("fingerprint %+v is not computed over the canonical form", fp)
	}
	// internal and wire schemas reference nothing: their canonical form
	// is their SHOW CREATE text
	for _, k := range []Key{{Kind: ddl.KindSchema, Name: "notification"}, {Kind: ddl.KindWire, Format: types.JSON, Name: "notification_wire"}} {
		show, _ := c.ShowCreate(k)
		if canon, _ := c.Canonical(k); canon != show {
			t.Errorf("%s: canonical form %q, want its SHOW CREATE text", k, canon)
		}
	}
	c2 := New()
	mustExec(t, c2, "BEGIN;\n"+want+"\nCOMMIT;")
	if fp2 := fingerprint(t, c2, codecKey("notification_codec")); fp2 != fp {
		t.Fatalf("rebuilt from its canonical form: %+v, want %+v", fp2, fp)
	}
}

// TestProtobufCodecFingerprint: a protobuf codec references the resource
// version it compiled its descriptors from; a change to any file of that
// version, or LATEST resolving to another version, changes its ids.
func TestProtobufCodecFingerprint(t *testing.T) {
	const proto = "syntax = \"proto3\";\npackage t;\nmessage M { uint32 a = 1; }\n"
	set := func(versions ...resource.Files) *resource.Set {
		s := resource.NewSet()
		for i, f := range versions {
			if err := s.Add("bundle", i+1, f); err != nil {
				t.Fatal(err)
			}
		}
		return s
	}
	const defs = `CREATE SCHEMA s (a U32);
CREATE CODEC p FROM PROTOBUF USING RESOURCE bundle VERSION LATEST CONFIG {'file' = 'm.proto'} MESSAGE 't.M'
  TO SCHEMA s WITH JAQ TRANSFORMATIONS ON INGESTION '{a: .a}';`
	build := func(s *resource.Set) *Catalog {
		c := NewWithResources(s)
		mustExec(t, c, defs)
		return c
	}
	v1 := resource.Files{"m.proto": []byte(proto), "README": []byte("notes")}
	base := build(set(v1))
	canon, _ := base.Canonical(codecKey("p"))
	show, _ := base.ShowCreate(codecKey("p"))
	schema, _ := base.ShowCreate(Key{Kind: ddl.KindSchema, Name: "s"})
	want := show + "\n" +
		"-- RESOURCE \"bundle\" VERSION 1\n" +
		"--   FILE \"README\" SHA256 " + sha256hex("notes") + "\n" +
		"--   FILE \"m.proto\" SHA256 " + sha256hex(proto) + "\n" +
		schema
	if canon != want {
		t.Fatalf("canonical form:\n%s\nwant:\n%s", canon, want)
	}
	fp := fingerprint(t, base, codecKey("p"))
	if same := fingerprint(t, build(set(resource.Files{"m.proto": []byte(proto), "README": []byte("notes")})), codecKey("p")); same != fp {
		t.Errorf("the same resource content gave another fingerprint: %+v", same)
	}
	for name, s := range map[string]*resource.Set{
		"a file's content":        set(resource.Files{"m.proto": []byte(proto + "message N { string b = 1; }\n"), "README": []byte("notes")}),
		"a file added":            set(resource.Files{"m.proto": []byte(proto), "README": []byte("notes"), "n.proto": []byte("syntax = \"proto3\";\n")}),
		"LATEST is now version 2": set(v1, v1),
	} {
		got := fingerprint(t, build(s), codecKey("p"))
		if got.ID64 == fp.ID64 || got.ID32 == fp.ID32 {
			t.Errorf("%s changed, the codec's fingerprint did not: %+v", name, got)
		}
	}
}

// TestDiffNamesWhatChangedInACodec: `herald codec diff` says which parts
// of a changed codec's canonical form changed.
func TestDiffNamesWhatChangedInACodec(t *testing.T) {
	old := New()
	mustExec(t, old, base)
	cur := New()
	mustExec(t, cur, strings.Replace(base, "payload STRING OPTIONAL", "payload STRING OPTIONAL SENSITIVE", 1))
	for _, ch := range Diff(old, cur) {
		if ch.Key != codecKey("notification_codec") {
			continue
		}
		if ch.Kind != Changed || strings.Join(ch.Via, "; ") != "SCHEMA notification" {
			t.Fatalf("%+v", ch)
		}
		of, nf := fingerprint(t, old, ch.Key), fingerprint(t, cur, ch.Key)
		if want := "CODEC notification_codec: changed (" + of.ID64 + " -> " + nf.ID64 + ")\n  changed in its canonical form: SCHEMA notification\n"; ch.String() != want {
			t.Fatalf("%q\nwant %q", ch.String(), want)
		}
		return
	}
	t.Fatal("no change for the codec")
}

func sha256hex(s string) string {
	sum := sha256.Sum256([]byte(s))
	return hex.EncodeToString(sum[:])
}
