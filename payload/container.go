package payload

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"time"

	"github.com/apache/arrow-go/v18/arrow"

	"github.com/herald-gateway/herald/codec"
	"github.com/herald-gateway/herald/codec/jsonstr"
	"github.com/herald-gateway/herald/codec/store"
	"github.com/herald-gateway/herald/codec/types"
	"github.com/herald-gateway/herald/codec/values"
)

// Batchable reports whether a stored record of content type contentType
// can go into a container of v: it holds a row written under the
// event type's current schema (a row of a past schema is projected, and
// travels on its own).
func (v *View) Batchable(contentType string) bool {
	fp, ok := store.Fingerprint(contentType)
	return ok && fp == v.payload.fingerprint.ID64
}

// Format returns the wire format of v's output: JSON for the row view.
func (v *View) Format() types.Format {
	if v.codec == nil {
		return types.JSON
	}
	return v.codec.Format
}

// AppendContainer appends, as the JSON value a frame carries (embedded as
// AppendPayload embeds one payload: JSON as it is, text as a JSON string,
// binary as base64), the batch container of v's format holding a prefix
// of stored rows: a JSON array of row views for the row view, else the
// codec's container (a JSON array, a YAML sequence, a CBOR or AVRO
// array, a protobuf repeated field, SYSLOG frames). Every row must be
// Batchable. It returns how many rows the container holds, at least one
// unless err is set: it stops before a row that cannot be decoded, where
// the codec's container must (SYSLOG's shared header), and before the
// row that would make the embedded container longer than maxBytes (0:
// unbounded). A first row that cannot be shown, or that alone exceeds
// maxBytes, is an error: send it on its own.
func (v *View) AppendContainer(dst []byte, rows [][]byte, maxBytes int) ([]byte, int, error) {
	if len(rows) == 0 {
		return dst, 0, errors.New("no rows")
	}
	st := v.state()
	defer v.pool.Put(st)
	n := 0
	var derr error
	for _, r := range rows {
		if derr = st.dec.Decode(r, st.b); derr != nil {
			break
		}
		n++
	}
	rec, err := st.b.NewRecordBatch()
	if err != nil {
		return dst, 0, err
	}
	defer rec.Release()
	if n == 0 {
		return dst, 0, derr
	}
	for {
		out, held, err := v.container(rec, n)
		if err != nil {
			return dst, 0, err
		}
		if maxBytes <= 0 || len(out) <= maxBytes {
			return append(dst, out...), held, nil
		}
		if held <= 1 {
			return dst, 0, fmt.Errorf("one record's container is %d bytes, more than max_frame_bytes %d", len(out), maxBytes)
		}
		// Too long: fewer rows, in proportion (at least one fewer).
		n = min(held-1, max(1, held*maxBytes/len(out)))
	}
}

// container encodes the first n rows of rec in v's container, embedded,
// and returns how many it holds.
func (v *View) container(rec arrow.RecordBatch, n int) ([]byte, int, error) {
	if v.codec == nil {
		out := []byte{'['}
		for i := 0; i < n; i++ {
			if i > 0 {
				out = append(out, ',')
			}
			var err error
			if out, err = v.rowEnc.AppendRow(out, rec, i); err != nil {
				return nil, 0, err
			}
		}
		return append(out, ']'), n, nil
	}
	idx := make([]int, n)
	for i := range idx {
		idx[i] = i
	}
	raw, held, err := v.encodeBatch(rec, idx)
	if err != nil {
		return nil, 0, err
	}
	if held < 1 {
		return nil, 0, fmt.Errorf("codec %s wrote an empty container", types.Quote(v.codec.Name))
	}
	var out []byte
	switch v.embed {
	case embedText:
		out = jsonstr.Append(nil, string(raw))
	case embedBase64:
		out = append(out, '"')
		out = values.AppendBase64(out, raw)
		out = append(out, '"')
	default:
		if !json.Valid(raw) {
			return nil, 0, fmt.Errorf("codec %s wrote a container that is not JSON", types.Quote(v.codec.Name))
		}
		out = raw
	}
	return out, held, nil
}

// encodeBatch runs the view codec's container encoder, waiting for busy
// extension workers up to renderRetry.
func (v *View) encodeBatch(rec arrow.RecordBatch, idx []int) ([]byte, int, error) {
	ce, isJaq := v.codec.Encoder.(codec.ContextEncoder)
	if !isJaq {
		return v.codec.Batch.AppendBatch(nil, rec, idx)
	}
	ctx, cancel := context.WithTimeout(context.Background(), renderRetry)
	defer cancel()
	wait := time.Millisecond
	for {
		out, n, err := ce.AppendBatchContext(ctx, nil, rec, idx)
		if !errors.Is(err, codec.ErrBusy) {
			return out, n, err
		}
		t := time.NewTimer(wait)
		select {
		case <-ctx.Done():
			t.Stop()
			return nil, 0, err
		case <-t.C:
		}
		wait = min(2*wait, 50*time.Millisecond)
	}
}

// BatchErr says why v has no batch container, nil when it has one: a
// protobuf codec needs a BATCH MESSAGE with one repeated field of its
// MESSAGE, or an ON EMITTING BATCH program.
func (v *View) BatchErr() error {
	if v.codec == nil || v.codec.Plan == nil || v.codec.Plan.Codec == nil {
		return nil
	}
	c := v.codec.Plan.Codec
	if c.Proto != nil && c.Proto.BatchMessage == "" && (c.Jaq == nil || !c.Jaq.Program(types.EmittingBatch).Set) {
		return fmt.Errorf("codec %s writes no batch container: a protobuf codec needs BATCH MESSAGE (a message with one repeated field of its MESSAGE) or ON EMITTING BATCH", types.Quote(v.codec.Name))
	}
	return nil
}
