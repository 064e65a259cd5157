package payload

import (
	"sync"

	"github.com/herald-gateway/herald/codec/rows"
	"github.com/herald-gateway/herald/codec/store"
	"github.com/herald-gateway/herald/codec/types"
	wjson "github.com/herald-gateway/herald/codec/wire/json"
)

// History is the registry of past payload schemas as one process knows
// it: every internal schema that wrote (or may have written) typed
// records of an event type, by the fingerprint stored records carry. A
// record stored under a schema that is no longer the event type's is
// decoded with the schema that wrote it and projected onto the current
// one by field name (View.AppendPayload). It is safe for concurrent use;
// a nil History knows no schema.
type History struct {
	mu     sync.RWMutex
	byType map[string]map[string]*types.Schema
}

// NewHistory returns an empty History.
func NewHistory() *History { return &History{byType: map[string]map[string]*types.Schema{}} }

// Fingerprint returns the fingerprint of internal schema s that the
// records it writes carry: that of its canonical CREATE SCHEMA text.
func Fingerprint(s *types.Schema) types.Fingerprint {
	return types.FingerprintOf(types.CreateSchema(s))
}

// Add keeps s as a schema of eventType's records and returns its
// fingerprint.
func (h *History) Add(eventType string, s *types.Schema) string {
	fp := Fingerprint(s).ID64
	h.mu.Lock()
	defer h.mu.Unlock()
	m := h.byType[eventType]
	if m == nil {
		m = map[string]*types.Schema{}
		h.byType[eventType] = m
	}
	if _, ok := m[fp]; !ok {
		m[fp] = s
	}
	return fp
}

// Schema returns the schema of eventType's records whose fingerprint is
// fp, if known.
func (h *History) Schema(eventType, fp string) (*types.Schema, bool) {
	if h == nil {
		return nil, false
	}
	h.mu.RLock()
	defer h.mu.RUnlock()
	s, ok := h.byType[eventType][fp]
	return s, ok
}

// projection reads rows stored under a writer's schema as rows of a
// view's: field by field by name, in the view's order. In the row view a
// field the writer has reads as the writer wrote it; in a codec's view,
// as the view's type when the writer's type is readable as it. Every
// other field of the view (absent from the writer, or of a type the view
// cannot read) reads as null; fields only the writer has are left out.
type projection struct {
	// dec is the schema the stored row is decoded by: build with the
	// names of the null-read fields changed so that no stored key
	// matches them.
	dec, build *types.Schema
	rowEnc     *wjson.Encoder
	pool       sync.Pool // *viewState
}

// unmatched prefixes the decoding name of a field read as null: no
// stored key starts with a NUL.
const unmatched = "\x00"

func newProjection(v *View, w *types.Schema) *projection {
	pr := &projection{dec: &types.Schema{Name: v.schema.Name}, build: &types.Schema{Name: v.schema.Name}}
	for _, f := range v.schema.Fields {
		bf := f
		i := w.Index(f.Name)
		switch {
		case i >= 0 && v.codec == nil:
			bf = w.Fields[i]
		case i >= 0 && fieldReadable(w.Fields[i], f):
			bf.Optional = f.Optional || w.Fields[i].Optional
		default:
			bf.Optional = true
		}
		df := bf
		if i < 0 || (v.codec != nil && !fieldReadable(w.Fields[i], f)) {
			df.Name = unmatched + f.Name
		}
		pr.build.Fields = append(pr.build.Fields, bf)
		pr.dec.Fields = append(pr.dec.Fields, df)
	}
	if v.codec == nil {
		pr.rowEnc = wjson.NewRowViewEncoder(pr.build, false)
	}
	return pr
}

// fieldReadable reports whether values of writer field w can be read as
// view field f's type (optionality aside).
func fieldReadable(w, f types.Field) bool {
	w.Optional, f.Optional = true, true
	w.Name, f.Name = "f", "f"
	return Readable(&types.Schema{Name: "w", Fields: []types.Field{w}}, &types.Schema{Name: "w", Fields: []types.Field{f}})
}

func (pr *projection) state(v *View) *viewState {
	if st, ok := pr.pool.Get().(*viewState); ok {
		return st
	}
	return &viewState{dec: store.NewDecoder(pr.dec, v.sensitive), b: rows.NewBuilder(nil, pr.build)}
}

// projectionFor returns the projection of records whose content type is
// contentType, nil when they are read directly: written under the
// current schema, or under one the History does not know (read by name
// as they are, which fails for a breaking change).
func (v *View) projectionFor(contentType string) *projection {
	p := v.payload
	fp, ok := store.Fingerprint(contentType)
	if !ok || fp == "" || fp == p.fingerprint.ID64 {
		return nil
	}
	if pr, ok := v.projections.Load(fp); ok {
		return pr.(*projection)
	}
	w, ok := p.history.Schema(p.eventType, fp)
	if !ok {
		return nil
	}
	pr, _ := v.projections.LoadOrStore(fp, newProjection(v, w))
	return pr.(*projection)
}
