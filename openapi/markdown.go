package openapi

import (
	"bytes"
	"html"
	"regexp"
	"strings"

	"github.com/yuin/goldmark"
	"github.com/yuin/goldmark/ast"
	"github.com/yuin/goldmark/extension"
	"github.com/yuin/goldmark/renderer"
	"github.com/yuin/goldmark/util"
)

// The document's descriptions are CommonMark (OpenAPI 3.1 says so); the
// docs page renders them to HTML on the server with goldmark, plus GFM
// tables. Rendering is safe for any text: raw HTML is never passed
// through (it is shown as text, escaped, so nothing is lost), goldmark
// drops dangerous link destinations (javascript: and the like), and an
// image becomes a link to it, so that the page loads nothing from
// elsewhere.

// newMarkdown returns the CommonMark renderer of the docs page.
func newMarkdown() goldmark.Markdown {
	return goldmark.New(
		goldmark.WithExtensions(extension.Table),
		goldmark.WithRendererOptions(renderer.WithNodeRenderers(util.Prioritized(safeNodes{}, 100))),
	)
}

// safeNodes renders the nodes that could pass HTML through or load
// something: raw inline HTML and HTML blocks as escaped text, images as
// links.
type safeNodes struct{}

// RegisterFuncs implements renderer.NodeRenderer.
func (safeNodes) RegisterFuncs(reg renderer.NodeRendererFuncRegisterer) {
	reg.Register(ast.KindRawHTML, renderRawHTML)
	reg.Register(ast.KindHTMLBlock, renderHTMLBlock)
	reg.Register(ast.KindImage, renderImage)
}

func renderRawHTML(w util.BufWriter, source []byte, n ast.Node, entering bool) (ast.WalkStatus, error) {
	if entering {
		segs := n.(*ast.RawHTML).Segments
		for i := range segs.Len() {
			seg := segs.At(i)
			_, _ = w.WriteString(html.EscapeString(string(seg.Value(source))))
		}
	}
	return ast.WalkSkipChildren, nil
}

func renderHTMLBlock(w util.BufWriter, source []byte, n ast.Node, entering bool) (ast.WalkStatus, error) {
	if !entering {
		return ast.WalkContinue, nil
	}
	b := n.(*ast.HTMLBlock)
	var text bytes.Buffer
	for i := range b.Lines().Len() {
		seg := b.Lines().At(i)
		text.Write(seg.Value(source))
	}
	if b.HasClosure() {
		text.Write(b.ClosureLine.Value(source))
	}
	_, _ = w.WriteString("<p>" + html.EscapeString(strings.TrimRight(text.String(), "\n")) + "</p>\n")
	return ast.WalkSkipChildren, nil
}

func renderImage(w util.BufWriter, source []byte, n ast.Node, entering bool) (ast.WalkStatus, error) {
	if !entering {
		return ast.WalkContinue, nil
	}
	img := n.(*ast.Image)
	var alt bytes.Buffer
	for c := img.FirstChild(); c != nil; c = c.NextSibling() {
		if t, ok := c.(*ast.Text); ok {
			alt.Write(t.Value(source))
		}
	}
	label := alt.String()
	if label == "" {
		label = "image"
	}
	dest := img.Destination
	if html.UnescapeString(string(dest)) == "" || isDangerous(dest) {
		_, _ = w.WriteString(html.EscapeString(label))
	} else {
		_, _ = w.WriteString(`<a href="` + html.EscapeString(string(util.URLEscape(dest, true))) + `">` + html.EscapeString(label) + `</a>`)
	}
	return ast.WalkSkipChildren, nil
}

// isDangerous reports a link destination that runs code or embeds data.
func isDangerous(dest []byte) bool {
	d := strings.ToLower(strings.TrimSpace(string(dest)))
	for _, p := range []string{"javascript:", "vbscript:", "data:", "file:"} {
		if strings.HasPrefix(d, p) {
			return true
		}
	}
	return false
}

// markdown renders CommonMark text to HTML.
func (p *pager) markdown(text string) string {
	if strings.TrimSpace(text) == "" {
		return ""
	}
	var b bytes.Buffer
	if err := p.md.Convert([]byte(text), &b); err != nil {
		// Convert fails only when writing to the buffer fails.
		return "<p>" + html.EscapeString(text) + "</p>"
	}
	return `<div class="md">` + b.String() + `</div>`
}

// inlineMarkdown renders one line of CommonMark without the paragraph
// around it (for summaries inside other elements).
func (p *pager) inlineMarkdown(text string) string {
	var b bytes.Buffer
	if err := p.md.Convert([]byte(text), &b); err != nil {
		return html.EscapeString(text)
	}
	s := strings.TrimSpace(b.String())
	if strings.HasPrefix(s, "<p>") && strings.HasSuffix(s, "</p>") && strings.Count(s, "<p>") == 1 {
		s = s[len("<p>") : len(s)-len("</p>")]
	}
	return s
}

// tags matches an HTML tag.
var tags = regexp.MustCompile(`<[^>]*>`)

// plainText is one line of CommonMark as plain text, for places that
// take no markup (a menu's options).
func (p *pager) plainText(text string) string {
	return html.UnescapeString(tags.ReplaceAllString(p.inlineMarkdown(text), ""))
}

// firstSentence is text up to its first ". " outside a code span.
func firstSentence(text string) string {
	inCode := false
	for i := 0; i < len(text); i++ {
		switch text[i] {
		case '`':
			inCode = !inCode
		case '.':
			if !inCode && i+1 < len(text) && (text[i+1] == ' ' || text[i+1] == '\n') {
				return text[:i+1]
			}
		}
	}
	return text
}
