package resource

import (
	"os"
	"path/filepath"
	"testing"
)

func TestSet(t *testing.T) {
	s := NewSet()
	if err := s.Add("b", 1, Files{"a.proto": nil}); err != nil {
		t.Fatal(err)
	}
	if err := s.Add("b", 3, Files{"x/a.proto": nil}); err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		name    string
		version int
		files   Files
		want    string
	}{
		{"b", 1, nil, "resource b version 1 is declared twice"},
		{"b", 0, nil, "resource b: version 0: versions start at 1"},
		{"c", 1, Files{"../a": nil}, `resource c version 1: path "../a" leaves the resource root`},
		{"c", 1, Files{"/a": nil}, `resource c version 1: path "/a" must be relative to the resource root`},
	} {
		if err := s.Add(tc.name, tc.version, tc.files); err == nil || err.Error() != tc.want {
			t.Errorf("Add(%s, %d) = %v, want %s", tc.name, tc.version, err, tc.want)
		}
	}
	if r, err := s.Lookup("b", 0); err != nil || r.Version != 3 {
		t.Errorf("LATEST: %v %v", r, err)
	}
	if _, err := s.Lookup("b", 2); err == nil || err.Error() != "resource b has no version 2 (it has 1, 3)" {
		t.Errorf("missing version: %v", err)
	}
	var none *Set
	if _, err := none.Lookup("b", 1); err == nil {
		t.Error("nil set")
	}
}

func TestParseSpecAndLoad(t *testing.T) {
	for _, tc := range []struct {
		spec, name, dir string
		version         int
		err             bool
	}{
		{"b=dir", "b", "dir", 1, false},
		{"b@4=d/e", "b", "d/e", 4, false},
		{"b@0=d", "", "", 0, true},
		{"=d", "", "", 0, true},
		{"b", "", "", 0, true},
		{"@2=d", "", "", 0, true},
	} {
		name, v, dir, err := ParseSpec(tc.spec)
		if (err != nil) != tc.err || name != tc.name || v != tc.version || dir != tc.dir {
			t.Errorf("ParseSpec(%q) = %q %d %q %v", tc.spec, name, v, dir, err)
		}
	}
	dir := t.TempDir()
	if err := os.MkdirAll(filepath.Join(dir, "a", "b"), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(dir, "a", "b", "x.proto"), []byte("x"), 0o644); err != nil {
		t.Fatal(err)
	}
	files, err := LoadDir(dir)
	if err != nil || len(files) != 1 || string(files["a/b/x.proto"]) != "x" {
		t.Errorf("LoadDir: %v %v", files, err)
	}
	if _, err := LoadDir(filepath.Join(dir, "nope")); err == nil {
		t.Error("missing directory")
	}
}
