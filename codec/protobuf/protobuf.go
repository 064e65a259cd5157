// Package protobuf owns protobuf codecs: compiling the .proto files of a
// resource version (github.com/bufbuild/protocompile) from the files and
// import roots a codec's CONFIG selects, resolving MESSAGE and BATCH
// MESSAGE and checking the batch message's shape, the JSON view of a
// message (a protoreflect walk: proto field names, 64-bit integers as
// numbers, default-valued fields omitted, float fields as the shortest
// 32-bit text), and writing program output as a message (protojson into a
// dynamicpb message, marshalled deterministically).
//
// It must not run programs or know internal schemas; the jaq runtime
// drives it as a Format. Its errors never quote payload values.
package protobuf

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"math"
	"math/big"
	"path"
	"sort"
	"strings"

	"github.com/bufbuild/protocompile"
	"google.golang.org/protobuf/encoding/protojson"
	"google.golang.org/protobuf/proto"
	"google.golang.org/protobuf/reflect/protoreflect"
	"google.golang.org/protobuf/reflect/protoregistry"
	"google.golang.org/protobuf/types/dynamicpb"

	"github.com/herald-gateway/herald/codec/jaq/formats"
	"github.com/herald-gateway/herald/codec/jaq/rowview"
	"github.com/herald-gateway/herald/codec/resource"
	"github.com/herald-gateway/herald/codec/types"
	"github.com/herald-gateway/herald/codec/values"
)

// Clause names the part of a CREATE CODEC statement a build error belongs
// to, so the catalog can point at it.
type Clause uint8

// Clauses of a protobuf codec.
const (
	ClauseResource Clause = iota
	ClauseConfig
	ClauseMessage
	ClauseBatchMessage
)

// BuildError is a protobuf codec that cannot be built.
type BuildError struct {
	Clause Clause
	Msg    string
}

// Error implements error.
func (e *BuildError) Error() string { return e.Msg }

// Schema is the compiled descriptors of a protobuf codec. It is safe for
// concurrent use.
type Schema struct {
	Resource *resource.Resource
	Message  protoreflect.MessageDescriptor
	// Batch is the BATCH MESSAGE, nil when not declared; Repeated is its
	// single repeated field when it has that shape.
	Batch    protoreflect.MessageDescriptor
	Repeated protoreflect.FieldDescriptor
	types    *dynamicpb.Types
}

// Build compiles the codec's descriptors from its resource version and
// checks MESSAGE and BATCH MESSAGE. hasBatchProgram says whether the codec
// declares ON EMITTING BATCH (then BATCH MESSAGE may have any shape).
func Build(set *resource.Set, p *types.Proto, hasBatchProgram bool) (*Schema, error) {
	res, err := set.Lookup(p.Resource, p.Version)
	if err != nil {
		return nil, &BuildError{Clause: ClauseResource, Msg: err.Error()}
	}
	files, err := compile(res, p.Files(), p.Includes())
	if err != nil {
		return nil, &BuildError{Clause: ClauseConfig, Msg: fmt.Sprintf("resource %s version %d does not compile: %v", types.Quote(res.Name), res.Version, err)}
	}
	s := &Schema{Resource: res, types: dynamicpb.NewTypes(files)}
	if s.Message, err = message(files, p.Message); err != nil {
		return nil, &BuildError{Clause: ClauseMessage, Msg: "MESSAGE " + err.Error()}
	}
	if p.BatchMessage == "" {
		if hasBatchProgram {
			return nil, &BuildError{Clause: ClauseMessage, Msg: "ON EMITTING BATCH yields a BATCH MESSAGE: declare BATCH MESSAGE '…' after MESSAGE"}
		}
		return s, nil
	}
	if s.Batch, err = message(files, p.BatchMessage); err != nil {
		return nil, &BuildError{Clause: ClauseBatchMessage, Msg: "BATCH MESSAGE " + err.Error()}
	}
	fs := s.Batch.Fields()
	if fs.Len() == 1 && fs.Get(0).Cardinality() == protoreflect.Repeated && !fs.Get(0).IsMap() &&
		fs.Get(0).Message() != nil && fs.Get(0).Message().FullName() == s.Message.FullName() {
		s.Repeated = fs.Get(0)
	} else if !hasBatchProgram {
		return nil, &BuildError{Clause: ClauseBatchMessage, Msg: fmt.Sprintf("BATCH MESSAGE %s must declare exactly one field, repeated %s, to hold the members (or the codec must declare ON EMITTING BATCH)",
			types.QuoteString(p.BatchMessage), s.Message.FullName())}
	}
	return s, nil
}

func message(files *protoregistry.Files, name string) (protoreflect.MessageDescriptor, error) {
	d, err := files.FindDescriptorByName(protoreflect.FullName(name))
	if err == nil {
		if md, ok := d.(protoreflect.MessageDescriptor); ok {
			return md, nil
		}
		return nil, fmt.Errorf("%s names a %s, not a message", types.QuoteString(name), kindOf(d))
	}
	var names []string
	files.RangeFiles(func(f protoreflect.FileDescriptor) bool {
		if strings.HasPrefix(string(f.Package()), "google.protobuf") {
			return true
		}
		collect(f.Messages(), &names)
		return true
	})
	sort.Strings(names)
	if len(names) > 12 {
		names = append(names[:12], "…")
	}
	return nil, fmt.Errorf("%s is not a message of the compiled files (they define %s)", types.QuoteString(name), strings.Join(names, ", "))
}

func collect(ms protoreflect.MessageDescriptors, names *[]string) {
	for i := 0; i < ms.Len(); i++ {
		if ms.Get(i).IsMapEntry() {
			continue
		}
		*names = append(*names, string(ms.Get(i).FullName()))
		collect(ms.Get(i).Messages(), names)
	}
}

func kindOf(d protoreflect.Descriptor) string {
	switch d.(type) {
	case protoreflect.EnumDescriptor:
		return "enum"
	case protoreflect.FieldDescriptor:
		return "field"
	case protoreflect.ServiceDescriptor:
		return "service"
	case protoreflect.EnumValueDescriptor:
		return "enum value"
	}
	return "descriptor"
}

// compile compiles the selected files (all .proto files of the resource
// when none is selected) against the import roots (the resource root when
// none is given) and returns every file they reach.
func compile(res *resource.Resource, files, includes []string) (*protoregistry.Files, error) {
	for _, p := range append(append([]string(nil), files...), includes...) {
		if err := resource.CheckPath(p); err != nil {
			return nil, err
		}
	}
	if len(includes) == 0 {
		includes = []string{"."}
	}
	roots := make([]string, len(includes))
	for i, r := range includes {
		roots[i] = path.Clean(r)
	}
	if len(files) == 0 {
		var all []string
		for p := range res.Files {
			if strings.HasSuffix(p, ".proto") {
				all = append(all, p)
			}
		}
		sort.Strings(all)
		for _, p := range all {
			best := ""
			found := false
			for _, r := range roots { // the most specific root names the file
				if r == "." || strings.HasPrefix(p, r+"/") {
					if !found || len(r) > len(best) {
						best, found = r, true
					}
				}
			}
			if !found {
				continue
			}
			if best != "." {
				p = strings.TrimPrefix(p, best+"/")
			}
			files = append(files, p)
		}
		if len(files) == 0 {
			return nil, errors.New("the resource holds no .proto file under its import roots")
		}
	}
	for i, f := range files {
		files[i] = path.Clean(f)
	}
	c := protocompile.Compiler{
		Resolver: protocompile.WithStandardImports(&protocompile.SourceResolver{
			ImportPaths: roots,
			Accessor: func(p string) (io.ReadCloser, error) {
				b, ok := res.Files[path.Clean(strings.ReplaceAll(p, "\\", "/"))]
				if !ok {
					return nil, fmt.Errorf("%s: %w", p, fs.ErrNotExist)
				}
				return io.NopCloser(strings.NewReader(string(b))), nil
			},
		}),
		MaxParallelism: 1,
	}
	linked, err := c.Compile(context.Background(), files...)
	if err != nil {
		return nil, err // file:line:col: message, from the first error
	}
	reg := new(protoregistry.Files)
	var add func(f protoreflect.FileDescriptor) error
	add = func(f protoreflect.FileDescriptor) error {
		if _, err := reg.FindFileByPath(f.Path()); err == nil {
			return nil
		}
		imps := f.Imports()
		for i := 0; i < imps.Len(); i++ {
			if err := add(imps.Get(i).FileDescriptor); err != nil {
				return err
			}
		}
		return reg.RegisterFile(f)
	}
	for _, f := range linked {
		if err := add(f); err != nil {
			return nil, err
		}
	}
	return reg, nil
}

// Format reads and writes payloads of one message (the jaq runtime's
// Format): a payload holds exactly one message, read into its JSON view;
// a program's output is written as the message, a batch program's output
// as the BATCH MESSAGE, and a batch container as the BATCH MESSAGE's
// repeated field.
type Format struct {
	s *Schema
}

// NewFormat returns the format of a compiled schema.
func NewFormat(s *Schema) *Format { return &Format{s: s} }

// detailError is a protobuf error whose library message (which may quote
// values) is kept for trace logs only.
type detailError struct {
	err    *values.Error
	detail string
}

func (e *detailError) Error() string  { return e.err.Error() }
func (e *detailError) Unwrap() error  { return e.err }
func (e *detailError) Detail() string { return e.detail }

// Read decodes one message and yields its JSON view.
func (f *Format) Read(payload []byte, yield func(any) error) error {
	m := dynamicpb.NewMessage(f.s.Message)
	if err := (proto.UnmarshalOptions{Resolver: f.s.types}).Unmarshal(payload, m); err != nil {
		return &detailError{err: &values.Error{Code: values.CodeProtobuf, Msg: "payload is not a valid " + string(f.s.Message.FullName()) + " message", Offset: -1}, detail: err.Error()}
	}
	v, err := f.View(m)
	if err != nil {
		return err
	}
	return yield(v)
}

// View returns the JSON view of a message: proto field names, 64-bit
// integers as numbers, enums by name, bytes as padded base64, float
// fields as their shortest 32-bit text, double fields as float64, well
// known types in their protojson form; fields that hold their default
// value are absent.
func (f *Format) View(m protoreflect.Message) (map[string]any, error) {
	out := map[string]any{}
	var err error
	m.Range(func(fd protoreflect.FieldDescriptor, v protoreflect.Value) bool {
		if negativeZero(fd, v) {
			return true // a zero of either sign is the default value
		}
		var x any
		switch {
		case fd.IsList():
			l := v.List()
			xs := make([]any, l.Len())
			for i := range xs {
				if xs[i], err = f.scalar(fd, l.Get(i)); err != nil {
					return false
				}
			}
			x = xs
		case fd.IsMap():
			mm := map[string]any{}
			v.Map().Range(func(k protoreflect.MapKey, mv protoreflect.Value) bool {
				var e any
				if e, err = f.scalar(fd.MapValue(), mv); err != nil {
					return false
				}
				mm[k.String()] = e
				return true
			})
			x = mm
		default:
			x, err = f.scalar(fd, v)
		}
		if err != nil {
			return false
		}
		out[string(fd.Name())] = x
		return true
	})
	return out, err
}

func (f *Format) scalar(fd protoreflect.FieldDescriptor, v protoreflect.Value) (any, error) {
	switch fd.Kind() {
	case protoreflect.BoolKind:
		return v.Bool(), nil
	case protoreflect.EnumKind:
		if ev := fd.Enum().Values().ByNumber(v.Enum()); ev != nil {
			return string(ev.Name()), nil
		}
		return int(v.Enum()), nil
	case protoreflect.Int32Kind, protoreflect.Sint32Kind, protoreflect.Sfixed32Kind,
		protoreflect.Int64Kind, protoreflect.Sint64Kind, protoreflect.Sfixed64Kind:
		return int(v.Int()), nil
	case protoreflect.Uint32Kind, protoreflect.Fixed32Kind, protoreflect.Uint64Kind, protoreflect.Fixed64Kind:
		u := v.Uint()
		if u <= math.MaxInt64 {
			return int(u), nil
		}
		return new(big.Int).SetUint64(u), nil
	case protoreflect.FloatKind:
		x := v.Float()
		if math.IsNaN(x) || math.IsInf(x, 0) {
			return x, nil
		}
		return json.Number(rowview.AppendFloat(nil, x, 32)), nil
	case protoreflect.DoubleKind:
		return v.Float(), nil
	case protoreflect.StringKind:
		return v.String(), nil
	case protoreflect.BytesKind:
		return string(values.AppendBase64(nil, v.Bytes())), nil
	case protoreflect.MessageKind, protoreflect.GroupKind:
		m := v.Message()
		if strings.HasPrefix(string(m.Descriptor().FullName()), "google.protobuf.") {
			b, err := protojson.MarshalOptions{UseProtoNames: true, Resolver: f.s.types}.Marshal(m.Interface())
			if err != nil {
				return nil, &values.Error{Code: values.CodeProtobuf, Msg: "a well-known type has no JSON form", Offset: -1}
			}
			var out any
			if err := formats.For(types.JSON).Read(b, func(x any) error { out = x; return nil }); err != nil {
				return nil, err
			}
			return out, nil
		}
		return f.View(m)
	}
	return nil, &values.Error{Code: values.CodeProtobuf, Msg: "unsupported field kind " + fd.Kind().String(), Offset: -1}
}

// negativeZero reports a float or double field without presence that
// holds -0: protobuf-go counts it as set, but a zero of either sign is
// the field's default value, which a message does not carry.
func negativeZero(fd protoreflect.FieldDescriptor, v protoreflect.Value) bool {
	if fd.HasPresence() || fd.IsList() || fd.IsMap() {
		return false
	}
	k := fd.Kind()
	return (k == protoreflect.FloatKind || k == protoreflect.DoubleKind) && v.Float() == 0
}

// clearZeros clears the -0 float fields without presence of m and its
// sub-messages, so the wire does not carry them.
func clearZeros(m protoreflect.Message) {
	m.Range(func(fd protoreflect.FieldDescriptor, v protoreflect.Value) bool {
		switch {
		case negativeZero(fd, v):
			m.Clear(fd)
		case fd.IsList() && fd.Message() != nil:
			l := v.List()
			for i := 0; i < l.Len(); i++ {
				clearZeros(l.Get(i).Message())
			}
		case fd.IsMap() && fd.MapValue().Message() != nil:
			v.Map().Range(func(_ protoreflect.MapKey, mv protoreflect.Value) bool {
				clearZeros(mv.Message())
				return true
			})
		case !fd.IsList() && !fd.IsMap() && fd.Message() != nil:
			clearZeros(v.Message())
		}
		return true
	})
}

// encode writes v as a message of descriptor md.
func (f *Format) encode(v any, md protoreflect.MessageDescriptor) (*dynamicpb.Message, error) {
	text, err := formats.For(types.JSON).Append(nil, v, formats.Lexical{})
	if err != nil {
		return nil, err
	}
	m := dynamicpb.NewMessage(md)
	if err := (protojson.UnmarshalOptions{Resolver: f.s.types}).Unmarshal(text, m); err != nil {
		return nil, &detailError{err: values.Errorf(values.CodeProtobuf, "", "output is not a valid instance of message "+string(md.FullName())+
			" (field names and value types must match the message)"), detail: err.Error()}
	}
	clearZeros(m)
	return m, nil
}

func marshal(dst []byte, m proto.Message) ([]byte, error) {
	out, err := proto.MarshalOptions{Deterministic: true}.MarshalAppend(dst, m)
	if err != nil {
		return dst, &detailError{err: values.Errorf(values.CodeProtobuf, "", "the message cannot be marshalled"), detail: err.Error()}
	}
	return out, nil
}

// Append writes ON EMITTING's output as one MESSAGE.
func (f *Format) Append(dst []byte, v any, _ formats.KeyOrder) ([]byte, error) {
	m, err := f.encode(v, f.s.Message)
	if err != nil {
		return dst, err
	}
	return marshal(dst, m)
}

// AppendBatchValue writes ON EMITTING BATCH's output as one BATCH MESSAGE.
func (f *Format) AppendBatchValue(dst []byte, v any, _ formats.KeyOrder) ([]byte, error) {
	if f.s.Batch == nil {
		return dst, values.Errorf(values.CodeUnencodable, "", "the codec declares no BATCH MESSAGE")
	}
	m, err := f.encode(v, f.s.Batch)
	if err != nil {
		return dst, err
	}
	return marshal(dst, m)
}

// AppendContainer writes the members as the BATCH MESSAGE's repeated
// field.
func (f *Format) AppendContainer(dst []byte, members []any, _ formats.KeyOrder) ([]byte, error) {
	if f.s.Repeated == nil {
		return dst, values.Errorf(values.CodeUnencodable, "", "a protobuf batch needs BATCH MESSAGE with one repeated field of MESSAGE (or ON EMITTING BATCH)")
	}
	b := dynamicpb.NewMessage(f.s.Batch)
	l := b.Mutable(f.s.Repeated).List()
	for i, v := range members {
		m, err := f.encode(v, f.s.Message)
		if err != nil {
			var de *detailError
			if errors.As(err, &de) {
				de.err.Path = values.IndexPath(string(f.s.Repeated.Name()), i)
			}
			return dst, err
		}
		l.Append(protoreflect.ValueOfMessage(m))
	}
	return marshal(dst, b)
}
