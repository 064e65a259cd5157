package notification

import (
	"encoding/json"

	"github.com/herald-gateway/herald/query"
)

// Where is a compiled WHERE predicate (package query).
type Where = query.Where

// WhereError is a predicate that does not compile (package query).
type WhereError = query.WhereError

// CompileWhere compiles a WHERE predicate against the schema (see
// query.Compile): names are the routed identifier fields (bare or as
// identifier.<name>) and the typed payload's fields (payload.<name>),
// literals are canonicalised by the field's handler.
func (s *Schema) CompileWhere(src string) (*Where, error) {
	return query.Compile(src, s.querySchema())
}

// querySchema describes the schema to the query language, once.
func (s *Schema) querySchema() *query.Schema {
	s.qOnce.Do(func() {
		q := &query.Schema{EventType: s.Name, Generic: s.Generic, NumberText: CoerceNumberText}
		if s.Payload != nil {
			q.Payload = s.Payload.Schema()
		}
		for _, f := range s.Fields {
			qf := query.Field{Name: f.Name, Pos: f.Pos, Spatial: f.Spatial()}
			if f.Handler != nil {
				h := f.Handler
				qf.Type, qf.Canonical = h.Type(), h.Canonical
				switch h.(type) {
				case *IntHandler:
					qf.Kind = query.Int
				case *FloatHandler:
					qf.Kind = query.Float
				}
				if c, ok := h.(Constrainer); ok {
					qf.Constraint = constraintValues(c)
				}
			}
			q.Fields = append(q.Fields, qf)
		}
		s.qSchema = q
	})
	return s.qSchema
}

// constraintValues compiles a constraint with c and returns the values it
// compares with, by kind.
func constraintValues(c Constrainer) func(op string, operand json.RawMessage) ([]int64, []float64, []string, error) {
	return func(op string, operand json.RawMessage) ([]int64, []float64, []string, error) {
		cons, err := c.Constraint(op, operand)
		if err != nil {
			return nil, nil, nil, err
		}
		switch k := cons.(type) {
		case *orderedConstraint[int64]:
			return append([]int64{}, k.vals...), nil, nil, nil
		case *orderedConstraint[float64]:
			return nil, append([]float64{}, k.vals...), nil, nil
		case *enumConstraint:
			return nil, nil, append([]string{}, k.vals...), nil
		}
		return nil, nil, nil, nil
	}
}

// Token implements query.Record: the decoded subject token at pos.
func (n *Notification) Token(pos int) (string, bool) {
	if pos >= len(n.Tokens) {
		return "", false
	}
	return n.Tokens[pos], true
}

// IdentifierValue implements query.Record: an identifier value by name.
func (n *Notification) IdentifierValue(name string) (string, bool) {
	v, ok := n.Identifier[name]
	return v, ok
}

// StoredPayload implements query.Record: the payload as stored and its
// content type.
func (n *Notification) StoredPayload() ([]byte, string) { return n.Payload, n.ContentType }
