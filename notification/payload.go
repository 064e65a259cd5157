package notification

// This file holds typed payloads: an event type whose payload block names
// a codec (payload: {codec: NAME}) decodes every payload through it into
// rows of the codec's internal schema, stores each row in the canonical
// encoding of package codec/store (with the schema's fingerprint in the
// content type), and renders stored rows in views: the JSON row view by
// default, or the output of any codec whose internal schema the stored
// rows can be read as (the `format` of a watch, replay or subscription).

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"sort"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/apache/arrow-go/v18/arrow"

	"herald/codec"
	"herald/codec/catalog"
	"herald/codec/ddl"
	"herald/codec/evolve"
	"herald/codec/jaq"
	"herald/codec/jsonstr"
	"herald/codec/rows"
	"herald/codec/store"
	"herald/codec/types"
	"herald/codec/values"
	wjson "herald/codec/wire/json"
	"herald/codec/workers"
	"herald/configs"
)

// RegistryOptions are what a registry with typed payloads needs besides
// the configuration.
type RegistryOptions struct {
	// Codecs is the compiled codec catalog (the codecs block); nil when
	// there is none, and then no event type may name a payload codec.
	Codecs *catalog.Catalog
	// Workers runs the programs of JAQ-backed codecs; share one per
	// process. nil gives each codec a pool of its own.
	Workers *workers.Pool
	// Logger receives the jq evaluator's messages at trace level (they
	// may quote payload values); nil discards them.
	Logger *slog.Logger
	// CodecsFailed says the codecs block did not load (its errors are
	// reported on their own): the event types naming a payload codec are
	// compiled without their typed payload, for the other checks only.
	CodecsFailed bool
}

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

// codecCache compiles each codec of a catalog once per registry.
type codecCache struct {
	cat    *catalog.Catalog
	opts   codec.Options
	done   map[string]*codec.Codec
	errs   map[string]error
	failed bool // the codecs block did not load
}

func (c *codecCache) get(name string) (*codec.Codec, error) {
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

// newTypedPayload builds the payload type of s from its payload block,
// checking every rule that ties an event type to its codec. Errors name
// the event type, the codec and the rule.
func newTypedPayload(s *Schema, name string, cache *codecCache) (*TypedPayload, error) {
	where := "notification_schema." + s.Name + ".payload.codec"
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
	p := &TypedPayload{eventType: s.Name, codec: c, schema: c.Schema, enc: store.NewEncoder(c.Schema)}
	p.fingerprint = types.FingerprintOf(types.CreateSchema(c.Schema))
	p.contentType = store.ContentType(p.fingerprint.ID64)
	for _, f := range s.Fields {
		i := c.Schema.Index(f.Name)
		if i < 0 {
			continue
		}
		sf := c.Schema.Fields[i]
		fq := types.Quote(f.Name)
		switch {
		case sf.Sensitive:
			return nil, fmt.Errorf("%s: codec %s: field %s of schema %s is SENSITIVE, and it would fill the identifier of the same name, which every watcher sees (in CloudEvents and subjects): rename the identifier or the field, or drop SENSITIVE", where, q, fq, types.Quote(c.Schema.Name))
		case f.Spatial() && !numericCollection(sf.Type):
			return nil, fmt.Errorf("%s: codec %s: field %s of schema %s is %s, and it would fill the %s identifier of the same name, which needs a collection of numbers ([[lat, lon], ...])", where, q, fq, types.Quote(c.Schema.Name), sf.Type, f.Handler.Type())
		case !f.Spatial() && (sf.Type.IsCollection() || sf.Type.Kind == types.Bytes):
			return nil, fmt.Errorf("%s: codec %s: field %s of schema %s is %s, and it would fill the %s identifier of the same name, which needs a scalar (an integer, float, boolean, string or datetime)", where, q, fq, types.Quote(c.Schema.Name), sf.Type, f.Handler.Type())
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
// it (spec 002: a position is forever, retire a field by making it
// optional): the backward verdict of package evolve for a reader that
// goes by field name with a STRICT schema (the stored encoding is keyed
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

// appendPayload appends the view of one stored row as the JSON value of
// the CloudEvent's data.payload.
func (v *View) appendPayload(dst, stored []byte) ([]byte, error) {
	st := v.state()
	defer v.pool.Put(st)
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
		return v.rowEnc.AppendRow(dst, rec, 0)
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

// View returns the view of format: nil for "" and RowFormat (the default:
// the row view of a typed payload, the payload as stored otherwise), else
// the view of that codec. An unknown or unreadable format
// is a *ValidationError naming the formats there are.
func (s *Schema) View(format string) (*View, error) {
	if format == "" || format == RowFormat {
		return nil, nil
	}
	p := s.Payload
	if p == nil {
		return nil, requestInvalid("format '%s' is not available: event type '%s' has an opaque JSON payload (typed payload views need a payload codec), so its only format is %s", format, s.Name, RowFormat)
	}
	if v, ok := p.views[format]; ok {
		return v, nil
	}
	return nil, requestInvalid("format '%s' is not available for event type '%s' (payload codec '%s'): its formats are %s", format, s.Name, p.codec.Name, strings.Join(p.names, ", "))
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

// payloadErr builds the ValidationError of a codec diagnostic, or the
// busy error the transport answers 503.
func (p *TypedPayload) payloadErr(record int, err error) error {
	pe := &PayloadError{EventType: p.eventType, Codec: p.codec.Name, Record: record, Err: err}
	if errors.Is(err, codec.ErrBusy) {
		return &BusyError{Codec: p.codec.Name, Err: err}
	}
	return &ValidationError{Field: "payload", Message: pe.Error(), Detail: pe.Error(), Cause: pe}
}

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

// unwrapJSON takes the wire payload out of the JSON value a notify body
// carries: the value itself for JSON formats, the text of a JSON string
// for text formats, the bytes of a base64 JSON string for binary ones.
func (p *TypedPayload) unwrapJSON(raw json.RawMessage) ([]byte, error) {
	e := embeddingOf(p.codec.Format)
	if e == embedJSON {
		return raw, nil
	}
	if raw[0] != '"' {
		return nil, &ValidationError{Field: "payload",
			Message: fmt.Sprintf("payload of event type '%s' must be %s: codec '%s' reads %s, found %s", p.eventType, e.describe(), p.codec.Name, p.codec.Format, jsonKind(raw[0])),
			Detail:  "payload must be a JSON string"}
	}
	text := []byte(unquote(raw))
	if e == embedText {
		return text, nil
	}
	b, ok := values.DecodeBase64(nil, text)
	if !ok {
		return nil, &ValidationError{Field: "payload",
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

// decode decodes one wire payload into a record batch; the caller
// releases it. Errors are PayloadError-based ValidationErrors or a
// BusyError.
func (p *TypedPayload) decode(ctx context.Context, wire []byte) (arrow.RecordBatch, error) {
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
		return nil, p.payloadErr(-1, err)
	}
	if ferr != nil {
		return nil, ferr
	}
	return rec, nil
}

// records decodes a wire payload and builds one notification per record,
// identifiers merged from ident and each record's fields. Every record is
// validated before any is returned.
func (s *Schema) records(ctx context.Context, ident map[string]json.RawMessage, wire []byte, one bool) ([]*Notification, error) {
	if err := s.checkDeclared(ident); err != nil {
		return nil, err
	}
	if one {
		if nt, done, err := s.recordStored(ident, wire); done {
			if err != nil {
				return nil, err
			}
			return []*Notification{nt}, nil
		}
	}
	return s.recordsBatch(ctx, ident, wire, one)
}

// recordsBatch is records through a record batch: the path of every
// codec, and of payloads that may hold several records.
func (s *Schema) recordsBatch(ctx context.Context, ident map[string]json.RawMessage, wire []byte, one bool) ([]*Notification, error) {
	p := s.Payload
	rec, err := p.decode(ctx, wire)
	if err != nil {
		return nil, err
	}
	defer rec.Release()
	n := int(rec.NumRows())
	if one && n != 1 {
		msg := fmt.Sprintf("the payload of event type '%s' decodes through codec '%s' into %d records; POST /api/v1/notification stores exactly one: send a payload that holds several (or none) to POST /api/v1/events/%s", s.Name, p.codec.Name, n, s.Name)
		return nil, &ValidationError{Field: "payload", Message: msg, Detail: "payload holds " + strconv.Itoa(n) + " records"}
	}
	out := make([]*Notification, 0, n)
	merged := make(map[string]json.RawMessage, len(ident)+len(p.identFrom))
	for i := 0; i < n; i++ {
		data, err := p.enc.AppendRow(nil, rec, i)
		if err != nil {
			return nil, p.payloadErr(recordIndex(one, i), err)
		}
		clear(merged)
		for k, v := range ident {
			merged[k] = v
		}
		for _, name := range p.identFrom {
			raw, found, err := store.AppendJSON(nil, data, name)
			if err != nil {
				return nil, s.recordErr(one, i, invalid(name, "the record's field '%s' cannot be an identifier value: %v", name, err))
			}
			if !found || string(raw) == "null" {
				continue
			}
			if given, ok := ident[name]; ok {
				if err := s.agree(name, given, raw); err != nil {
					return nil, s.recordErr(one, i, err)
				}
				continue
			}
			merged[name] = raw
		}
		nt := &Notification{EventType: s.Name, Payload: data, ContentType: p.contentType}
		if err := s.route(nt, merged); err != nil {
			return nil, s.recordErr(one, i, err)
		}
		out = append(out, nt)
	}
	return out, nil
}

// recordStored is records for one record of a codec whose decoder
// writes the stored row directly (codec.StoredDecoder: plain WIRE JSON),
// without the record batch: the same row bytes, checks and errors, the
// identifier fields taken from the decoded values rather than read back
// from the row. done is false when the codec's decoder cannot.
func (s *Schema) recordStored(ident map[string]json.RawMessage, wire []byte) (nt *Notification, done bool, err error) {
	p := s.Payload
	st := p.state()
	defer p.pool.Put(st)
	sd, ok := st.dec.(codec.StoredDecoder)
	if !ok {
		return nil, false, nil
	}
	data, err := sd.DecodeStored(nil, wire)
	if err != nil {
		return nil, true, p.payloadErr(-1, err)
	}
	merged := make(map[string]json.RawMessage, len(ident)+len(p.identFrom))
	for k, v := range ident {
		merged[k] = v
	}
	for j, name := range p.identFrom {
		raw, err := store.AppendItemJSON(nil, sd.StoredValue(p.identCol[j]), name)
		if err != nil {
			return nil, true, invalid(name, "the record's field '%s' cannot be an identifier value: %v", name, err)
		}
		if string(raw) == "null" {
			continue
		}
		if given, ok := ident[name]; ok {
			if err := s.agree(name, given, raw); err != nil {
				return nil, true, err
			}
			continue
		}
		merged[name] = raw
	}
	nt = &Notification{EventType: s.Name, Payload: data, ContentType: p.contentType}
	if err := s.route(nt, merged); err != nil {
		return nil, true, err
	}
	return nt, true, nil
}

func recordIndex(one bool, i int) int {
	if one {
		return -1
	}
	return i
}

// recordErr prefixes a validation error with its record when a payload
// may hold several.
func (s *Schema) recordErr(one bool, i int, err error) error {
	var ve *ValidationError
	if one || !errors.As(err, &ve) {
		return err
	}
	c := *ve
	c.Message = "record " + strconv.Itoa(i) + ": " + c.Message
	return &c
}

// agree checks that an identifier value given with the request and the
// record's field of the same name canonicalise alike. The message quotes
// neither: the record's is a payload value.
func (s *Schema) agree(name string, given, fromRecord json.RawMessage) error {
	f := s.byName[name]
	canon := func(raw json.RawMessage) (string, error) {
		if gh, ok := f.Handler.(GeometryHandler); ok {
			g, err := gh.Geometry(raw)
			if err != nil {
				return "", err
			}
			return string(g.CanonicalJSON()), nil
		}
		return canonicalScalar(f, raw, "notify")
	}
	a, err := canon(given)
	if err != nil {
		return err
	}
	b, err := canon(fromRecord)
	if err != nil {
		return invalid(name, "the record's field '%s' is not a valid value for it", name)
	}
	if a != b {
		return &ValidationError{Field: name,
			Message: "identifier '" + name + "' disagrees with the record's field '" + name + "': send the same value, or leave it out and let the record fill it",
			Detail:  "identifier '" + name + "' disagrees with the record"}
	}
	return nil
}

// NotifyRaw validates a raw notify (POST /api/v1/events/{event_type}):
// wire is the payload in the codec's format, ident the identifier values
// given with it (query parameters). The payload may unfold into up to
// MaxRecords records; each becomes one notification, identifiers taken
// from ident merged with the record's same-named fields (a value that
// disagrees is refused). Every record is validated before any is
// returned; none is returned on error.
func (s *Schema) NotifyRaw(ctx context.Context, ident map[string]json.RawMessage, wire []byte) ([]*Notification, error) {
	if s.Payload == nil {
		return nil, requestInvalid("event type '%s' has no payload codec, so it has no raw payload format: send notifications to POST /api/v1/notification", s.Name)
	}
	if _, ok := ident[configs.FieldPoint]; ok {
		_, err := s.Notify(ident, nil) // the message of the reserved point
		return nil, err
	}
	return s.records(ctx, ident, wire, false)
}

// checkDeclared refuses identifier keys the schema does not declare.
func (s *Schema) checkDeclared(ident map[string]json.RawMessage) error {
	var undeclared []string
	for k := range ident {
		if _, ok := s.byName[k]; !ok {
			undeclared = append(undeclared, k)
		}
	}
	if len(undeclared) > 0 {
		sort.Strings(undeclared)
		// aviso-server's wording (with the first unknown key in sorted
		// order); herald's details name them all and the declared ones.
		return &ValidationError{Field: undeclared[0],
			Message: "Unknown field '" + undeclared[0] + "' provided for notify operation",
			Detail:  "unknown identifier field " + quoteList(undeclared) + " for event type '" + s.Name + "'; declared fields: " + quoteList(s.fieldNames())}
	}
	return nil
}

// CloudEventView renders a stored notification in view v (nil: the
// default view) as the event type's CloudEvent.
func (r *Registry) CloudEventView(n *Notification, seq uint64, at time.Time, v *View) ([]byte, error) {
	s, err := r.schemaOf(n, seq)
	if err != nil {
		return nil, err
	}
	return s.CloudEventView(n, seq, at, v)
}

// CloudEventView renders n in view v (nil: the default view). Typed
// records carry the view's codec and format as the extension attributes
// heraldcodec and heraldformat; a record the view cannot read (stored
// before the event type had its codec, or under a schema it cannot be
// read as) is delivered with a null payload and the reason in the
// extension attribute heraldpayloaderror, which never quotes values.
func (s *Schema) CloudEventView(n *Notification, seq uint64, at time.Time, v *View) ([]byte, error) {
	stored := store.IsStored(n.ContentType)
	if !stored && (v == nil || v.codec == nil) {
		return s.CloudEvent(n, seq, at)
	}
	if v == nil {
		if s.Payload != nil {
			v = s.Payload.row
		}
	}
	var ext []byte
	payload := func(b []byte) []byte {
		var why string
		switch {
		case v == nil:
			why = "the record holds a typed payload, but event type '" + s.Name + "' has no payload codec now"
		case !stored:
			why = "the record was stored before event type '" + s.Name + "' had its payload codec: it holds opaque JSON, which format '" + v.Name() + "' cannot show"
		default:
			out, err := v.appendPayload(b, n.Payload)
			if err == nil {
				return out
			}
			why = "the stored record cannot be shown in format '" + v.Name() + "': " + err.Error()
		}
		ext = jsonstr.Append(append(ext, `,"heraldpayloaderror":`...), why)
		return append(b, "null"...)
	}
	b := make([]byte, 0, 256+2*len(n.Payload)+16*len(n.Tokens))
	b = append(b, `{"data":{"identifier":`...)
	var err error
	if b, err = s.appendIdentifier(b, n); err != nil {
		return nil, err
	}
	b = append(b, `,"payload":`...)
	b = payload(b)
	b = append(b, `},"datacontenttype":"application/json","dataschema":`...)
	b = append(b, s.ce.schema...)
	if v != nil {
		b = append(b, v.ext...)
	}
	b = append(b, ext...)
	return s.appendEnd(b, n, seq, at), nil
}
