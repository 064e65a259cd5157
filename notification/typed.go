package notification

// This file ties typed payloads (package payload) to event types: notify
// decodes a payload through the event type's codec into records, each
// filling the identifiers of the same name, and CloudEventView renders a
// stored record in a view.

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"sort"
	"strconv"
	"strings"
	"time"

	"github.com/herald-gateway/herald/codec/catalog"
	"github.com/herald-gateway/herald/codec/evolve"
	"github.com/herald-gateway/herald/codec/jsonstr"
	"github.com/herald-gateway/herald/codec/store"
	"github.com/herald-gateway/herald/codec/types"
	"github.com/herald-gateway/herald/codec/workers"
	"github.com/herald-gateway/herald/configs"
	"github.com/herald-gateway/herald/payload"
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
	// History is the registry of past payload schemas, with which typed
	// records written under an event type's earlier schema are decoded;
	// nil knows none (such records are read under the current schema).
	History *payload.History
}

// TypedPayload is the payload type of an event type whose payload block
// names a codec (see package payload).
type TypedPayload = payload.TypedPayload

// View renders the payload of stored records in one format (see package
// payload).
type View = payload.View

// PayloadError is a payload the codec refused (see package payload).
type PayloadError = payload.PayloadError

// BusyError is a payload the extension workers could not take now (see
// package payload).
type BusyError = payload.BusyError

// RowFormat is the name of the JSON row view, the default view of a typed
// payload (and the only view of an opaque one).
const RowFormat = payload.RowFormat

// MaxRecords is the most records one payload may unfold into.
const MaxRecords = payload.MaxRecords

// MediaType returns the media type of payloads of wire format f, the
// Content-Type the raw notify endpoint expects.
func MediaType(f types.Format) string { return payload.MediaType(f) }

// Breaks returns why records stored under internal schema from cannot be
// read as schema to (see payload.Breaks). Empty when the change is
// compatible.
func Breaks(step string, from, to *types.Schema) []evolve.Break {
	return payload.Breaks(step, from, to)
}

// Readable reports whether records stored under internal schema from can
// be shown in schema to (see payload.Readable).
func Readable(from, to *types.Schema) bool { return payload.Readable(from, to) }

// newTypedPayload builds the typed payload of s, whose payload block
// names codec name.
func newTypedPayload(s *Schema, name string, cache *payload.Cache) (*TypedPayload, error) {
	idents := make([]payload.Ident, len(s.Fields))
	for i, f := range s.Fields {
		idents[i] = payload.Ident{Name: f.Name, Spatial: f.Spatial(), Type: f.Handler.Type()}
	}
	return payload.New(s.Name, idents, name, cache)
}

// payloadErr turns an error of package payload into the error notify
// answers: a *ValidationError on the payload (its Cause the
// *PayloadError), or the *BusyError as it is.
func payloadErr(err error) error {
	var pe *payload.PayloadError
	if errors.As(err, &pe) {
		return &ValidationError{Field: "payload", Message: pe.Error(), Detail: pe.Error(), Cause: pe}
	}
	var ie *payload.InputError
	if errors.As(err, &ie) {
		return &ValidationError{Field: "payload", Message: ie.Message, Detail: ie.Detail}
	}
	return err
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
	if v, ok := p.View(format); ok {
		return v, nil
	}
	return nil, requestInvalid("format '%s' is not available for event type '%s' (payload codec '%s'): its formats are %s", format, s.Name, p.Codec(), strings.Join(p.Formats(), ", "))
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
	rec, err := p.Decode(ctx, wire)
	if err != nil {
		return nil, payloadErr(err)
	}
	defer rec.Release()
	n := int(rec.NumRows())
	if one && n != 1 {
		msg := fmt.Sprintf("the payload of event type '%s' decodes through codec '%s' into %d records; POST /api/v1/notification stores exactly one: send a payload that holds several (or none) to POST /api/v1/events/%s", s.Name, p.Codec(), n, s.Name)
		return nil, &ValidationError{Field: "payload", Message: msg, Detail: "payload holds " + strconv.Itoa(n) + " records"}
	}
	out := make([]*Notification, 0, n)
	merged := make(map[string]json.RawMessage, len(ident)+len(p.IdentFrom()))
	for i := 0; i < n; i++ {
		data, err := p.EncodeRow(nil, rec, i)
		if err != nil {
			return nil, payloadErr(p.Err(recordIndex(one, i), err))
		}
		clear(merged)
		for k, v := range ident {
			merged[k] = v
		}
		for _, name := range p.IdentFrom() {
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
		nt := &Notification{EventType: s.Name, Payload: data, ContentType: p.ContentType()}
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
	data, idents, ok, err := p.DecodeStored(wire)
	if !ok {
		return nil, false, nil
	}
	if err != nil {
		var ie *payload.IdentError
		if errors.As(err, &ie) {
			return nil, true, invalid(ie.Name, "the record's field '%s' cannot be an identifier value: %v", ie.Name, ie.Err)
		}
		return nil, true, payloadErr(err)
	}
	merged := make(map[string]json.RawMessage, len(ident)+len(idents))
	for k, v := range ident {
		merged[k] = v
	}
	for j, name := range p.IdentFrom() {
		raw := idents[j]
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
	nt = &Notification{EventType: s.Name, Payload: data, ContentType: p.ContentType()}
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
	if !stored && (v == nil || v.IsRow()) {
		return s.CloudEvent(n, seq, at)
	}
	if v == nil {
		if s.Payload != nil {
			v = s.Payload.Row()
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
			out, err := v.AppendPayload(b, n.Payload, n.ContentType)
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
		b = v.AppendExt(b)
	}
	b = append(b, ext...)
	return s.appendEnd(b, n, seq, at), nil
}
