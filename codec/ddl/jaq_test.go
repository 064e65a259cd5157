package ddl

import (
	"testing"

	"github.com/herald-gateway/herald/codec/types"
)

func TestParseJaqCodecs(t *testing.T) {
	src := "CREATE CODEC c FROM JSON TO SCHEMA s WITH JAQ TRANSFORMATIONS\n  ON INGESTION $$.x$$ ON EMITTING $a$'it''s'$a$\n  ON EMITTING BATCH 'map(\n{id: .})  | ''x''';\n" +
		"CREATE CODEC p FROM PROTOBUF USING RESOURCE r VERSION LATEST CONFIG {'file' = 'a.proto', 'includes' = ['x', 'y']} MESSAGE 'm' BATCH MESSAGE 'b' TO SCHEMA s WITH JAQ TRANSFORMATIONS ON INGESTION '.'"
	stmts, err := Parse(src)
	if err != nil {
		t.Fatal(err)
	}
	cc := stmts[0].(*CreateCodec)
	j := cc.Codec.Jaq
	if cc.Codec.Format != types.JSON || j.Programs[0].Text != ".x" || j.Programs[1].Text != "'it''s'" || j.Programs[2].Text != "map(\n{id: .})  | 'x'" {
		t.Fatalf("programs %+v", j.Programs)
	}
	// positions inside programs: dollar-quoted content starts after the
	// tag; in a quoted literal '' is one byte of the program
	for _, tc := range []struct {
		d    types.Direction
		off  int
		want string
	}{{types.Ingestion, 0, "2:18"}, {types.Ingestion, 1, "2:19"}, {types.Emitting, 3, "2:41"}, {types.EmittingBatch, 5, "4:1"}, {types.EmittingBatch, 15, "4:11"}, {types.EmittingBatch, 16, "4:12"}, {types.EmittingBatch, 17, "4:13"}, {types.EmittingBatch, 18, "4:15"}} {
		if got := cc.ProgramPos(tc.d, tc.off).String(); got != tc.want {
			t.Errorf("ProgramPos(%s, %d) = %s, want %s", tc.d, tc.off, got, tc.want)
		}
	}
	pc := stmts[1].(*CreateCodec)
	pr := pc.Codec.Proto
	if pc.Codec.Format != types.PROTOBUF || pr.Resource != "r" || pr.Version != 0 || pr.Message != "m" || pr.BatchMessage != "b" ||
		len(pr.Files()) != 1 || len(pr.Includes()) != 2 {
		t.Fatalf("proto %+v", pr)
	}
	if got := types.CreateCodec(pc.Codec); got != "CREATE CODEC p\n  FROM PROTOBUF\n  USING RESOURCE r VERSION LATEST\n  CONFIG {'file' = 'a.proto', 'includes' = ['x', 'y']}\n  MESSAGE 'm'\n  BATCH MESSAGE 'b'\n  TO SCHEMA s\n  WITH JAQ TRANSFORMATIONS\n    ON INGESTION '.';" {
		t.Errorf("SHOW CREATE:\n%s", got)
	}
	if got := types.CreateCodec(cc.Codec); got != "CREATE CODEC c\n  FROM JSON\n  TO SCHEMA s\n  WITH JAQ TRANSFORMATIONS\n    ON INGESTION '.x'\n    ON EMITTING $jaq$'it''s'$jaq$\n    ON EMITTING BATCH $jaq$map(\n{id: .})  | 'x'$jaq$;" {
		t.Errorf("SHOW CREATE:\n%s", got)
	}
}
