package configs

import "embed"

// shipped holds the YAML files that come with herald: config.yaml and
// examples/*.yaml, each an Aviso-format config that loads and validates
// (the package's tests check each embedded copy against its file).
//
//go:embed config.yaml examples/*.yaml
var shipped embed.FS
