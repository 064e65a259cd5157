package configs

import (
	"embed"
	"io/fs"
)

// shipped holds the YAML files that come with herald.
//
//go:embed config.yaml examples/*.yaml
var shipped embed.FS

// DefaultYAML returns a copy of the shipped configs/config.yaml, the
// configuration for local use.
func DefaultYAML() []byte {
	b, err := shipped.ReadFile("config.yaml")
	if err != nil {
		panic("configs: config.yaml is not embedded: " + err.Error())
	}
	return b
}

// Shipped returns the shipped config files: config.yaml and
// examples/*.yaml, each an Aviso-format config that loads and validates.
func Shipped() fs.FS {
	return shipped
}
