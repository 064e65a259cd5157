// Package payload is the typed-payload bridge between event types and the
// codec core: an event type whose payload block names a codec (payload:
// {codec: NAME}) decodes every payload through it into rows of the codec's
// internal schema, stores each row in the canonical encoding of package
// codec/store (with the schema's fingerprint in the content type), and
// renders stored rows in views: the JSON row view by default, or the
// output of any codec whose internal schema the stored rows can be read as
// (the `format` of a watch, replay or subscription).
//
// It knows codecs and stored rows, not notifications: package
// notification ties a TypedPayload to an event type's identifiers and
// turns this package's errors into its validation errors.
package payload

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"sort"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/go-json-experiment/json/jsontext"

	"github.com/herald-gateway/herald/codec"
	"github.com/herald-gateway/herald/codec/catalog"
	"github.com/herald-gateway/herald/codec/ddl"
	"github.com/herald-gateway/herald/codec/evolve"
	"github.com/herald-gateway/herald/codec/jaq"
	"github.com/herald-gateway/herald/codec/jsonstr"
	"github.com/herald-gateway/herald/codec/rows"
	"github.com/herald-gateway/herald/codec/store"
	"github.com/herald-gateway/herald/codec/types"
	"github.com/herald-gateway/herald/codec/values"
	wjson "github.com/herald-gateway/herald/codec/wire/json"
)

// RowFormat is the name of the JSON row view, the default view of a typed
// payload (and the only view of an opaque one).
const RowFormat = "json"

// MaxRecords is the most records one payload may unfold into.
const MaxRecords = jaq.MaxMessages

// embedding says how a codec's output travels inside a JSON document.
type embedding uint8

const (
	// embedJSON: the output is JSON and is embedded as it is.
	embedJSON embedding = iota
	// embedText: text (SYSLOG, YAML, TOML, XML), as a JSON string.
	embedText
	// embedBase64: binary (CBOR, AVRO, PROTOBUF), as a JSON string of
	// padded standard base64.
	embedBase64
)

func embeddingOf(f types.Format) embedding {
	switch f {
	case types.JSON:
		return embedJSON
	case types.CBOR, types.AVRO, types.PROTOBUF:
		return embedBase64
	}
	return embedText
}

func (e embedding) describe() string {
	switch e {
	case embedText:
		return "a JSON string holding the text"
	case embedBase64:
		return "a JSON string holding the bytes as padded standard base64"
	}
	return "the JSON value itself"
}

// MediaType returns the media type of payloads of wire format f, the
// Content-Type the raw notify endpoint expects.
func MediaType(f types.Format) string {
	switch f {
	case types.JSON:
		return "application/json"
	case types.CBOR:
		return "application/cbor"
	case types.AVRO:
		return "application/avro"
	case types.PROTOBUF:
		return "application/x-protobuf"
	case types.YAML:
		return "application/yaml"
	case types.TOML:
		return "application/toml"
	case types.XML:
		return "application/xml"
	}
	return "text/plain"
}

// TypedPayload is the payload type of an event type whose payload block
// names a codec. It is immutable and safe for concurrent use.
type TypedPayload struct {
	eventType   string
	codec       *codec.Codec
	schema      *types.Schema
	fingerprint types.Fingerprint
	contentType string
	enc         *store.Encoder
	// identFrom are the declared identifier fields the internal schema
	// also has: each record fills them. identCol are their columns.
	identFrom []string
	identCol  []int
	// views by format name; names sorted, RowFormat first.
	views map[string]*View
	names []string
	row   *View
	pool  sync.Pool // *decodeState
	// history is the registry of past schemas records are decoded with.
	history *History
	// bufs recycles the column buffers of the batches decode builds
	// (records releases each before it returns).
	bufs bufferPool
}

type decodeState struct {
	dec codec.Decoder
	b   *rows.Builder
}

// Codec returns the payload codec's name.
func (p *TypedPayload) Codec() string { return p.codec.Name }

// Format returns the payload codec's wire format.
func (p *TypedPayload) Format() types.Format { return p.codec.Format }

// MediaType returns the media type of the payload codec's wire format.
func (p *TypedPayload) MediaType() string { return MediaType(p.codec.Format) }

// Schema returns the internal schema: the event type's payload schema.
func (p *TypedPayload) Schema() *types.Schema { return p.schema }

// Fingerprint returns the internal schema's fingerprint, which stored
// records carry in their content type.
func (p *TypedPayload) Fingerprint() types.Fingerprint { return p.fingerprint }

// ContentType returns the content type of the records notify stores.
func (p *TypedPayload) ContentType() string { return p.contentType }

// Formats returns the names of the views a watcher may ask for with
// `format`: RowFormat, then every codec whose internal schema the stored
// records can be read as, sorted.
func (p *TypedPayload) Formats() []string { return append([]string(nil), p.names...) }

// Cache compiles each codec of a catalog once per registry. It is not
// safe for concurrent use: a registry is compiled by one goroutine.
type Cache struct {
	cat     *catalog.Catalog
	opts    codec.Options
	done    map[string]*codec.Codec
	errs    map[string]error
	failed  bool // the codecs block did not load
	history *History
}

// NewCache returns the codec cache of catalog cat (nil when there is no
// codecs block). failed says the codecs block did not load: Failed
// reports it, and the event types naming a codec are then compiled
// without their typed payload.
//
// history is the registry of past schemas the typed payloads built with
// the cache decode old records with; nil knows none.
func NewCache(cat *catalog.Catalog, failed bool, opts codec.Options, history *History) *Cache {
	return &Cache{cat: cat, opts: opts, failed: failed, history: history, done: map[string]*codec.Codec{}, errs: map[string]error{}}
}

// Failed reports whether the codecs block did not load.
func (c *Cache) Failed() bool { return c.failed }

func (c *Cache) get(name string) (*codec.Codec, error) {
	if cd, ok := c.done[name]; ok {
		return cd, nil
	}
	if err, ok := c.errs[name]; ok {
		return nil, err
	}
	cd, err := codec.Compile(c.cat, name, c.opts)
	if err != nil {
		c.errs[name] = err
		return nil, err
	}
	c.done[name] = cd
	return cd, nil
}

// codecNames lists the catalog's codecs, sorted.
func codecNames(cat *catalog.Catalog) []string {
	var names []string
	for _, k := range cat.Keys() {
		if k.Kind == ddl.KindCodec {
			names = append(names, k.Name)
		}
	}
	sort.Strings(names)
	return names
}

// Ident is one declared identifier field of an event type, as New needs
// to know it.
type Ident struct {
	Name string
	// Spatial: the field carries a geometry (polygon or point cloud).
	Spatial bool
	// Type is the field's handler type, for messages.
	Type string
}

// New builds the payload type of event type eventType, whose payload
// block names codec name and whose identifier fields are idents,
// checking every rule that ties an event type to its codec. Errors name
// the event type, the codec and the rule.
func New(eventType string, idents []Ident, name string, cache *Cache) (*TypedPayload, error) {
	where := "notification_schema." + eventType + ".payload.codec"
	q := types.Quote(name)
	if cache == nil || cache.cat == nil {
		return nil, fmt.Errorf("%s: names codec %s, but no codecs are defined (add a codecs block)", where, q)
	}
	if _, ok := cache.cat.Codec(name); !ok {
		defined := codecNames(cache.cat)
		list := "none"
		if len(defined) > 0 {
			list = strings.Join(defined, ", ")
		}
		return nil, fmt.Errorf("%s: codec %s is not defined in the codecs definitions (defined codecs: %s)", where, q, list)
	}
	c, err := cache.get(name)
	if err != nil {
		return nil, fmt.Errorf("%s: codec %s does not compile: %w", where, q, err)
	}
	if c.DecodeErr != nil {
		return nil, fmt.Errorf("%s: codec %s cannot decode (it declares no ON INGESTION transformation), so notify could not read payloads through it", where, q)
	}
	p := &TypedPayload{eventType: eventType, codec: c, schema: c.Schema, enc: store.NewEncoder(c.Schema), history: cache.history}
	p.fingerprint = Fingerprint(c.Schema)
	p.contentType = store.ContentType(p.fingerprint.ID64)
	for _, f := range idents {
		i := c.Schema.Index(f.Name)
		if i < 0 {
			continue
		}
		sf := c.Schema.Fields[i]
		fq := types.Quote(f.Name)
		switch {
		case sf.Sensitive:
			return nil, fmt.Errorf("%s: codec %s: field %s of schema %s is SENSITIVE, and it would fill the identifier of the same name, which every watcher sees (in CloudEvents and subjects): rename the identifier or the field, or drop SENSITIVE", where, q, fq, types.Quote(c.Schema.Name))
		case f.Spatial && !numericCollection(sf.Type):
			return nil, fmt.Errorf("%s: codec %s: field %s of schema %s is %s, and it would fill the %s identifier of the same name, which needs a collection of numbers ([[lat, lon], ...])", where, q, fq, types.Quote(c.Schema.Name), sf.Type, f.Type)
		case !f.Spatial && (sf.Type.IsCollection() || sf.Type.Kind == types.Bytes):
			return nil, fmt.Errorf("%s: codec %s: field %s of schema %s is %s, and it would fill the %s identifier of the same name, which needs a scalar (an integer, float, boolean, string or datetime)", where, q, fq, types.Quote(c.Schema.Name), sf.Type, f.Type)
		}
		p.identFrom = append(p.identFrom, f.Name)
		p.identCol = append(p.identCol, i)
	}
	p.row = &View{payload: p, schema: c.Schema, rowEnc: wjson.NewRowViewEncoder(c.Schema, false)}
	p.row.sensitive = func(types.Field) bool { return false }
	p.views = map[string]*View{RowFormat: p.row}
	p.names = []string{RowFormat}
	for _, other := range codecNames(cache.cat) {
		if other == RowFormat {
			continue // the row view keeps the name
		}
		oc, err := cache.get(other)
		if err != nil || oc.EncodeErr != nil || !Readable(c.Schema, oc.Schema) {
			continue
		}
		p.views[other] = newView(p, oc)
		p.names = append(p.names, other)
	}
	sort.Strings(p.names[1:])
	return p, nil
}

func numericCollection(t types.Type) bool {
	if !t.IsCollection() {
		return false
	}
	for t.IsCollection() {
		t = t.Inner()
	}
	return t.Kind.IsInteger() || t.Kind.IsFloat()
}

// Breaks returns why records stored under internal schema from cannot be
// read as schema to, as the evolution verdict of a schema change judges
// it (docs/codecs.md, "Evolution on reload": never delete a field,
// retire it by making it optional): the backward verdict of package
// evolve for a reader that goes by field name with a STRICT schema (the stored encoding is keyed
// by name), which refuses a dropped or renamed field, a new required
// field, and every type change that does not widen. Empty when the
// change is compatible.
func Breaks(step string, from, to *types.Schema) []evolve.Break {
	return backward(evolve.SchemaByName(step, from, to, types.Strict))
}

func backward(bs []evolve.Break) []evolve.Break {
	var out []evolve.Break
	for _, b := range bs {
		if b.Dir == evolve.Backward {
			out = append(out, b)
		}
	}
	return out
}

// Readable reports whether records stored under internal schema from can
// be shown in schema to, a view: by field name, the view's fields absent
// from the record optional, every type readable, and the record's fields
// the view does not declare left out (a view may project).
func Readable(from, to *types.Schema) bool {
	if from == to {
		return true
	}
	return len(backward(evolve.SchemaByName("", from, to, types.Loose))) == 0
}

// View renders the payload of stored records in one format. It is safe
// for concurrent use.
type View struct {
	payload *TypedPayload
	// codec is the view's codec; nil for the row view.
	codec  *codec.Codec
	schema *types.Schema
	embed  embedding
	rowEnc *wjson.Encoder
	// ext is the CloudEvent extension attributes naming the codec and
	// its format.
	ext       []byte
	sensitive func(types.Field) bool
	pool      sync.Pool // *viewState
	// projections holds, by writer fingerprint, the projection of rows
	// written under a past schema (*projection).
	projections sync.Map
}

type viewState struct {
	dec *store.Decoder
	b   *rows.Builder
}

func newView(p *TypedPayload, c *codec.Codec) *View {
	v := &View{payload: p, codec: c, schema: c.Schema, embed: embeddingOf(c.Format)}
	// A field SENSITIVE in the event type's schema or in the view's is
	// masked: a codec cannot reveal what the event type hides.
	v.sensitive = func(f types.Field) bool {
		if f.Sensitive {
			return true
		}
		i := p.schema.Index(f.Name)
		return i >= 0 && p.schema.Fields[i].Sensitive
	}
	v.ext = jsonstr.Append([]byte(`,"heraldcodec":`), c.Name)
	v.ext = jsonstr.Append(append(v.ext, `,"heraldformat":`...), c.Format.String())
	return v
}

// Name returns the view's format name.
func (v *View) Name() string {
	if v.codec == nil {
		return RowFormat
	}
	return v.codec.Name
}

func (v *View) state() *viewState {
	if st, ok := v.pool.Get().(*viewState); ok {
		return st
	}
	return &viewState{dec: store.NewDecoder(v.schema, v.sensitive), b: rows.NewBuilder(nil, v.schema)}
}

// renderRetry bounds how long rendering waits for busy extension
// workers: a record is rendered once for all its watchers, so it waits
// rather than failing them all.
const renderRetry = 5 * time.Second

// AppendPayload appends the view of one stored row, whose content type
// is contentType, as the JSON value of the CloudEvent's data.payload. A
// row written under a past schema the History knows is decoded with it
// and projected onto the view's schema by field name (see projection);
// any other row is read by name as it is.
func (v *View) AppendPayload(dst, stored []byte, contentType string) ([]byte, error) {
	rowEnc := v.rowEnc
	var st *viewState
	if pr := v.projectionFor(contentType); pr != nil {
		st, rowEnc = pr.state(v), pr.rowEnc
		defer pr.pool.Put(st)
	} else {
		st = v.state()
		defer v.pool.Put(st)
	}
	if err := st.dec.Decode(stored, st.b); err != nil {
		_, _ = st.b.NewRecordBatch() // drop the abandoned row
		return dst, err
	}
	rec, err := st.b.NewRecordBatch()
	if err != nil {
		return dst, err
	}
	defer rec.Release()
	if v.codec == nil {
		return rowEnc.AppendRow(dst, rec, 0)
	}
	out, err := v.encode(rec)
	if err != nil {
		return dst, err
	}
	switch v.embed {
	case embedText:
		return jsonstr.Append(dst, string(out)), nil
	case embedBase64:
		dst = append(dst, '"')
		dst = values.AppendBase64(dst, out)
		return append(dst, '"'), nil
	}
	if !json.Valid(out) {
		return dst, fmt.Errorf("codec %s wrote output that is not JSON", types.Quote(v.codec.Name))
	}
	return append(dst, out...), nil
}

// encode runs the view's codec on row 0, waiting for busy extension
// workers up to renderRetry.
func (v *View) encode(rec arrow.RecordBatch) ([]byte, error) {
	ce, isJaq := v.codec.Encoder.(codec.ContextEncoder)
	if !isJaq {
		return v.codec.Encoder.AppendRow(nil, rec, 0)
	}
	ctx, cancel := context.WithTimeout(context.Background(), renderRetry)
	defer cancel()
	wait := time.Millisecond
	for {
		out, err := ce.AppendRowContext(ctx, nil, rec, 0)
		if !errors.Is(err, codec.ErrBusy) {
			return out, err
		}
		t := time.NewTimer(wait)
		select {
		case <-ctx.Done():
			t.Stop()
			return nil, err
		case <-t.C:
		}
		wait = min(2*wait, 50*time.Millisecond)
	}
}

// PayloadError is a payload the codec refused: a 400 naming the codec,
// the cause and its position, never quoting payload values.
type PayloadError struct {
	EventType string
	Codec     string
	// Record is the record at fault (zero-based), -1 for the payload as a
	// whole.
	Record int
	// Err is the codec's diagnostic; values.CodeOf gives its code.
	Err error
}

// Error returns the message.
func (e *PayloadError) Error() string {
	msg := e.Err.Error()
	var je *jaq.Error
	if !errors.As(e.Err, &je) {
		msg = "codec " + types.Quote(e.Codec) + ": " + msg
	}
	if e.Record >= 0 {
		msg = "record " + strconv.Itoa(e.Record) + ": " + msg
	}
	if code := values.CodeOf(e.Err); code != "" {
		msg += " [" + string(code) + "]"
	}
	return "invalid payload for event type '" + e.EventType + "': " + msg
}

// Unwrap returns the codec's error (codec.ErrBusy is matched through it).
func (e *PayloadError) Unwrap() error { return e.Err }

// Err builds the error of a codec diagnostic about record (-1: the
// payload as a whole): a *PayloadError, or the *BusyError the transport
// answers 503.
func (p *TypedPayload) Err(record int, err error) error {
	if errors.Is(err, codec.ErrBusy) {
		return &BusyError{Codec: p.codec.Name, Err: err}
	}
	return &PayloadError{EventType: p.eventType, Codec: p.codec.Name, Record: record, Err: err}
}

// InputError is a notify body whose payload value is not of the shape
// the codec's wire format travels in inside JSON (a JSON string of text,
// or of base64 bytes).
type InputError struct {
	// Message is the whole explanation; Detail the short cause.
	Message, Detail string
}

// Error returns the message.
func (e *InputError) Error() string { return e.Message }

// BusyError is a payload the extension workers could not take now: it
// was not judged. Transports answer 503 with Retry-After (HTTP) or BUSY.
type BusyError struct {
	Codec string
	Err   error
}

// Error returns the message.
func (e *BusyError) Error() string {
	return "codec " + types.Quote(e.Codec) + ": the extension workers are busy, so the payload was not judged; nothing was stored, retry later"
}

// Unwrap returns the cause (codec.ErrBusy).
func (e *BusyError) Unwrap() error { return e.Err }

// UnwrapJSON takes the wire payload out of the JSON value a notify body
// carries: the value itself for JSON formats, the text of a JSON string
// for text formats, the bytes of a base64 JSON string for binary ones. A
// value of the wrong shape is an *InputError.
func (p *TypedPayload) UnwrapJSON(raw json.RawMessage) ([]byte, error) {
	e := embeddingOf(p.codec.Format)
	if e == embedJSON {
		return raw, nil
	}
	if raw[0] != '"' {
		return nil, &InputError{
			Message: fmt.Sprintf("payload of event type '%s' must be %s: codec '%s' reads %s, found %s", p.eventType, e.describe(), p.codec.Name, p.codec.Format, jsonKind(raw[0])),
			Detail:  "payload must be a JSON string"}
	}
	text := []byte(unquote(raw))
	if e == embedText {
		return text, nil
	}
	b, ok := values.DecodeBase64(nil, text)
	if !ok {
		return nil, &InputError{
			Message: fmt.Sprintf("payload of event type '%s' must be padded standard base64 (RFC 4648) of the %s bytes codec '%s' reads: the string is not", p.eventType, p.codec.Format, p.codec.Name),
			Detail:  "payload is not padded standard base64"}
	}
	return b, nil
}

// state takes a decoder and its builder from the pool; put it back.
func (p *TypedPayload) state() *decodeState {
	if st, ok := p.pool.Get().(*decodeState); ok {
		return st
	}
	return &decodeState{dec: p.codec.NewDecoder(), b: p.codec.NewBuilder(&p.bufs)}
}

// Decode decodes one wire payload into a record batch; the caller
// releases it. Errors are a *PayloadError or a *BusyError.
func (p *TypedPayload) Decode(ctx context.Context, wire []byte) (arrow.RecordBatch, error) {
	st := p.state()
	defer p.pool.Put(st)
	var err error
	if cd, ok := st.dec.(codec.ContextDecoder); ok {
		_, err = cd.DecodeContext(ctx, wire, st.b)
	} else {
		_, err = st.dec.Decode(wire, st.b)
	}
	rec, ferr := st.b.NewRecordBatch()
	if err != nil {
		if ferr == nil {
			rec.Release()
		}
		return nil, p.Err(-1, err)
	}
	if ferr != nil {
		return nil, ferr
	}
	return rec, nil
}

// Row returns the row view: the default view of the typed payload.
func (p *TypedPayload) Row() *View { return p.row }

// View returns the view of format name, if the stored records can be
// shown in it (RowFormat is the row view).
func (p *TypedPayload) View(name string) (*View, bool) {
	v, ok := p.views[name]
	return v, ok
}

// IdentFrom returns the declared identifier fields the internal schema
// also has, which each record fills. The caller must not modify it.
func (p *TypedPayload) IdentFrom() []string { return p.identFrom }

// EncodeRow appends row i of rec, decoded by Decode, in the stored
// encoding.
func (p *TypedPayload) EncodeRow(dst []byte, rec arrow.RecordBatch, i int) ([]byte, error) {
	return p.enc.AppendRow(dst, rec, i)
}

// IdentError is a record's field that cannot be the identifier value of
// the same name.
type IdentError struct {
	Name string
	Err  error
}

// Error returns the message.
func (e *IdentError) Error() string {
	return "the record's field '" + e.Name + "' cannot be an identifier value: " + e.Err.Error()
}

// Unwrap returns the cause.
func (e *IdentError) Unwrap() error { return e.Err }

// DecodeStored decodes one record of a codec whose decoder writes the
// stored row directly (codec.StoredDecoder: plain WIRE JSON), without a
// record batch: the stored row, and the JSON of each IdentFrom field (at
// the same index; "null" when the record has none). ok is false when the
// codec's decoder cannot, and then nothing was decoded. Errors are those
// of Err, or an *IdentError.
func (p *TypedPayload) DecodeStored(wire []byte) (data []byte, ident []json.RawMessage, ok bool, err error) {
	st := p.state()
	defer p.pool.Put(st)
	sd, ok := st.dec.(codec.StoredDecoder)
	if !ok {
		return nil, nil, false, nil
	}
	data, err = sd.DecodeStored(nil, wire)
	if err != nil {
		return nil, nil, true, p.Err(-1, err)
	}
	ident = make([]json.RawMessage, len(p.identFrom))
	for j, name := range p.identFrom {
		raw, err := store.AppendItemJSON(nil, sd.StoredValue(p.identCol[j]), name)
		if err != nil {
			return nil, nil, true, &IdentError{Name: name, Err: err}
		}
		ident[j] = raw
	}
	return data, ident, true, nil
}

// IsRow reports whether v is the row view.
func (v *View) IsRow() bool { return v.codec == nil }

// AppendExt appends the CloudEvent extension attributes of a record
// shown in v (heraldcodec and heraldformat; none for the row view), each
// with its leading comma.
func (v *View) AppendExt(dst []byte) []byte { return append(dst, v.ext...) }

// unquote decodes a valid JSON string literal.
func unquote(raw []byte) string {
	if bytes.IndexByte(raw, '\\') < 0 {
		return string(raw[1 : len(raw)-1])
	}
	v, err := jsontext.AppendUnquote(nil, raw)
	if err != nil {
		return string(raw[1 : len(raw)-1])
	}
	return string(v)
}

// jsonKind names the JSON kind a value starting with c has.
func jsonKind(c byte) string {
	switch c {
	case '{':
		return "an object"
	case '[':
		return "an array"
	case '"':
		return "a string"
	case 't', 'f':
		return "a boolean"
	case 'n':
		return "null"
	default:
		return "a number"
	}
}
