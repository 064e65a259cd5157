package configs

import (
	"bytes"
	"cmp"
	"errors"
	"fmt"
	"io"
	"math"
	"os"
	"path/filepath"
	"reflect"
	"slices"
	"strings"

	"go.yaml.in/yaml/v3"
)

// Config file locations, in the order ResolvePath tries them.
const (
	// DefaultPath is the config file used when neither --config nor an
	// environment variable names one.
	DefaultPath = "configs/config.yaml"
	// AvisoDefaultPath is Aviso's own default location, used when
	// DefaultPath does not exist so that an Aviso checkout layout works.
	AvisoDefaultPath = "configuration/config.yaml"
	// EnvConfigFile names the config file (herald's variable).
	EnvConfigFile = "HERALD_CONFIG_FILE"
	// EnvAvisoConfigFile names the config file (Aviso's variable).
	EnvAvisoConfigFile = "AVISOSERVER_CONFIG_FILE"
)

// ResolvePath chooses the config file: the --config flag when given, else
// HERALD_CONFIG_FILE, else AVISOSERVER_CONFIG_FILE, else DefaultPath (or
// AvisoDefaultPath when only that one exists). A file named by the flag or
// a variable must exist; a variable that is set but empty is an error, as
// in Aviso. env holds "KEY=value" entries (os.Environ()).
func ResolvePath(flag string, env []string) (string, error) {
	if flag != "" {
		if err := mustBeFile(flag); err != nil {
			return "", fmt.Errorf("--config: %w", err)
		}
		return flag, nil
	}
	for _, name := range []string{EnvConfigFile, EnvAvisoConfigFile} {
		v, ok := lookupEnv(env, name)
		if !ok {
			continue
		}
		v = strings.TrimSpace(v)
		if v == "" {
			return "", fmt.Errorf("%s is set but empty; unset it or name a config file", name)
		}
		if err := mustBeFile(v); err != nil {
			return "", fmt.Errorf("%s: %w", name, err)
		}
		return v, nil
	}
	if _, err := os.Stat(DefaultPath); err != nil {
		if st, err := os.Stat(AvisoDefaultPath); err == nil && st.Mode().IsRegular() {
			return AvisoDefaultPath, nil
		}
	}
	return DefaultPath, nil
}

// mustBeFile checks that path names an existing regular file.
func mustBeFile(path string) error {
	st, err := os.Stat(path)
	if err != nil {
		return fmt.Errorf("config file: %w", err)
	}
	if !st.Mode().IsRegular() {
		return fmt.Errorf("config file %s is not a regular file", path)
	}
	return nil
}

// Load reads the config file at path and returns the configuration:
// the file decoded strictly onto Default(), then the environment
// overrides of env (see ApplyEnv), then Validate. Any problem makes it
// fail; the error wraps Problems when the file could be read and parsed
// as YAML.
//
// The relative paths of the codecs block (codecs.definitions and each
// codecs.resources[].dir, whether written in the file or set by an
// override) are then resolved against the directory of the config file,
// as Prometheus resolves rule_files, so a config finds its codec files
// whatever the working directory; absolute paths are kept. Every user of
// the returned Config (the codec loader, the fingerprint, check-config,
// their error messages) sees the resolved paths. Parse, which has no
// file, leaves them as written (relative to the working directory).
func Load(path string, env []string) (*Config, error) {
	data, err := os.ReadFile(path)
	if err != nil {
		return nil, fmt.Errorf("read config file: %w", err)
	}
	c, err := Parse(data, env)
	if err != nil {
		return nil, fmt.Errorf("config file %s: %w", path, err)
	}
	c.Codecs.resolvePaths(filepath.Dir(path))
	return c, nil
}

// resolvePaths makes the relative paths of the codecs block relative to
// dir (the config file's directory) instead of the working directory.
func (c *Codecs) resolvePaths(dir string) {
	if c == nil {
		return
	}
	c.Definitions = resolvePath(dir, c.Definitions)
	for i := range c.Resources {
		c.Resources[i].Dir = resolvePath(dir, c.Resources[i].Dir)
	}
}

// resolvePath joins a relative, non-empty path p to dir.
func resolvePath(dir, p string) string {
	if p == "" || filepath.IsAbs(p) {
		return p
	}
	return filepath.Join(dir, p)
}

// Parse is Load on the bytes of a config file.
func Parse(data []byte, env []string) (*Config, error) {
	root, err := parseDocument(data)
	if err != nil {
		return nil, err
	}
	c := Default()
	d := newDecoder()
	d.mapping(root, reflect.ValueOf(&c).Elem(), "")
	if len(d.problems) > 0 {
		// Duplicate keys are found before the values of their first
		// occurrence are decoded; report in file order.
		slices.SortStableFunc(d.problems, func(a, b Problem) int { return cmp.Compare(sortLine(a), sortLine(b)) })
		return nil, d.problems
	}
	if ps := applyEnv(&c, env, d.lines); len(ps) > 0 {
		return nil, ps
	}
	if ps := c.validate(d.lines); len(ps) > 0 {
		return nil, ps
	}
	return &c, nil
}

// parseDocument parses data as a single YAML document whose root is a
// mapping and returns that mapping.
func parseDocument(data []byte) (*yaml.Node, error) {
	dec := yaml.NewDecoder(bytes.NewReader(data))
	var doc yaml.Node
	if err := dec.Decode(&doc); err != nil {
		if errors.Is(err, io.EOF) {
			return nil, errors.New("the config is empty; it needs at least application.host, application.port and notification_backend.kind")
		}
		return nil, fmt.Errorf("invalid YAML: %w", err)
	}
	var next yaml.Node
	switch err := dec.Decode(&next); {
	case err == nil:
		return nil, fmt.Errorf("the config holds more than one YAML document (the second starts at line %d); herald reads exactly one", max(next.Line, 1))
	case !errors.Is(err, io.EOF):
		return nil, fmt.Errorf("invalid YAML: %w", err)
	}
	if doc.Kind != yaml.DocumentNode || len(doc.Content) != 1 {
		return nil, errors.New("the config is not a YAML document")
	}
	root := doc.Content[0]
	for hops := 0; root.Kind == yaml.AliasNode && root.Alias != nil && hops < maxAliasHops; hops++ {
		root = root.Alias
	}
	if isNull(root) {
		return nil, errors.New("the config is empty; it needs at least application.host, application.port and notification_backend.kind")
	}
	if root.Kind != yaml.MappingNode {
		return nil, fmt.Errorf("the config must be a mapping of sections (application, notification_backend, ...), got %s (line %d)", describe(root), root.Line)
	}
	return root, nil
}

// sortLine orders problems without a line last.
func sortLine(p Problem) int {
	if p.Line <= 0 {
		return math.MaxInt
	}
	return p.Line
}
