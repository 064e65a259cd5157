// Package openapi owns herald's OpenAPI 3.1 document (openapi.json,
// embedded in the binary), the AsyncAPI 3.0 document of the WebSocket
// session protocol (asyncapi.json, embedded too), the self-contained HTML
// page that documents the HTTP API from the first, the pages of the
// guides (package docs, given to Guides as a file system), and the JSON
// Schema check of answers and session frames against them. It serves the
// documents and the page as plain http.HandlerFuncs; routing belongs to
// package api. It must not import other herald packages: the
// document describes the API, it does not depend on the code serving it.
package openapi

import (
	"bytes"
	_ "embed"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"strings"
	"sync"
)

//go:embed openapi.json
var spec []byte

// DocumentPath is where herald serves the document; the docs page fetches
// it from there.
const DocumentPath = "/api-docs/openapi.json"

// Spec returns the raw OpenAPI document (a copy: callers may modify it).
func Spec() []byte { return bytes.Clone(spec) }

// Document serves GET /api-docs/openapi.json: the OpenAPI document as
// application/json.
func Document(w http.ResponseWriter, r *http.Request) {
	w.Header().Set("Content-Type", "application/json")
	_, _ = w.Write(spec)
}

// DocsPage serves the HTML documentation page (see page.go): every
// operation with its description, parameters, request and response
// schemas and examples, and every schema, rendered on the server with the
// descriptions' CommonMark as HTML, so that it reads the same without
// JavaScript; its script (DocsAsset) adds "try it" forms to the JSON
// and streaming operations. The page loads nothing from other hosts and
// is served with DocsPolicy.
func DocsPage(w http.ResponseWriter, r *http.Request) {
	page, err := docsPage()
	if err != nil {
		http.Error(w, "the OpenAPI document is invalid: "+err.Error(), http.StatusInternalServerError)
		return
	}
	docsHeaders(w.Header(), "text/html; charset=utf-8")
	_, _ = w.Write(page)
}

// DocsAssetPrefix is the path the docs page's script and stylesheet are
// served under (DocsAsset).
const DocsAssetPrefix = "/swagger-ui/"

// DocsPolicy is the Content-Security-Policy of the docs page and its
// files: scripts and styles from herald's own origin only (no inline
// script or style), requests to herald only.
const DocsPolicy = "default-src 'none'; script-src 'self'; style-src 'self'; img-src 'self' data:; " +
	"connect-src 'self'; base-uri 'none'; form-action 'none'; frame-ancestors 'none'"

//go:embed docs.js
var docsScript []byte

//go:embed docs.css
var docsStyle []byte

// docsHeaders sets the headers of the docs page and its files.
func docsHeaders(h http.Header, contentType string) {
	h.Set("Content-Type", contentType)
	h.Set("Content-Security-Policy", DocsPolicy)
	h.Set("X-Content-Type-Options", "nosniff")
	h.Set("Referrer-Policy", "no-referrer")
	h.Set("Cache-Control", "no-cache")
}

// DocsAsset serves GET /swagger-ui/{file}: the docs page's script
// (docs.js) and stylesheet (docs.css), with the page's headers.
// Anything else is passed to notFound (herald's JSON 404).
func DocsAsset(notFound http.HandlerFunc) http.HandlerFunc {
	return func(w http.ResponseWriter, r *http.Request) {
		switch strings.TrimPrefix(r.URL.Path, DocsAssetPrefix) {
		case "docs.js":
			docsHeaders(w.Header(), "text/javascript; charset=utf-8")
			_, _ = w.Write(docsScript)
		case "docs.css":
			docsHeaders(w.Header(), "text/css; charset=utf-8")
			_, _ = w.Write(docsStyle)
		default:
			notFound(w, r)
		}
	}
}

// docsPage renders the page once from the embedded document.
var docsPage = sync.OnceValues(func() ([]byte, error) { return renderPage(spec) })

// operation is one path and method of the document, as listed on the page.
type operation struct {
	Method      string // upper case: "GET"
	Path        string
	Summary     string
	Description string
	Tags        []string
}

// methods are the OpenAPI path-item keys that name HTTP methods, in the
// order the page lists them.
var methods = []string{"get", "put", "post", "delete", "options", "head", "patch", "trace"}

// operations lists the operations of an OpenAPI document in document
// order: paths as they appear, methods in the order of the methods list.
func operations(doc []byte) ([]operation, error) {
	var top struct {
		Paths json.RawMessage `json:"paths"`
	}
	if err := json.Unmarshal(doc, &top); err != nil {
		return nil, err
	}
	if top.Paths == nil {
		return nil, errors.New("no paths")
	}
	order, err := objectKeys(top.Paths)
	if err != nil {
		return nil, fmt.Errorf("paths: %w", err)
	}
	var items map[string]map[string]json.RawMessage
	if err := json.Unmarshal(top.Paths, &items); err != nil {
		return nil, fmt.Errorf("paths: %w", err)
	}
	var ops []operation
	for _, p := range order {
		for _, m := range methods {
			raw, ok := items[p][m]
			if !ok {
				continue
			}
			var op struct {
				Summary     string   `json:"summary"`
				Description string   `json:"description"`
				Tags        []string `json:"tags"`
			}
			if err := json.Unmarshal(raw, &op); err != nil {
				return nil, fmt.Errorf("%s %s: %w", m, p, err)
			}
			o := operation{Method: strings.ToUpper(m), Path: p, Summary: op.Summary, Description: op.Description, Tags: op.Tags}
			ops = append(ops, o)
		}
	}
	return ops, nil
}

// objectKeys returns the keys of a JSON object in document order.
func objectKeys(raw json.RawMessage) ([]string, error) {
	dec := json.NewDecoder(bytes.NewReader(raw))
	if t, err := dec.Token(); err != nil || t != json.Delim('{') {
		return nil, errors.New("not a JSON object")
	}
	var keys []string
	for dec.More() {
		t, err := dec.Token()
		if err != nil {
			return nil, err
		}
		keys = append(keys, t.(string))
		var skip json.RawMessage
		if err := dec.Decode(&skip); err != nil {
			return nil, err
		}
	}
	return keys, nil
}

// opID is the HTML id of an operation's section.
func opID(method, path string) string {
	var b strings.Builder
	b.WriteString("op-")
	b.WriteString(strings.ToLower(method))
	for _, r := range path {
		switch {
		case r >= 'a' && r <= 'z', r >= 'A' && r <= 'Z', r >= '0' && r <= '9':
			b.WriteRune(r)
		default:
			b.WriteByte('-')
		}
	}
	return b.String()
}
