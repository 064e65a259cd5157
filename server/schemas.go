package server

import (
	"context"
	"fmt"
	"time"

	"github.com/herald-gateway/herald/codec/catalog"
	"github.com/herald-gateway/herald/codec/ddl"
	"github.com/herald-gateway/herald/codec/types"
	"github.com/herald-gateway/herald/engine"
	"github.com/herald-gateway/herald/payload"
)

// loadHistory fills the History of rt with every payload schema version
// the engine's registry of past schemas keeps (none when the engine keeps
// none), so that records written under them, by this process before a
// restart or by another instance, are decoded with them, and notes each
// event type's current version. A version whose text does not compile,
// or compiles to another fingerprint, is skipped and logged: its records
// keep the null payload of an unknown schema.
func (s *Server) loadHistory(ctx context.Context, rt *Runtime) {
	s.current = map[string]string{}
	ss, ok := s.eng.(engine.SchemaStore)
	if !ok {
		return
	}
	vs, err := ss.SchemaVersions(ctx)
	if err != nil {
		s.log.Error("the registry of past payload schemas could not be read: records written under earlier schemas are read under the current ones", "error", err)
		return
	}
	for _, v := range vs {
		// In the order they became current: the last one of an event
		// type is its current one.
		s.current[v.EventType] = v.Fingerprint
		sc, err := compileSchemaText(v.Schema)
		if err == nil && payload.Fingerprint(sc).ID64 != v.Fingerprint {
			err = fmt.Errorf("its text has fingerprint %s", payload.Fingerprint(sc).ID64)
		}
		if err != nil {
			s.log.Warn("a past payload schema is skipped", "event_type", v.EventType, "fingerprint", v.Fingerprint, "error", err)
			continue
		}
		rt.History.Add(v.EventType, sc)
	}
}

// compileSchemaText compiles the CREATE SCHEMA text of a past schema.
func compileSchemaText(text string) (*types.Schema, error) {
	cat := catalog.New()
	if _, err := cat.Exec(text); err != nil {
		return nil, err
	}
	for _, k := range cat.Keys() {
		if k.Kind == ddl.KindSchema {
			sc, _ := cat.Schema(k.Name)
			return sc, nil
		}
	}
	return nil, fmt.Errorf("the text defines no schema")
}

// activateSchemas records, for every typed event type of next whose
// payload schema is not the one last made current, that it now is: it is
// added to the History and, on an engine that keeps the registry of past
// schemas, put there with the stream's next sequence (where the previous
// version's records end). Call it before next is installed, so that no
// record is written under a schema the registry does not have yet. A
// backend failure is logged: the History still has the schema.
func (s *Server) activateSchemas(ctx context.Context, next *Runtime) {
	ss, _ := s.eng.(engine.SchemaStore)
	for _, name := range next.Registry.Names() {
		sc, _ := next.Registry.Schema(name)
		p := sc.Payload
		if p == nil {
			continue
		}
		fp := next.History.Add(name, p.Schema())
		if s.current[name] == fp {
			continue
		}
		s.current[name] = fp
		if ss == nil {
			continue
		}
		last, err := s.eng.LastSeq(ctx, sc.Base)
		if err == nil {
			_, err = ss.PutSchemaVersion(ctx, engine.SchemaVersion{EventType: name, Fingerprint: fp, Codec: p.Codec(),
				Schema: types.CreateSchema(p.Schema()), ActiveSeq: last + 1, ActivatedAt: time.Now().UTC()})
		}
		if err != nil {
			s.log.Error("a payload schema could not be put in the registry of past schemas: other instances and restarts will not know it", "event_type", name, "fingerprint", fp, "error", err)
		}
	}
}
