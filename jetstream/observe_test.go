package jetstream

import (
	"sync"
	"time"

	"github.com/herald-gateway/herald/engine"
)

// recorder is an Observer that counts what it is told.
type recorder struct {
	mu         sync.Mutex
	ops        map[string]int // "publish ok", "get_batch error", ...
	reconnects int
	gaps       []string
}

func newRecorder() *recorder { return &recorder{ops: map[string]int{}} }

func (r *recorder) BackendOp(op engine.Op, _ time.Duration, err error) {
	r.mu.Lock()
	defer r.mu.Unlock()
	outcome := "ok"
	if err != nil {
		outcome = "error"
	}
	r.ops[op.String()+" "+outcome]++
}

func (r *recorder) Reconnected() {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.reconnects++
}

func (r *recorder) Gap(stream string) {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.gaps = append(r.gaps, stream)
}

// counts returns the operations, reconnections and gaps seen so far.
func (r *recorder) counts() (map[string]int, int, []string) {
	r.mu.Lock()
	defer r.mu.Unlock()
	ops := make(map[string]int, len(r.ops))
	for k, v := range r.ops {
		ops[k] = v
	}
	return ops, r.reconnects, append([]string(nil), r.gaps...)
}
