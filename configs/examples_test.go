package configs

import (
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"testing"
)

// TestShippedConfigsLoad loads configs/config.yaml and every file of
// configs/examples from disk, and checks that the embedded copies are the
// same files.
func TestShippedConfigsLoad(t *testing.T) {
	files, err := filepath.Glob("examples/*.yaml")
	if err != nil {
		t.Fatal(err)
	}
	files = append([]string{"config.yaml"}, files...)
	if len(files) < 6 {
		t.Fatalf("only %d shipped config files", len(files))
	}
	for _, f := range files {
		t.Run(f, func(t *testing.T) {
			c, err := Load(f, nil)
			if err != nil {
				t.Fatal(err)
			}
			disk, err := os.ReadFile(f)
			if err != nil {
				t.Fatal(err)
			}
			embedded, err := fs.ReadFile(shipped, f)
			if err != nil || string(embedded) != string(disk) {
				t.Fatalf("embedded copy of %s differs or is missing: %v", f, err)
			}
			if c.Application.Port == 0 || c.NotificationBackend.Kind == "" {
				t.Fatalf("incomplete config: %+v", c.Application)
			}
		})
	}
}

// TestShippedConfigsCoverage checks that the shipped files together use
// every handler, both backends, both auth modes, stream roles, plugins,
// storage policies, point clouds and a schema-less non-strict setup.
func TestShippedConfigsCoverage(t *testing.T) {
	seen := map[string]bool{}
	err := fs.WalkDir(shipped, ".", func(path string, d fs.DirEntry, err error) error {
		if err != nil || d.IsDir() {
			return err
		}
		b, err := fs.ReadFile(shipped, path)
		if err != nil {
			return err
		}
		c, err := Parse(b, nil)
		if err != nil {
			t.Errorf("%s: %v", path, err)
			return nil
		}
		seen["backend "+c.NotificationBackend.Kind] = true
		if c.Auth.Enabled {
			seen["auth "+c.Auth.Mode] = true
		}
		if !c.Strict() && len(c.NotificationSchema) == 0 {
			seen["schema-less"] = true
		}
		if c.Metrics.Enabled {
			seen["metrics"] = true
		}
		if c.ECPDS != nil {
			seen["ecpds block"] = true
		}
		for _, s := range c.NotificationSchema {
			if s.StoragePolicy != nil {
				seen["storage_policy"] = true
			}
			if s.Topic == nil {
				seen["no topic"] = true
			}
			if s.MaxHistoricalNotifications != nil {
				seen["max_historical_notifications"] = true
			}
			if s.Auth != nil {
				if len(s.Auth.ReadRoles) > 0 {
					seen["read_roles"] = true
				}
				if len(s.Auth.WriteRoles) > 0 {
					seen["write_roles"] = true
				}
				if slices.Contains(s.Auth.Plugins, PluginECPDS) {
					seen["ecpds plugin"] = true
				}
			}
			for _, f := range s.Identifier {
				seen[f.Type] = true
			}
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{
		HandlerString, HandlerDate, HandlerTime, HandlerEnum, HandlerInt, HandlerFloat, HandlerExpver, HandlerPolygon, HandlerPointCloud,
		"backend in_memory", "backend jetstream", "auth direct", "auth trusted_proxy", "schema-less", "metrics",
		"ecpds block", "ecpds plugin", "storage_policy", "no topic", "max_historical_notifications", "read_roles", "write_roles",
	} {
		if !seen[want] {
			t.Errorf("no shipped config uses %s", want)
		}
	}
}
