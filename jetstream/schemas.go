package jetstream

import (
	"context"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"

	"github.com/nats-io/nats.go/jetstream"

	"github.com/herald-gateway/herald/engine"
)

// SchemaBucket is the key-value bucket, beside the streams, that holds
// the registry of past payload schemas (engine.SchemaStore): one key per
// event type and schema fingerprint, whose value is the JSON of an
// engine.SchemaVersion.
const SchemaBucket = "herald_payload_schemas"

// Engine conformance.
var _ engine.SchemaStore = (*Engine)(nil)

// schemaKey is the bucket key of a version: the event type in hex (event
// type names may hold characters keys cannot), a dot, the fingerprint.
func schemaKey(v engine.SchemaVersion) string {
	return hex.EncodeToString([]byte(v.EventType)) + "." + v.Fingerprint
}

// schemaBucket opens the registry's bucket, creating it when create is
// set; (nil, nil) when it does not exist and create is not set.
func (e *Engine) schemaBucket(ctx context.Context, js jetstream.JetStream, create bool) (jetstream.KeyValue, error) {
	kv, err := js.KeyValue(ctx, SchemaBucket)
	if err == nil || !errors.Is(err, jetstream.ErrBucketNotFound) {
		return kv, err
	}
	if !create {
		return nil, nil
	}
	storage := jetstream.FileStorage
	if e.opts.Defaults.Storage == StorageMemory {
		storage = jetstream.MemoryStorage
	}
	kv, err = js.CreateKeyValue(ctx, jetstream.KeyValueConfig{Bucket: SchemaBucket, History: 1, Storage: storage,
		Description: "herald: every payload schema that wrote records, by event type and fingerprint"})
	if errors.Is(err, jetstream.ErrBucketExists) {
		return js.KeyValue(ctx, SchemaBucket)
	}
	return kv, err
}

// PutSchemaVersion records v in the registry's bucket (see
// engine.SchemaStore): created with FirstSeq = ActiveSeq when new, else
// updated in place, compare-and-set on the key's revision so that two
// instances putting at once both keep the first FirstSeq.
func (e *Engine) PutSchemaVersion(ctx context.Context, v engine.SchemaVersion) (engine.SchemaVersion, error) {
	if err := e.check(ctx, "put schema version"); err != nil {
		return engine.SchemaVersion{}, err
	}
	rctx, cancel := e.requestContext(ctx)
	defer cancel()
	kv, err := e.schemaBucket(rctx, e.cur().js, true)
	if err != nil {
		return engine.SchemaVersion{}, e.fail(ctx, "open bucket "+SchemaBucket+" on "+e.where, err)
	}
	key := schemaKey(v)
	for attempt := 0; ; attempt++ {
		var (
			old *engine.SchemaVersion
			rev uint64
		)
		entry, err := kv.Get(rctx, key)
		switch {
		case err == nil:
			var o engine.SchemaVersion
			if err := json.Unmarshal(entry.Value(), &o); err != nil {
				return engine.SchemaVersion{}, fmt.Errorf("jetstream: bucket %s key %s: %w", SchemaBucket, key, err)
			}
			old, rev = &o, entry.Revision()
		case !errors.Is(err, jetstream.ErrKeyNotFound):
			return engine.SchemaVersion{}, e.fail(ctx, "read "+SchemaBucket+" on "+e.where, err)
		}
		kept := engine.MergeSchemaVersion(old, v)
		val, err := json.Marshal(kept)
		if err != nil {
			return engine.SchemaVersion{}, fmt.Errorf("jetstream: put schema version: %w", err)
		}
		if old == nil {
			_, err = kv.Create(rctx, key, val)
		} else {
			_, err = kv.Update(rctx, key, val, rev)
		}
		if err == nil {
			return kept, nil
		}
		if attempt < 3 && (errors.Is(err, jetstream.ErrKeyExists) || isWrongSequence(err)) {
			continue // another instance wrote the key first: merge again
		}
		return engine.SchemaVersion{}, e.fail(ctx, "write "+SchemaBucket+" on "+e.where, err)
	}
}

// isWrongSequence reports a compare-and-set update that lost the race.
func isWrongSequence(err error) bool {
	var ae *jetstream.APIError
	return errors.As(err, &ae) && ae.ErrorCode == jetstream.JSErrCodeStreamWrongLastSequence
}

// SchemaVersions returns every version in the registry's bucket (see
// engine.SchemaStore); none when the bucket does not exist yet.
func (e *Engine) SchemaVersions(ctx context.Context) ([]engine.SchemaVersion, error) {
	if err := e.check(ctx, "schema versions"); err != nil {
		return nil, err
	}
	rctx, cancel := e.requestContext(ctx)
	defer cancel()
	kv, err := e.schemaBucket(rctx, e.cur().js, false)
	if err != nil {
		return nil, e.fail(ctx, "open bucket "+SchemaBucket+" on "+e.where, err)
	}
	out := []engine.SchemaVersion{}
	if kv == nil {
		return out, nil
	}
	keys, err := kv.ListKeys(rctx)
	if err != nil {
		return nil, e.fail(ctx, "list "+SchemaBucket+" on "+e.where, err)
	}
	for key := range keys.Keys() {
		entry, err := kv.Get(rctx, key)
		if errors.Is(err, jetstream.ErrKeyNotFound) {
			continue
		}
		if err != nil {
			_ = keys.Stop()
			return nil, e.fail(ctx, "read "+SchemaBucket+" on "+e.where, err)
		}
		var v engine.SchemaVersion
		if err := json.Unmarshal(entry.Value(), &v); err != nil {
			_ = keys.Stop()
			return nil, fmt.Errorf("jetstream: bucket %s key %s: %w", SchemaBucket, key, err)
		}
		out = append(out, v)
	}
	engine.SortSchemaVersions(out)
	return out, nil
}
