package openapi

import (
	"bytes"
	"html"
	"io/fs"
	"net/http"
	"path"
	"strings"

	"github.com/go-chi/chi/v5"
	"github.com/yuin/goldmark/ast"
	"github.com/yuin/goldmark/parser"
	"github.com/yuin/goldmark/text"
	"github.com/yuin/goldmark/util"
)

// GuidesPath is where herald serves its guides: the index at GuidesPath,
// each guide at GuidesPath + "<name>.md", pictures beside them.
const GuidesPath = "/docs/"

// Guides serves GET /docs/ and /docs/{file}: the guides of fsys (package
// docs), each Markdown file rendered to a self-contained HTML page with
// the docs page's renderer (raw HTML escaped, images as links), the
// index (README.md) at /docs/, and the pictures as they are. A link
// between guides stays relative, so it resolves on the server as in the
// repository; a link out of the guides' directory (to a file elsewhere
// in the repository) becomes its text. notFound answers a file fsys does
// not hold.
func Guides(fsys fs.FS, notFound http.HandlerFunc) http.HandlerFunc {
	return func(w http.ResponseWriter, r *http.Request) {
		name := chi.URLParam(r, "file")
		if name == "" {
			name = "README.md"
		}
		if strings.ContainsAny(name, "/\\") || !fs.ValidPath(name) {
			notFound(w, r)
			return
		}
		data, err := fs.ReadFile(fsys, name)
		if err != nil {
			notFound(w, r)
			return
		}
		switch path.Ext(name) {
		case ".md":
			w.Header().Set("Content-Type", "text/html; charset=utf-8")
			data = renderGuide(data)
		case ".png":
			w.Header().Set("Content-Type", "image/png")
		default:
			notFound(w, r)
			return
		}
		if r.Method != http.MethodHead {
			_, _ = w.Write(data)
		}
	}
}

// guideStyle is the guides' style sheet, the docs page's look in short.
const guideStyle = `body{font:16px/1.5 system-ui,sans-serif;max-width:52rem;margin:2rem auto;padding:0 1rem;color:#1b1f24}
pre{background:#f4f6f8;padding:.75rem;overflow-x:auto}code{font-size:90%}
table{border-collapse:collapse}td,th{border:1px solid #d0d7de;padding:.25rem .5rem;vertical-align:top}
nav{font-size:90%;margin-bottom:1rem}`

// renderGuide renders one guide to a whole HTML page.
func renderGuide(src []byte) []byte {
	md := newMarkdown()
	md.Parser().AddOptions(parser.WithAutoHeadingID(), parser.WithASTTransformers(util.Prioritized(outwardLinks{}, 100)))
	doc := md.Parser().Parse(text.NewReader(src))
	title := "herald"
	for n := doc.FirstChild(); n != nil; n = n.NextSibling() {
		if h, ok := n.(*ast.Heading); ok && h.Level == 1 {
			title = string(h.Lines().Value(src))
			break
		}
	}
	var body bytes.Buffer
	if err := md.Renderer().Render(&body, src, doc); err != nil {
		body.Reset()
		body.WriteString("<pre>" + html.EscapeString(string(src)) + "</pre>")
	}
	var b bytes.Buffer
	b.WriteString("<!DOCTYPE html>\n<html lang=\"en\"><head><meta charset=\"utf-8\">\n<meta name=\"viewport\" content=\"width=device-width, initial-scale=1\">\n<title>")
	b.WriteString(html.EscapeString(title))
	b.WriteString("</title>\n<style>" + guideStyle + "</style></head>\n<body>\n")
	b.WriteString(`<nav><a href="/">herald</a> · <a href="` + GuidesPath + `">guides</a> · <a href="/swagger-ui/">API reference</a></nav>` + "\n")
	b.Write(body.Bytes())
	b.WriteString("</body></html>\n")
	return b.Bytes()
}

// outwardLinks replaces each link that leaves the guides' directory
// ("../BENCHMARKS.md") by its text: the server does not serve the file.
type outwardLinks struct{}

// Transform implements parser.ASTTransformer.
func (outwardLinks) Transform(doc *ast.Document, _ text.Reader, _ parser.Context) {
	var out []*ast.Link
	_ = ast.Walk(doc, func(n ast.Node, entering bool) (ast.WalkStatus, error) {
		if l, ok := n.(*ast.Link); ok && entering && strings.HasPrefix(string(l.Destination), "../") {
			out = append(out, l)
		}
		return ast.WalkContinue, nil
	})
	for _, l := range out {
		parent := l.Parent()
		for c := l.FirstChild(); c != nil; {
			next := c.NextSibling()
			parent.InsertBefore(parent, l, c)
			c = next
		}
		parent.RemoveChild(parent, l)
	}
}
