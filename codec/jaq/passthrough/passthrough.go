// Package passthrough decodes JAQ-native JSON payloads straight into rows for
// the ingestion programs that only hand values on: '.' (each payload
// value is a row), '.[]' (each element of an array value is a row), and
// either after member names ('.a.b', '.readings[]').
// It walks the JSON tokens into the row builder instead of building the
// generic value, running the program and decoding its output, and gives
// the same rows and the same errors as that path (the JSON reader of package formats,
// package program and rowview.Target): a malformed value rejects the payload
// even after a row of it failed, and of a row's failures the one of the
// first field in schema order is reported. Values it does not walk (one
// that is not an object where the path names a member or ends, not an
// array where it iterates, an element that is not an object) are built
// and handed to the caller.
//
// It must not run programs or apply value rules of its own: JSON syntax
// comes from package formats, the value rules from package rowview.
package passthrough

import (
	"bytes"
	"io"
	"strconv"
	"sync"
	"unsafe"

	"github.com/go-json-experiment/json/jsontext"

	"github.com/herald-gateway/herald/codec/jaq/formats"
	"github.com/herald-gateway/herald/codec/jaq/rowview"
	"github.com/herald-gateway/herald/codec/rows"
	"github.com/herald-gateway/herald/codec/types"
	"github.com/herald-gateway/herald/codec/values"
)

// Handler receives what Decode does not decide itself.
type Handler interface {
	// Rest handles a value the walk does not follow, reached after level
	// member names of the path (0: a payload value): the rest of the
	// program runs on it and its outputs become rows.
	Rest(level int, v any) error
	// Output is called before each output of a walked value (out is its
	// position among the value's outputs). An error ends the decode, once
	// the rest of the value is read.
	Output(out int) error
	// Row handles an output that is not walked (an element that is not
	// an object); an error ends the decode once the value is read.
	Row(out int, v any) error
	// Invalid turns the failure of output out to fit the schema into the
	// error Decode returns.
	Invalid(out int, e *values.Error) error
	// Next is called after each payload value has been handled.
	Next()
}

// Decoder decodes payloads into rows of one internal schema. It is safe
// for concurrent use.
type Decoder struct {
	fields  []types.Field
	names   map[string]int
	quoted  []string
	readers sync.Pool // *reader, reused across payloads
}

// reader is a token decoder and its source.
type reader struct {
	dec *jsontext.Decoder
	buf bytes.Buffer
}

// New returns a decoder for schema s.
func New(s *types.Schema) *Decoder {
	d := &Decoder{fields: s.Fields, names: make(map[string]int, len(s.Fields))}
	for i, f := range s.Fields {
		d.names[f.Name] = i
		d.quoted = append(d.quoted, types.Quote(f.Name))
	}
	return d
}

// Path is the program a walk follows: member names, then an iteration
// or not ('.', '.[]', '.a.b', '.a.b[]').
type Path struct {
	Keys []string
	Iter bool
}

// Decode reads every value of payload, following p. It returns the first
// malformed value's error (a *values.Error), or the first error a handler
// returned.
func (d *Decoder) Decode(payload []byte, b *rows.Builder, p Path, h Handler) error {
	r, _ := d.readers.Get().(*reader)
	if r == nil {
		r = &reader{dec: formats.NewJSONDecoder(nil)}
	}
	formats.ResetJSONDecoder(r.dec, &r.buf, payload)
	defer func() {
		formats.ResetJSONDecoder(r.dec, &r.buf, nil) // keep no reference to the payload
		d.readers.Put(r)
	}()
	dec := r.dec
	for {
		if dec.PeekKind() == 0 {
			if _, err := dec.ReadToken(); err == io.EOF {
				return nil
			} else if err != nil {
				return formats.JSONError(err, dec)
			}
		}
		pending, err := d.follow(dec, b, p, h, 0)
		if err != nil {
			return err
		}
		if pending != nil {
			return pending
		}
		h.Next()
	}
}

// follow walks the value next in dec, reached after level keys of p (so
// at JSON nesting depth level). err is a malformed value; pending is a
// handler's error, returned once the value has been read whole (a
// malformed value after it wins, as the general path reads a value whole
// before running the program on it).
func (d *Decoder) follow(dec *jsontext.Decoder, b *rows.Builder, p Path, h Handler, level int) (pending, err error) {
	switch k := dec.PeekKind(); {
	case level < len(p.Keys) && k == '{':
		return d.member(dec, b, p, h, level)
	case level == len(p.Keys) && !p.Iter && k == '{':
		return d.one(dec, b, h, level)
	case level == len(p.Keys) && p.Iter && k == '[':
		return d.elements(dec, b, h, level)
	}
	v, err := formats.JSONValue(dec, level)
	if err != nil {
		return nil, err
	}
	return h.Rest(level, v), nil
}

// member walks an object at path level: the member the path names is
// followed, the others are read and dropped; an absent one is null.
func (d *Decoder) member(dec *jsontext.Decoder, b *rows.Builder, p Path, h Handler, level int) (pending, err error) {
	depth := level
	if e := formats.JSONTooDeep(dec, depth); e != nil {
		return nil, e
	}
	if _, err := dec.ReadToken(); err != nil {
		return nil, formats.JSONError(err, dec)
	}
	found := false
	for dec.PeekKind() != '}' {
		tok, err := dec.ReadToken()
		if err != nil {
			return nil, formats.JSONError(err, dec)
		}
		if !found && tok.String() == p.Keys[level] {
			found = true
			if pending, err = d.follow(dec, b, p, h, level+1); err != nil {
				return nil, err
			}
			continue
		}
		if _, err := formats.JSONValue(dec, depth+1); err != nil {
			return nil, err
		}
	}
	if _, err := dec.ReadToken(); err != nil {
		return nil, formats.JSONError(err, dec)
	}
	if !found {
		pending = h.Rest(level+1, nil)
	}
	return pending, nil
}

// one walks an object at depth, the one output of its value.
func (d *Decoder) one(dec *jsontext.Decoder, b *rows.Builder, h Handler, depth int) (pending, err error) {
	if err := h.Output(0); err != nil {
		if _, serr := formats.JSONValue(dec, depth); serr != nil {
			return nil, serr
		}
		return err, nil
	}
	terr, err := d.object(dec, depth, b)
	if err != nil {
		return nil, err
	}
	if terr != nil {
		return h.Invalid(0, terr), nil
	}
	return nil, nil
}

// elements walks an array at depth, whose elements are the outputs.
func (d *Decoder) elements(dec *jsontext.Decoder, b *rows.Builder, h Handler, depth int) (pending, err error) {
	if e := formats.JSONTooDeep(dec, depth); e != nil {
		return nil, e
	}
	if _, err := dec.ReadToken(); err != nil {
		return nil, formats.JSONError(err, dec)
	}
	for out := 0; dec.PeekKind() != ']'; out++ {
		if pending == nil {
			pending = h.Output(out)
		}
		if pending != nil {
			if _, err := formats.JSONValue(dec, depth+1); err != nil {
				return nil, err
			}
			continue
		}
		if dec.PeekKind() == '{' {
			terr, err := d.object(dec, depth+1, b)
			if err != nil {
				return nil, err
			}
			if terr != nil {
				pending = h.Invalid(out, terr)
			}
			continue
		}
		v, err := formats.JSONValue(dec, depth+1)
		if err != nil {
			return nil, err
		}
		pending = h.Row(out, v)
	}
	if _, err := dec.ReadToken(); err != nil {
		return nil, formats.JSONError(err, dec)
	}
	return pending, nil
}

// fieldSet records which fields an object held.
type fieldSet struct {
	small uint64
	big   []bool
}

func (s *fieldSet) set(i int) {
	if i < 64 {
		s.small |= 1 << i
		return
	}
	for len(s.big) <= i-64 {
		s.big = append(s.big, false)
	}
	s.big[i-64] = true
}

func (s *fieldSet) has(i int) bool {
	if i < 64 {
		return s.small&(1<<i) != 0
	}
	return i-64 < len(s.big) && s.big[i-64]
}

// object walks an object at nesting depth into one new row of b. err is
// a malformed value (the row is left open for the caller's rollback);
// terr is the row's failure to fit the schema (the row is abandoned),
// reported only once the whole object has been read.
func (d *Decoder) object(dec *jsontext.Decoder, depth int, b *rows.Builder) (terr *values.Error, err error) {
	if e := formats.JSONTooDeep(dec, depth); e != nil {
		return nil, e
	}
	if _, err := dec.ReadToken(); err != nil {
		return nil, formats.JSONError(err, dec)
	}
	b.BeginRow()
	var seen fieldSet
	errAt := len(d.fields) // the schema index of terr's field
	record := func(i int, e *values.Error) {
		if i < errAt {
			errAt, terr = i, e
		}
	}
	var scratch []byte
	for k := dec.PeekKind(); k != '}'; k = dec.PeekKind() {
		if k != '"' { // not a name: the error the reader's ReadToken gives
			if _, err := dec.ReadToken(); err != nil {
				return nil, formats.JSONError(err, dec)
			}
			return nil, &values.Error{Code: values.CodeSyntax, Msg: "malformed JSON", Offset: int(dec.InputOffset())}
		}
		raw, err := dec.ReadValue()
		if err != nil {
			return nil, formats.JSONError(err, dec)
		}
		var i int
		var ok bool
		if bytes.IndexByte(raw, '\\') < 0 {
			i, ok = d.names[string(raw[1:len(raw)-1])]
		} else {
			if scratch, err = jsontext.AppendUnquote(scratch[:0], raw); err != nil {
				return nil, formats.JSONError(err, dec)
			}
			i, ok = d.names[string(scratch)]
		}
		if !ok || i > errAt {
			if _, err := formats.JSONValue(dec, depth+1); err != nil {
				return nil, err
			}
			continue
		}
		seen.set(i)
		kind := dec.PeekKind()
		if kind == 'n' {
			if e := formats.JSONTooDeep(dec, depth+1); e != nil {
				return nil, e
			}
			if _, err := dec.ReadToken(); err != nil {
				return nil, formats.JSONError(err, dec)
			}
			if d.fields[i].Optional {
				b.Col(i).B.AppendNull()
			} else {
				record(i, values.Errorf(values.CodeNullValue, d.quoted[i], "null in a required field"))
			}
			continue
		}
		e, err := d.value(b.Col(i), dec, kind, depth+1, 1)
		if err != nil {
			return nil, err
		}
		if e != nil {
			e.Path = d.quoted[i] + e.Path
			record(i, e)
		}
	}
	if _, err := dec.ReadToken(); err != nil {
		return nil, formats.JSONError(err, dec)
	}
	for i, f := range d.fields {
		if i > errAt {
			break
		}
		if seen.has(i) {
			continue
		}
		if f.Optional {
			b.Col(i).B.AppendNull()
		} else {
			record(i, values.Errorf(values.CodeMissingField, d.quoted[i], "required field is missing"))
		}
	}
	if terr != nil {
		b.Abandon()
		return terr, nil
	}
	if err := b.Commit(); err != nil {
		return values.Errorf(values.CodeSyntax, "", err.Error()), nil
	}
	return nil, nil
}

// value walks a value at JSON nesting depth jd and target depth td (1
// for a field's own value) into column c; kind is dec.PeekKind(). The target error's Path is
// relative to the value.
func (d *Decoder) value(c *rows.Col, dec *jsontext.Decoder, kind jsontext.Kind, jd, td int) (*values.Error, error) {
	switch kind {
	case '0':
		if e := formats.JSONTooDeep(dec, jd); e != nil {
			return nil, e
		}
		raw, err := dec.ReadValue()
		if err != nil {
			return nil, formats.JSONError(err, dec)
		}
		return rowview.DecodeNumber(c, raw, td), nil
	case '"':
		if e := formats.JSONTooDeep(dec, jd); e != nil {
			return nil, e
		}
		raw, err := dec.ReadValue()
		if err != nil {
			return nil, formats.JSONError(err, dec)
		}
		if bytes.IndexByte(raw, '\\') < 0 {
			s := raw[1 : len(raw)-1]
			// DecodeString keeps no reference to s
			return rowview.DecodeString(c, unsafe.String(unsafe.SliceData(s), len(s)), td), nil
		}
		u, err := jsontext.AppendUnquote(nil, raw)
		if err != nil {
			return nil, formats.JSONError(err, dec)
		}
		return rowview.DecodeString(c, string(u), td), nil
	case '[':
		if (c.Kind == types.Array || c.Kind == types.Vec) && td <= rowview.MaxDepth {
			return d.array(c, dec, jd, td)
		}
	}
	v, err := formats.JSONValue(dec, jd)
	if err != nil {
		return nil, err
	}
	return rowview.Decode(c, v, td), nil
}

// array walks an array into an ARRAY or VEC column. A fixed axis keeps
// at most its length of elements; a wrong length is reported over any
// element's failure, as the decode of the built value checks it first.
func (d *Decoder) array(c *rows.Col, dec *jsontext.Decoder, jd, td int) (*values.Error, error) {
	if e := formats.JSONTooDeep(dec, jd); e != nil {
		return nil, e
	}
	if _, err := dec.ReadToken(); err != nil {
		return nil, formats.JSONError(err, dec)
	}
	fixed := c.Kind == types.Array
	if fixed {
		c.FSL.Append(true)
	} else {
		c.List.Append(true)
	}
	var terr *values.Error
	j := 0
	for kind := dec.PeekKind(); kind != ']'; kind = dec.PeekKind() {
		j++
		if terr != nil || (fixed && j > c.N) {
			if _, err := formats.JSONValue(dec, jd+1); err != nil {
				return nil, err
			}
			continue
		}
		if kind == 'n' {
			if e := formats.JSONTooDeep(dec, jd+1); e != nil {
				return nil, e
			}
			if _, err := dec.ReadToken(); err != nil {
				return nil, formats.JSONError(err, dec)
			}
			terr = values.Errorf(values.CodeNullValue, values.IndexPath("", j-1), "null where a value is required (collection elements are never null)")
			continue
		}
		e, err := d.value(c.Elem, dec, kind, jd+1, td+1)
		if err != nil {
			return nil, err
		}
		if e != nil {
			e.Path = values.IndexPath("", j-1) + e.Path
			terr = e
		}
	}
	if _, err := dec.ReadToken(); err != nil {
		return nil, formats.JSONError(err, dec)
	}
	if fixed && j != c.N {
		return values.Errorf(values.CodeShape, "", "fixed axis of length "+strconv.Itoa(c.N)+" has "+strconv.Itoa(j)+" elements"), nil
	}
	return terr, nil
}
