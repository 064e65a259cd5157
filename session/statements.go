package session

import (
	"encoding/json"
	"errors"
	"fmt"
	"strings"

	"github.com/go-json-experiment/json/jsontext"

	"github.com/herald-gateway/herald/notification"
	"github.com/herald-gateway/herald/query"
)

// execute runs one statement.
func (s *Session) execute(req *request) {
	if err := req.fields("statement"); err != nil {
		s.send(s.replyError(req.id, "INVALID_REQUEST", err.Error()))
		return
	}
	src, ok, err := req.str("statement")
	if err != nil || !ok {
		s.send(s.replyError(req.id, "INVALID_REQUEST", `execute needs a "statement" (a string)`))
		return
	}
	st, err := req.statement()
	if err != nil {
		s.statementError(req.id, err, "INVALID_REQUEST")
		return
	}
	switch st.Kind {
	case query.DeleteSubscription:
		s.unsubscribe(&request{id: req.id, op: "unsubscribe", members: map[string]jsontext.Value{"name": jsontext.Value(mustJSON(st.Name))}})
	case query.DescribeEventType:
		sc, ok := s.deps.Settings().Registry.Schema(st.EventType)
		if !ok {
			s.send(s.replyError(req.id, "UNKNOWN_EVENT_TYPE", "Event type '"+st.EventType+"' not found"))
			return
		}
		out := map[string]any{"event_type": st.EventType, "schema": sc.Public()}
		if st.WherePos >= 0 {
			w, err := sc.CompileWhere(st.Where)
			if err != nil {
				s.statementError(req.id, st.WhereError(src, err), "INVALID_WATCH_REQUEST")
				return
			}
			out["where"] = w.String()
		}
		f, _ := s.replyFits(req.id, out, "the DESCRIBE EVENT TYPE reply", "GET /api/v1/schema/"+st.EventType+" serves the schema")
		s.send(f)
	case query.CreateSubscription:
		members := map[string]jsontext.Value{"event_type": jsontext.Value(mustJSON(st.EventType))}
		o := subscribeOptions{name: st.Name, dropping: st.Dropping, sampleRate: st.SampleRate, hasRate: st.HasRate}
		if sc, err := s.deps.Settings().Registry.Lookup(st.EventType); err == nil {
			// An unknown event type is left to subscribe's answer.
			ident, unpinned, err := statementIdentifier(src, st, sc)
			if err != nil {
				s.statementError(req.id, err, "INVALID_WATCH_REQUEST")
				return
			}
			// Refused after the access check, as subscribe's missing field.
			o.unpinned = unpinned
			if len(ident) > 0 {
				members["identifier"] = jsontext.Value(mustJSON(ident))
			}
		}
		if st.WherePos >= 0 {
			members["where"] = jsontext.Value(mustJSON(st.Where))
		}
		o.body = requestBody(members, "event_type", "identifier", "where")
		s.open(req.id, o, false, CodeInvalidWatch)
	}
}

// statementIdentifier is the identifier of a CREATE SUBSCRIPTION: what
// the top-level AND conditions of its WHERE pin (notification.Where.Pins).
// The whole WHERE stays the subscription's predicate, so the identifier
// only narrows the topic and gives the required fields their values; a
// required field WHERE does not pin is an error at the predicate (or
// where a WHERE would go), returned as unpinned; err is a predicate that
// does not compile.
func statementIdentifier(src string, st *query.Statement, sc *notification.Schema) (ident map[string]json.RawMessage, unpinned, err error) {
	at := st.EndPos
	if st.WherePos >= 0 {
		w, err := sc.CompileWhere(st.Where)
		if err != nil {
			return nil, nil, st.WhereError(src, err)
		}
		if !sc.Generic {
			ident = w.Pins()
		}
		at = st.WherePos + len(st.Where) - len(strings.TrimLeft(st.Where, " \t\r\n"))
	}
	for _, f := range sc.Fields {
		if !f.Required {
			continue
		}
		if _, ok := ident[f.Name]; ok {
			continue
		}
		line, col := query.Position(src, at)
		msg := fmt.Sprintf("required field '%s' must be pinned in WHERE with =, as in %s = …: CREATE SUBSCRIPTION takes its identifier from the top-level AND conditions of WHERE", f.Name, f.Name)
		if f.Spatial() {
			msg = fmt.Sprintf("required field '%s' is a geometry, which WHERE cannot select; use subscribe with an identifier instead", f.Name)
		}
		return ident, &query.StatementError{Line: line, Column: col, Msg: msg}, nil
	}
	return ident, nil, nil
}

// statementError answers a statement error with its position.
func (s *Session) statementError(id jsontext.Value, err error, code string) {
	var se *query.StatementError
	if errors.As(err, &se) {
		s.send(s.replyErrorWith(id, code, "execute: "+se.Error(), map[string]any{"position": map[string]int{"line": se.Line, "column": se.Column}}))
		return
	}
	s.send(s.replyError(id, code, "execute: "+err.Error()))
}
