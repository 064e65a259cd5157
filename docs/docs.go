// Package docs holds herald's guides, the Markdown files of this
// directory and their pictures, embedded in the binary so that herald
// serves at /docs/ exactly what the repository holds. It has no code of
// its own beyond the file system: package openapi renders the guides and
// package api routes them.
package docs

import (
	"embed"
	"io/fs"
)

//go:embed *.md *.png
var files embed.FS

// FS returns the guides (*.md, README.md the index) and their pictures
// (*.png), at the root of the file system.
func FS() fs.FS { return files }
