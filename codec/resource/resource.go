// Package resource owns codec resources: named, versioned bundles of
// files (the .proto sources of protobuf codecs), declared in the config
// file or loaded from directories by `herald codec --resource`. A Set is
// filled at start-up and read-only afterwards; a codec stores the one
// version it compiled from.
//
// It must not interpret the files it holds: compiling them belongs to the
// codec formats that use them.
package resource

import (
	"crypto/sha256"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path"
	"path/filepath"
	"sort"
	"strconv"
	"strings"
)

// Limits on what LoadDir reads.
const (
	MaxFiles     = 10000
	MaxTotalSize = 64 << 20
)

// Files maps a slash-separated path relative to the resource root to the
// file's content.
type Files map[string][]byte

// Resource is one version of a named resource.
type Resource struct {
	Name    string
	Version int
	Files   Files
}

// Set holds resources by name and version. Fill it with Add before use;
// it is safe for concurrent reads once filled.
type Set struct {
	m map[string]map[int]*Resource
}

// NewSet returns an empty set.
func NewSet() *Set { return &Set{m: map[string]map[int]*Resource{}} }

// Add stores version (≥ 1) of resource name.
func (s *Set) Add(name string, version int, files Files) error {
	if name == "" {
		return errors.New("resource: a resource needs a name")
	}
	if version < 1 {
		return fmt.Errorf("resource %s: version %d: versions start at 1", name, version)
	}
	for p := range files {
		if err := CheckPath(p); err != nil {
			return fmt.Errorf("resource %s version %d: %w", name, version, err)
		}
	}
	if s.m[name] == nil {
		s.m[name] = map[int]*Resource{}
	}
	if s.m[name][version] != nil {
		return fmt.Errorf("resource %s version %d is declared twice", name, version)
	}
	s.m[name][version] = &Resource{Name: name, Version: version, Files: files}
	return nil
}

// Lookup returns version of resource name; version 0 means the latest.
func (s *Set) Lookup(name string, version int) (*Resource, error) {
	if s == nil || s.m[name] == nil {
		return nil, fmt.Errorf("resource %s does not exist (declare it in the config file, or pass --resource %s=DIR)", name, name)
	}
	vs := s.m[name]
	if version == 0 {
		for v := range vs {
			version = max(version, v)
		}
	}
	r := vs[version]
	if r == nil {
		have := make([]int, 0, len(vs))
		for v := range vs {
			have = append(have, v)
		}
		sort.Ints(have)
		return nil, fmt.Errorf("resource %s has no version %d (it has %s)", name, version, ints(have))
	}
	return r, nil
}

// Canonical renders the resource version as it enters the fingerprint of
// a codec compiled from it: one line naming the resource and its version,
// then one line per file, sorted by path, with the SHA-256 of its content
// (paths and the name in Go's double-quoted form). Every line is a
// comment of the statement language, so a codec's canonical form stays
// statement text:
//
//	-- RESOURCE "proto_bundle" VERSION 1
//	--   FILE "notification.proto" SHA256 9f86d081884c7d65…
func (r *Resource) Canonical() string {
	paths := make([]string, 0, len(r.Files))
	for p := range r.Files {
		paths = append(paths, p)
	}
	sort.Strings(paths)
	var b strings.Builder
	fmt.Fprintf(&b, "-- RESOURCE %s VERSION %d", strconv.Quote(r.Name), r.Version)
	for _, p := range paths {
		fmt.Fprintf(&b, "\n--   FILE %s SHA256 %x", strconv.Quote(p), sha256.Sum256(r.Files[p]))
	}
	return b.String()
}

func ints(xs []int) string {
	s := make([]string, len(xs))
	for i, x := range xs {
		s[i] = strconv.Itoa(x)
	}
	return strings.Join(s, ", ")
}

// CheckPath refuses a path that is empty, absolute, not clean or leaves
// the resource root.
func CheckPath(p string) error {
	if p == "" {
		return errors.New("a path cannot be empty")
	}
	if strings.HasPrefix(p, "/") || strings.Contains(p, "\\") || filepath.IsAbs(p) {
		return fmt.Errorf("path %q must be relative to the resource root", p)
	}
	c := path.Clean(p)
	if c == ".." || strings.HasPrefix(c, "../") {
		return fmt.Errorf("path %q leaves the resource root", p)
	}
	return nil
}

// LoadDir reads every regular file under dir into Files.
func LoadDir(dir string) (Files, error) {
	files := Files{}
	total := 0
	err := filepath.WalkDir(dir, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if !d.Type().IsRegular() {
			return nil
		}
		rel, err := filepath.Rel(dir, p)
		if err != nil {
			return err
		}
		if len(files) >= MaxFiles {
			return fmt.Errorf("more than %d files", MaxFiles)
		}
		b, err := os.ReadFile(p)
		if err != nil {
			return err
		}
		if total += len(b); total > MaxTotalSize {
			return fmt.Errorf("more than %d bytes", MaxTotalSize)
		}
		files[filepath.ToSlash(rel)] = b
		return nil
	})
	if err != nil {
		return nil, fmt.Errorf("resource directory %s: %w", dir, err)
	}
	return files, nil
}

// ParseSpec reads a --resource value: NAME=DIR (version 1) or
// NAME@N=DIR.
func ParseSpec(spec string) (name string, version int, dir string, err error) {
	lhs, dir, ok := strings.Cut(spec, "=")
	if !ok || lhs == "" || dir == "" {
		return "", 0, "", fmt.Errorf("--resource %q: expected NAME=DIR or NAME@VERSION=DIR", spec)
	}
	name, v, hasV := strings.Cut(lhs, "@")
	version = 1
	if hasV {
		n, err := strconv.Atoi(v)
		if err != nil || n < 1 {
			return "", 0, "", fmt.Errorf("--resource %q: the version must be a number from 1", spec)
		}
		version = n
	}
	if name == "" {
		return "", 0, "", fmt.Errorf("--resource %q: expected NAME=DIR or NAME@VERSION=DIR", spec)
	}
	return name, version, dir, nil
}
