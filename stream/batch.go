package stream

import (
	"encoding/json"
	"fmt"
	"strconv"

	"github.com/herald-gateway/herald/engine"
	"github.com/herald-gateway/herald/notification"
)

// Batch is a stream's request for its records in containers: one frame
// per burst (what the stream has to send at once), holding up to
// MaxRecords records in the batch container of its format.
type Batch struct {
	// MaxRecords bounds the records of one container frame.
	MaxRecords int
	// MaxFrameBytes bounds one container frame's payload, in bytes; 0:
	// the transport's own bound.
	MaxFrameBytes int
}

// Bounds of the batch option.
const (
	// DefaultBatchRecords is max_records when the batch option leaves it
	// out.
	DefaultBatchRecords = 100
	// MaxBatchRecords is the largest max_records.
	MaxBatchRecords = 10000
	// MinBatchFrameBytes is the smallest max_frame_bytes.
	MinBatchFrameBytes = 1024
)

// parseBatch reads the batch option of a request: an object with
// max_records and max_frame_bytes, both optional positive integers.
// Errors are *notification.ValidationErrors naming the member and the
// rule.
func parseBatch(raw json.RawMessage, sc *notification.Schema) (*Batch, error) {
	if raw == nil {
		return nil, nil
	}
	bad := func(format string, args ...any) error {
		m := fmt.Sprintf(format, args...)
		return &notification.ValidationError{Field: "batch", Message: m, Detail: m}
	}
	if sc.Payload == nil {
		return nil, bad("batch is not available: event type '%s' has an opaque JSON payload, and containers hold typed records (the event type needs a payload codec)", sc.Name)
	}
	return parseBatchMembers(raw)
}

// parseBatchMembers reads the members of a batch option object.
func parseBatchMembers(raw json.RawMessage) (*Batch, error) {
	bad := func(format string, args ...any) error {
		m := fmt.Sprintf(format, args...)
		return &notification.ValidationError{Field: "batch", Message: m, Detail: m}
	}
	var members map[string]json.RawMessage
	if err := json.Unmarshal(raw, &members); err != nil {
		return nil, bad("batch must be an object with max_records and max_frame_bytes: %v", err)
	}
	b := &Batch{MaxRecords: DefaultBatchRecords}
	for k, v := range members {
		n, err := strconv.ParseInt(string(v), 10, 64)
		switch k {
		case "max_records":
			if err != nil || n < 1 || n > MaxBatchRecords {
				return nil, bad("batch.max_records must be an integer from 1 to %d, got %s", MaxBatchRecords, v)
			}
			b.MaxRecords = int(n)
		case "max_frame_bytes":
			if err != nil || n < MinBatchFrameBytes || n > 1<<30 {
				return nil, bad("batch.max_frame_bytes must be an integer from %d to %d, got %s", MinBatchFrameBytes, 1<<30, v)
			}
			b.MaxFrameBytes = int(n)
		default:
			return nil, bad("batch has an unknown member '%s' (allowed: max_records, max_frame_bytes)", k)
		}
	}
	return b, nil
}

// Batcher collects the records of a burst of one stream and cuts them
// into container frames. A transport sink adds each record it is handed
// (Add) and takes the frames when it flushes (Take). Not safe for
// concurrent use: one stream's goroutine uses it.
type Batcher struct {
	view  *notification.View
	opts  Batch
	recs  []*engine.Record
	rows  [][]byte
	phase Phase
}

// NewBatcher returns the batcher of a stream shown in view v (the row
// view or a codec's) with batch options b; maxBytes is the transport's
// bound on a frame's payload, used when b leaves max_frame_bytes out or
// asks for more.
func NewBatcher(v *notification.View, b Batch, maxBytes int) *Batcher {
	if b.MaxFrameBytes == 0 || (maxBytes > 0 && b.MaxFrameBytes > maxBytes) {
		b.MaxFrameBytes = maxBytes
	}
	return &Batcher{view: v, opts: b}
}

// View returns the view the batcher's containers are in.
func (b *Batcher) View() *notification.View { return b.view }

// Pending reports how many records wait for Take, and their phase.
func (b *Batcher) Pending() (int, Phase) { return len(b.recs), b.phase }

// Add adds one record of phase ph. A record of another phase than those
// waiting must not be added: Take them first (Pending says).
func (b *Batcher) Add(rec *engine.Record, ph Phase) (full bool) {
	b.recs = append(b.recs, rec)
	b.phase = ph
	return len(b.recs) >= b.opts.MaxRecords
}

// Piece is one frame of a burst: a container holding Records (Container
// is the JSON value the frame carries), or, when Container is nil, one
// record the transport sends as it sends any (a record of a past schema,
// one the view cannot show, or one too large for a container frame).
type Piece struct {
	Records   []*engine.Record
	Container []byte
}

// Take cuts the waiting records into frames, in order, and empties the
// batcher.
func (b *Batcher) Take() []Piece {
	var out []Piece
	recs := b.recs
	for len(recs) > 0 {
		if !b.view.Batchable(recs[0].ContentType) {
			out = append(out, Piece{Records: recs[:1]})
			recs = recs[1:]
			continue
		}
		b.rows = b.rows[:0]
		for _, r := range recs {
			if !b.view.Batchable(r.ContentType) {
				break
			}
			b.rows = append(b.rows, r.Payload)
		}
		c, n, err := b.view.AppendContainer(nil, b.rows, b.opts.MaxFrameBytes)
		if err != nil || n == 0 {
			out = append(out, Piece{Records: recs[:1]})
			recs = recs[1:]
			continue
		}
		out = append(out, Piece{Records: recs[:n:n], Container: c})
		recs = recs[n:]
	}
	b.recs = nil // the pieces hold the records
	return out
}

// String returns the phase's name in frames: "history" or "live".
func (ph Phase) String() string {
	if ph == History {
		return "history"
	}
	return "live"
}
