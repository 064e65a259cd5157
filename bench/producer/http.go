package main

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"net/http"
	"sync"
	"sync/atomic"
	"time"
)

// httpPublisher posts batch notifies (POST /api/v1/notifications) from
// conc clients at once, each on its own keep-alive connection.
type httpPublisher struct {
	url    string
	conc   int
	client *http.Client
}

func newHTTPPublisher(addr string, conc int) *httpPublisher {
	tr := &http.Transport{MaxIdleConnsPerHost: conc, MaxConnsPerHost: conc, DisableCompression: true}
	return &httpPublisher{url: "http://" + addr + "/api/v1/notifications", conc: conc, client: &http.Client{Transport: tr}}
}

// encodeHTTP encodes notifications first..first+n-1 as batch notify
// bodies of at most size notifications each: the notifications the
// producer's publish frames carry, with their event type.
func encodeHTTP(first, n, size int) [][]byte {
	var out [][]byte
	for i := 0; i < n; i += size {
		b := []byte(`{"notifications":[`)
		for j := i; j < min(i+size, n); j++ {
			if j > i {
				b = append(b, ',')
			}
			k := first + j
			b = fmt.Appendf(b, `{"event_type":"%s","identifier":{"class":"od","step":%d},"payload":%s}`, heraldBase, k%steps, payloadOf(k))
		}
		out = append(out, append(b, "]}"...))
	}
	return out
}

// publish posts the bodies, conc at a time (each client posts its next
// one as soon as its previous answer is in), and returns once all are
// answered, with the ids the answers list. An answer other than a 200
// is an error.
func (p *httpPublisher) publish(ctx context.Context, bodies [][]byte, within time.Duration) (time.Duration, int, error) {
	ctx, cancel := context.WithTimeout(ctx, within)
	defer cancel()
	var (
		next atomic.Int64
		ids  atomic.Int64
		wg   sync.WaitGroup
		mu   sync.Mutex
		errs []error
	)
	start := time.Now()
	for range p.conc {
		wg.Add(1)
		go func() {
			defer wg.Done()
			var buf bytes.Buffer
			for {
				i := int(next.Add(1)) - 1
				if i >= len(bodies) || ctx.Err() != nil {
					return
				}
				n, err := p.post(ctx, bodies[i], &buf)
				if err != nil {
					mu.Lock()
					errs = append(errs, fmt.Errorf("batch %d: %w", i, err))
					mu.Unlock()
					cancel()
					return
				}
				ids.Add(int64(n))
			}
		}()
	}
	wg.Wait()
	return time.Since(start), int(ids.Load()), errors.Join(errs...)
}

// post sends one batch and returns the number of ids of its 200.
func (p *httpPublisher) post(ctx context.Context, body []byte, buf *bytes.Buffer) (int, error) {
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, p.url, bytes.NewReader(body))
	if err != nil {
		return 0, err
	}
	req.Header.Set("Content-Type", "application/json")
	resp, err := p.client.Do(req)
	if err != nil {
		return 0, err
	}
	defer resp.Body.Close()
	buf.Reset()
	if _, err := io.Copy(buf, resp.Body); err != nil {
		return 0, err
	}
	if resp.StatusCode != http.StatusOK {
		return 0, fmt.Errorf("status %d: %.300s", resp.StatusCode, buf.Bytes())
	}
	return bytes.Count(buf.Bytes(), idMarker), nil
}
