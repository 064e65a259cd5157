package catalog

import "testing"

// TestJaqProgramErrors: a program that does not compile fails CREATE
// CODEC at the position the jq compiler names, inside the program.
func TestJaqProgramErrors(t *testing.T) {
	const s = "CREATE SCHEMA s (a U8);\n"
	tests := []struct{ src, want string }{
		{s + "CREATE CODEC c FROM JSON TO SCHEMA s WITH JAQ TRANSFORMATIONS ON INGESTION '.a | ]'",
			`2:82: ON INGESTION program does not compile: unexpected token "]"`},
		{s + "CREATE CODEC c FROM YAML TO SCHEMA s WITH JAQ TRANSFORMATIONS\n  ON EMITTING $jaq${a: .a,\n  b: frob(1)}$jaq$",
			"4:6: ON EMITTING program does not compile: function not defined: frob/1"},
		{s + "CREATE CODEC c FROM TOML TO SCHEMA s WITH JAQ TRANSFORMATIONS ON EMITTING '.' ON EMITTING BATCH '{a: $x}'",
			"2:102: ON EMITTING BATCH program does not compile: variable not defined: $x"},
		{s + "CREATE CODEC c FROM XML TO SCHEMA s WITH JAQ TRANSFORMATIONS ON INGESTION '{a: (\"x\" | input)}'",
			"2:87: ON INGESTION program does not compile: input(s)/0 is not allowed"},
		{s + "CREATE CODEC c FROM CBOR TO SCHEMA s WITH JAQ TRANSFORMATIONS ON INGESTION '. as [$a'",
			"2:85: ON INGESTION program does not compile: unexpected EOF"},
		{s + "CREATE CODEC c FROM JSON TO SCHEMA t WITH JAQ TRANSFORMATIONS ON INGESTION '.'",
			"2:1: codec c uses SCHEMA t, which does not exist: drop or recreate the codec too"},
	}
	for _, tt := range tests {
		_, err := New().Exec(tt.src)
		if err == nil || err.Error() != tt.want {
			t.Errorf("%s\n got: %v\nwant: %s", tt.src, err, tt.want)
		}
	}
	// a JAQ codec depends on its schema like any codec
	c := New()
	if _, err := c.Exec(s + "CREATE CODEC c FROM JSON TO SCHEMA s WITH JAQ TRANSFORMATIONS ON INGESTION '.'"); err != nil {
		t.Fatal(err)
	}
	if _, err := c.Exec("DROP SCHEMA s"); err == nil || err.Error() != "1:1: codec c uses SCHEMA s, which does not exist: drop or recreate the codec too (change a codec and its schemas together in one BEGIN … COMMIT)" {
		t.Errorf("drop: %v", err)
	}
	if _, err := c.Exec("ALTER SCHEMA s ADD FIELD b STRING"); err != nil {
		t.Errorf("a JAQ codec binds by name at run time, so ALTER succeeds: %v", err)
	}
}
