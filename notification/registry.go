package notification

import (
	"encoding/json"
	"errors"
	"fmt"
	"sort"
	"strings"
	"sync"

	"github.com/herald-gateway/herald/codec"
	"github.com/herald-gateway/herald/configs"
	"github.com/herald-gateway/herald/geo"
	"github.com/herald-gateway/herald/payload"
	"github.com/herald-gateway/herald/query"
	"github.com/herald-gateway/herald/topic"
)

// FieldPoint is the identifier key of the spatial point filter of watch
// and replay requests; a notification cannot carry it.
const FieldPoint = configs.FieldPoint

// GeometryHandler is implemented by the spatial handlers: they turn a raw
// JSON identifier value into a geo.Geometry.
type GeometryHandler interface {
	Handler
	Geometry(raw json.RawMessage) (*geo.Geometry, error)
}

// Field is one compiled identifier field of a schema.
type Field struct {
	Name        string
	Required    bool
	Description *string
	Handler     Handler
	// Pos is the field's index in the subject tokens (base = 0), or 0 when
	// the field is not routed.
	Pos int
}

// Spatial reports whether the field carries a geometry.
func (f *Field) Spatial() bool {
	_, ok := f.Handler.(GeometryHandler)
	return ok
}

// Schema is one compiled event type.
type Schema struct {
	// Name is the event type.
	Name string
	// Base is the topic base (the event name when the schema has no topic).
	Base string
	// KeyOrder lists the routed fields in subject order.
	KeyOrder []*Field
	// Fields are all declared fields in file order.
	Fields []*Field
	byName map[string]*Field
	// Geometry is the polygon or point_cloud field, nil if none.
	Geometry *Field
	// PayloadRequired rejects notifications without a payload (always so
	// for a typed payload).
	PayloadRequired bool
	// Payload is the typed payload of a schema whose payload block names
	// a codec; nil for an opaque JSON payload.
	Payload *TypedPayload
	// payloadDeclared: the schema has a payload block (schema API shows
	// {"required": …} rather than null).
	payloadDeclared bool
	// MaxHistorical is the effective historical replay cap.
	MaxHistorical int
	// Generic marks the schema-less fallback of non-strict mode.
	Generic bool
	// Config is the schema as written (nil for generic schemas).
	Config *configs.Schema

	ce       ceTemplate
	ceFields []ceField
	// qOnce builds qSchema, the schema as the query language sees it.
	qOnce   sync.Once
	qSchema *query.Schema
}

// Field returns the declared field called name.
func (s *Schema) Field(name string) (*Field, bool) {
	f, ok := s.byName[name]
	return f, ok
}

// Registry holds the compiled schemas of one configuration. It is immutable
// and safe for concurrent use.
type Registry struct {
	schemas    map[string]*Schema
	byBase     map[string]*Schema
	names      []string
	strict     bool
	baseURL    string
	defaultCap int
}

// NewRegistry compiles the notification schemas of cfg. It assumes the
// structural rules were checked by configs.Load and checks what needs the
// handlers: handler parameters (ranges, formats, enum values, defaults).
// Every error names the event type, the field and the rule.
func NewRegistry(cfg *configs.Config) (*Registry, error) {
	return NewRegistryWith(cfg, RegistryOptions{})
}

// NewRegistryWith is NewRegistry with the codec catalog that payload
// blocks naming a codec refer to: each such event type gets its typed
// payload (TypedPayload), and every rule tying it to its codec is checked
// (the codec exists and decodes; a field that fills an identifier is not
// SENSITIVE and has a type the identifier can take).
func NewRegistryWith(cfg *configs.Config, opts RegistryOptions) (*Registry, error) {
	cache := payload.NewCache(opts.Codecs, opts.CodecsFailed, codec.Options{Workers: opts.Workers, Logger: opts.Logger}, opts.History)
	r := &Registry{
		schemas:    map[string]*Schema{},
		byBase:     map[string]*Schema{},
		baseURL:    cfg.Application.BaseURL,
		defaultCap: cfg.WatchEndpoint.MaxHistoricalNotifications,
		strict:     cfg.Strict(),
	}
	if r.baseURL == "" {
		r.baseURL = configs.DefaultBaseURL
	}
	var errs []error
	for _, sc := range cfg.NotificationSchema {
		s, err := r.compile(sc, cache)
		if err != nil {
			errs = append(errs, err)
			continue
		}
		if other, dup := r.byBase[s.Base]; dup {
			errs = append(errs, fmt.Errorf("notification_schema.%s: topic.base %q is already used by event type %q", s.Name, s.Base, other.Name))
			continue
		}
		r.schemas[s.Name] = s
		r.byBase[s.Base] = s
		r.names = append(r.names, s.Name)
	}
	if len(errs) > 0 {
		return nil, errors.Join(errs...)
	}
	sort.Strings(r.names)
	return r, nil
}

func (r *Registry) compile(sc *configs.Schema, cache *payload.Cache) (*Schema, error) {
	s := &Schema{
		Name:          sc.Name,
		Base:          sc.Name,
		byName:        map[string]*Field{},
		MaxHistorical: r.defaultCap,
		Config:        sc,
	}
	if sc.MaxHistoricalNotifications != nil {
		s.MaxHistorical = *sc.MaxHistoricalNotifications
	}
	if sc.Payload != nil {
		s.payloadDeclared = true
		s.PayloadRequired = sc.Payload.Required
	}
	var errs []error
	for _, fc := range sc.Identifier {
		h, err := newHandler(fc)
		if err != nil {
			errs = append(errs, fmt.Errorf("notification_schema.%s.identifier.%s (%s, line %d): %w", sc.Name, fc.Name, fc.Type, fc.Line, err))
			continue
		}
		f := &Field{Name: fc.Name, Handler: h, Description: fc.Description}
		if fc.Required != nil {
			f.Required = *fc.Required
		}
		s.Fields = append(s.Fields, f)
		s.byName[f.Name] = f
		if f.Spatial() {
			s.Geometry = f
		}
	}
	if len(errs) > 0 {
		return nil, errors.Join(errs...)
	}
	var order []string
	if sc.Topic != nil {
		s.Base = sc.Topic.Base
		order = sc.Topic.KeyOrder
	} else {
		// Without a topic block the fields are routed in name order, like
		// the generic fallback, so that every value stays recoverable.
		for _, f := range s.Fields {
			if !f.Spatial() {
				order = append(order, f.Name)
			}
		}
		sort.Strings(order)
	}
	for i, name := range order {
		f, ok := s.byName[name]
		if !ok {
			return nil, fmt.Errorf("notification_schema.%s.topic.key_order: %q is not a declared identifier", sc.Name, name)
		}
		if _, cloud := f.Handler.(*PointCloudHandler); cloud {
			return nil, fmt.Errorf("notification_schema.%s.topic.key_order: %q is a point cloud and cannot be routed", sc.Name, name)
		}
		f.Pos = i + 1
		s.KeyOrder = append(s.KeyOrder, f)
	}
	if !topic.ValidBase(s.Base) {
		return nil, fmt.Errorf("notification_schema.%s: topic base %q must match %s", sc.Name, s.Base, topic.BaseRule)
	}
	s.ce = newCETemplate(r.baseURL, s.Name)
	s.ceFields = ceFieldOrder(s)
	if sc.Payload != nil && sc.Payload.Codec != "" && !cache.Failed() {
		p, err := newTypedPayload(s, sc.Payload.Codec, cache)
		if err != nil {
			return nil, err
		}
		s.Payload, s.PayloadRequired = p, true
	}
	return s, nil
}

func newHandler(fc *configs.IdentifierField) (Handler, error) {
	var (
		h   Handler
		err error
	)
	switch fc.Type {
	case configs.HandlerString:
		h, err = asHandler(NewStringHandler(fc.MaxLength))
	case configs.HandlerDate:
		h, err = asHandler(NewDateHandler(fc.CanonicalFormat))
	case configs.HandlerTime:
		h = NewTimeHandler()
	case configs.HandlerEnum:
		h, err = asHandler(NewEnumHandler(fc.Values))
	case configs.HandlerInt:
		h, err = asHandler(NewIntHandler(fc.Range))
	case configs.HandlerFloat:
		h, err = asHandler(NewFloatHandler(fc.Range))
	case configs.HandlerExpver:
		h, err = asHandler(NewExpverHandler(fc.Default))
	case configs.HandlerPolygon:
		h = NewPolygonHandler()
	case configs.HandlerPointCloud:
		h, err = asHandler(NewPointCloudHandler(fc.MaxPoints))
	default:
		err = fmt.Errorf("unknown handler type %q", fc.Type)
	}
	return h, err
}

// asHandler converts a constructor's typed result without producing a
// non-nil interface holding a nil pointer.
func asHandler[H Handler](h H, err error) (Handler, error) {
	if err != nil {
		return nil, err
	}
	return h, nil
}

// Strict reports whether unknown event types are rejected.
func (r *Registry) Strict() bool { return r.strict }

// Names returns the configured event types, sorted. The slice is never nil:
// with no schema it is empty, so that it encodes as the JSON [] that
// clients expect (the aviso client fails to decode a schema list whose
// event_types is null).
func (r *Registry) Names() []string { return append(make([]string, 0, len(r.names)), r.names...) }

// Schema returns the compiled schema of an event type.
func (r *Registry) Schema(eventType string) (*Schema, bool) {
	s, ok := r.schemas[eventType]
	return s, ok
}

// ResolveStream maps an event-type name (exact, else ASCII case-insensitive)
// to its topic base; any other name is returned as is. Admin endpoints use it
// to accept event-type aliases (Aviso's admin endpoints, docs/api.md).
func (r *Registry) ResolveStream(name string) string {
	if s, ok := r.schemas[name]; ok {
		return s.Base
	}
	for _, n := range r.names {
		if strings.EqualFold(n, name) {
			return r.schemas[n].Base
		}
	}
	return name
}

// Lookup returns the schema for a request's event type: the configured
// one, or in non-strict mode a generic schema-less one. In strict mode an
// unknown event type is an *UnknownEventTypeError; a generic event type
// that is not a valid topic base is a *ValidationError.
func (r *Registry) Lookup(eventType string) (*Schema, error) {
	if s, ok := r.schemas[eventType]; ok {
		return s, nil
	}
	if r.strict {
		return nil, &UnknownEventTypeError{EventType: eventType, Configured: r.Names()}
	}
	if !topic.ValidBase(eventType) {
		return nil, requestInvalid("event type '%s' has no schema and is not a valid topic base: it must match %s", eventType, topic.BaseRule)
	}
	if s, ok := r.byBase[eventType]; ok {
		return nil, requestInvalid("event type '%s' has no schema, and its name is the topic base of event type '%s'", eventType, s.Name)
	}
	return &Schema{
		Name: eventType, Base: eventType, Generic: true, byName: map[string]*Field{},
		MaxHistorical: r.defaultCap, ce: newCETemplate(r.baseURL, eventType),
	}, nil
}
