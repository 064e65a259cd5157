package engine

import (
	"context"
	"sort"
	"sync"
	"time"
)

// SchemaVersion is one payload schema that an event type's typed records
// were (or may be) written under: an entry of the registry of past
// schemas, which lets a record be decoded with the schema that wrote it
// long after the event type's schema changed.
type SchemaVersion struct {
	// EventType is the event type whose payload schema it is.
	EventType string `json:"event_type"`
	// Fingerprint is the 64-bit fingerprint of the schema's canonical
	// text, the one stored records carry in their content type.
	Fingerprint string `json:"fingerprint"`
	// Codec is the payload codec the event type named when the schema
	// became current.
	Codec string `json:"codec"`
	// Schema is the schema's canonical CREATE SCHEMA text.
	Schema string `json:"schema"`
	// FirstSeq is the first sequence of the event type's stream that may
	// hold a record written under the schema: the stream's next sequence
	// when it first became current.
	FirstSeq uint64 `json:"first_seq"`
	// ActiveSeq is the stream's next sequence when the schema last became
	// current (equal to FirstSeq unless another schema was current in
	// between).
	ActiveSeq uint64 `json:"active_seq"`
	// ActivatedAt is when the schema last became current: the order of
	// versions made current at the same sequence.
	ActivatedAt time.Time `json:"activated_at"`
}

// SchemaStore is implemented by engines that keep the registry of past
// payload schemas beside their streams.
type SchemaStore interface {
	// PutSchemaVersion records that v became its event type's current
	// payload schema at v.ActiveSeq. A version already kept keeps its
	// FirstSeq and takes the new ActiveSeq; a new one takes ActiveSeq as
	// its FirstSeq. It returns the version as kept.
	PutSchemaVersion(ctx context.Context, v SchemaVersion) (SchemaVersion, error)
	// SchemaVersions returns every version kept, of every event type,
	// in the order of SortSchemaVersions.
	SchemaVersions(ctx context.Context) ([]SchemaVersion, error)
}

// SortSchemaVersions sorts vs by event type, then ActiveSeq, then
// ActivatedAt, then fingerprint: the order SchemaVersions returns.
func SortSchemaVersions(vs []SchemaVersion) {
	sort.Slice(vs, func(i, j int) bool {
		a, b := vs[i], vs[j]
		if a.EventType != b.EventType {
			return a.EventType < b.EventType
		}
		if a.ActiveSeq != b.ActiveSeq {
			return a.ActiveSeq < b.ActiveSeq
		}
		if !a.ActivatedAt.Equal(b.ActivatedAt) {
			return a.ActivatedAt.Before(b.ActivatedAt)
		}
		return a.Fingerprint < b.Fingerprint
	})
}

// MergeSchemaVersion is what PutSchemaVersion keeps when v is put over
// old (nil when there is none).
func MergeSchemaVersion(old *SchemaVersion, v SchemaVersion) SchemaVersion {
	if old == nil {
		v.FirstSeq = v.ActiveSeq
		return v
	}
	v.FirstSeq = old.FirstSeq
	return v
}

// schemaTable is the in-memory engine's registry of past schemas.
type schemaTable struct {
	mu sync.Mutex
	m  map[[2]string]SchemaVersion
}

func (t *schemaTable) put(v SchemaVersion) SchemaVersion {
	t.mu.Lock()
	defer t.mu.Unlock()
	if t.m == nil {
		t.m = map[[2]string]SchemaVersion{}
	}
	k := [2]string{v.EventType, v.Fingerprint}
	var old *SchemaVersion
	if o, ok := t.m[k]; ok {
		old = &o
	}
	v = MergeSchemaVersion(old, v)
	t.m[k] = v
	return v
}

func (t *schemaTable) all() []SchemaVersion {
	t.mu.Lock()
	defer t.mu.Unlock()
	out := make([]SchemaVersion, 0, len(t.m))
	for _, v := range t.m {
		out = append(out, v)
	}
	SortSchemaVersions(out)
	return out
}

// PutSchemaVersion records a payload schema version in memory (see
// SchemaStore). The registry lives as long as the engine.
func (m *Memory) PutSchemaVersion(ctx context.Context, v SchemaVersion) (SchemaVersion, error) {
	if err := m.check(ctx, "put schema version"); err != nil {
		return SchemaVersion{}, err
	}
	return m.schemas.put(v), nil
}

// SchemaVersions returns the payload schema versions kept in memory (see
// SchemaStore).
func (m *Memory) SchemaVersions(ctx context.Context) ([]SchemaVersion, error) {
	if err := m.check(ctx, "schema versions"); err != nil {
		return nil, err
	}
	return m.schemas.all(), nil
}
