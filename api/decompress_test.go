package api_test

import (
	"bytes"
	"compress/flate"
	"compress/gzip"
	"compress/zlib"
	"encoding/json"
	"io"
	"net/http"
	"net/http/httptest"
	"runtime"
	"strconv"
	"strings"
	"testing"

	"github.com/andybalholm/brotli"
	"github.com/klauspost/compress/zstd"

	"github.com/herald-gateway/herald/api"
	"github.com/herald-gateway/herald/configs"
)

// encoding is one way of sending a body: the Content-Encoding header and
// the encoder producing it.
type encoding struct {
	name   string // also the identifier value of its notification
	header string
	encode func(t testing.TB, p []byte) []byte
}

func gzipped(t testing.TB, p []byte) []byte {
	var b bytes.Buffer
	w := gzip.NewWriter(&b)
	mustWrite(t, w, p)
	return b.Bytes()
}

func zlibbed(t testing.TB, p []byte) []byte {
	var b bytes.Buffer
	w := zlib.NewWriter(&b)
	mustWrite(t, w, p)
	return b.Bytes()
}

func deflated(t testing.TB, p []byte) []byte {
	var b bytes.Buffer
	w, err := flate.NewWriter(&b, flate.DefaultCompression)
	if err != nil {
		t.Fatal(err)
	}
	mustWrite(t, w, p)
	return b.Bytes()
}

// brotlied encodes with window 2^lgwin (0: the library's default).
func brotlied(lgwin int) func(t testing.TB, p []byte) []byte {
	return func(t testing.TB, p []byte) []byte {
		var b bytes.Buffer
		w := brotli.NewWriterOptions(&b, brotli.WriterOptions{Quality: 5, LGWin: lgwin})
		mustWrite(t, w, p)
		return b.Bytes()
	}
}

// zstded encodes as a stream (no content size in the header) with the
// given window (0: the library's default).
func zstded(window int) func(t testing.TB, p []byte) []byte {
	return func(t testing.TB, p []byte) []byte {
		var b bytes.Buffer
		opts := []zstd.EOption{zstd.WithEncoderConcurrency(1)}
		if window > 0 {
			opts = append(opts, zstd.WithWindowSize(window))
		}
		w, err := zstd.NewWriter(&b, opts...)
		if err != nil {
			t.Fatal(err)
		}
		mustWrite(t, w, p)
		return b.Bytes()
	}
}

func mustWrite(t testing.TB, w io.WriteCloser, p []byte) {
	t.Helper()
	if _, err := w.Write(p); err != nil {
		t.Fatal(err)
	}
	if err := w.Close(); err != nil {
		t.Fatal(err)
	}
}

// zstdFrame returns a zstd frame holding data in one raw block, with the
// window descriptor wd (RFC 8878 §3.1.1.1.2: exponent<<3 | mantissa, the
// window 2^(10+exponent) plus mantissa eighths) and no content size.
func zstdFrame(wd byte, data []byte) []byte {
	b := []byte{0x28, 0xb5, 0x2f, 0xfd, 0x00, wd}
	h := len(data)<<3 | 1 // last block, raw
	b = append(b, byte(h), byte(h>>8), byte(h>>16))
	return append(b, data...)
}

func plain(_ testing.TB, p []byte) []byte { return p }

// then applies first, then second (the order a Content-Encoding list
// names them in).
func then(first, second func(testing.TB, []byte) []byte) func(testing.TB, []byte) []byte {
	return func(t testing.TB, p []byte) []byte { return second(t, first(t, p)) }
}

// encodings are the accepted ways of sending a body.
var encodings = []encoding{
	{"identity", "identity", plain},
	{"gzip", "gzip", gzipped},
	{"x-gzip", "x-gzip", gzipped},
	{"gzip-upper-spaced", " GZip ", gzipped},
	{"deflate-zlib", "deflate", zlibbed},
	{"deflate-raw", "deflate", deflated},
	{"br", "br", brotlied(0)},
	{"zstd", "zstd", zstded(0)},
	{"gzip-br", "gzip, br", then(gzipped, brotlied(0))},
	{"zstd-deflate-two-fields", "zstd\x00deflate", then(zstded(0), zlibbed)},
	{"identity-gzip-empty-elements", "identity, ,gzip,", gzipped},
}

// headerOf returns the request headers of e: "\x00" separates two
// Content-Encoding fields.
func headerOf(e encoding) http.Header {
	return http.Header{"Content-Encoding": strings.Split(e.header, "\x00")}
}

// events returns the name and data of every event of an event stream.
func events(t *testing.T, stream string) (names []string, data []map[string]any) {
	t.Helper()
	for _, block := range strings.Split(stream, "\n\n") {
		var name, payload string
		for _, line := range strings.Split(block, "\n") {
			if v, ok := strings.CutPrefix(line, "event: "); ok {
				name = v
			} else if v, ok := strings.CutPrefix(line, "data: "); ok {
				payload = v
			}
		}
		if name == "" {
			continue
		}
		var d map[string]any
		if err := json.Unmarshal([]byte(payload), &d); err != nil {
			t.Fatalf("event %s: %v: %s", name, err, payload)
		}
		names = append(names, name)
		data = append(data, d)
	}
	return names, data
}

// TestDecompressNotifyReplayWatch: a notification sent under every
// accepted encoding (one coding, aliases, case and spaces, raw and zlib
// deflate, stacked lists in one or two fields) is stored exactly as sent
// uncompressed: a replay, itself sent under the same encoding, returns
// it with the identifier and payload of the uncompressed body; a watch
// under the encoding opens its stream.
func TestDecompressNotifyReplayWatch(t *testing.T) {
	s := start(t, setup{yaml: matrixConfig("", "")})
	payload := map[string]any{"text": strings.Repeat("forecast step ready; ", 50), "n": []any{1.0, 2.5, "é"}}
	pj, _ := json.Marshal(payload)
	for _, e := range encodings {
		t.Run(e.name, func(t *testing.T) {
			notify := `{"event_type":"public","identifier":{"k":"` + e.name + `"},"payload":` + string(pj) + `}`
			r := s.call(t, http.MethodPost, "/api/v1/notification", string(e.encode(t, []byte(notify))), headerOf(e))
			if r.Status != 200 || r.Body["status"] != "success" {
				t.Fatalf("notify: %d %s", r.Status, r.Raw)
			}

			replay := `{"event_type":"public","identifier":{"k":"` + e.name + `"},"from_id":"0"}`
			resp, closeFn := s.openStream(t, "/api/v1/replay", string(e.encode(t, []byte(replay))), headerOf(e))
			raw, err := io.ReadAll(resp.Body)
			closeFn()
			if err != nil || resp.StatusCode != 200 {
				t.Fatalf("replay: %d %v %s", resp.StatusCode, err, raw)
			}
			names, data := events(t, string(raw))
			var got []any
			for i, n := range names {
				if n == "replay" {
					got = append(got, data[i]["data"])
				}
			}
			want := []any{map[string]any{"identifier": map[string]any{"k": e.name}, "payload": payload}}
			gj, _ := json.Marshal(got)
			wj, _ := json.Marshal(want)
			if string(gj) != string(wj) {
				t.Fatalf("replayed %s\nwant     %s", gj, wj)
			}

			watch := `{"event_type":"public","identifier":{"k":"` + e.name + `"}}`
			w := s.call(t, http.MethodPost, "/api/v1/watch", string(e.encode(t, []byte(watch))), headerOf(e))
			if w.Status != 200 || w.Header.Get("Content-Type") != "text/event-stream" {
				t.Fatalf("watch: %d %q %s", w.Status, w.Header.Get("Content-Type"), w.Raw)
			}
		})
	}
}

// TestDecompressUnsupported: an unknown coding, alone or in a list, and a
// list stacking more than two codings answer 415 with the JSON error body
// and an Accept-Encoding header of the supported codings, before any
// handler runs. A request without a body passes through: there is
// nothing to decode.
func TestDecompressUnsupported(t *testing.T) {
	s := start(t, setup{yaml: matrixConfig("", "")})
	notify := `{"event_type":"public","identifier":{"k":"v"}}`
	const supported = "; supported: gzip, x-gzip, deflate, br, zstd, identity"
	tests := []struct {
		name   string
		header []string
		msg    string
	}{
		{"compress", []string{"compress"}, `unsupported content coding "compress" in Content-Encoding` + supported},
		{"unknown in a list", []string{"gzip, Compress"}, `unsupported content coding "Compress" in Content-Encoding` + supported},
		{"unknown in a second field", []string{"gzip", "lz4"}, `unsupported content coding "lz4" in Content-Encoding` + supported},
		{"long name cut", []string{strings.Repeat("z", 40)}, `unsupported content coding "` + strings.Repeat("z", 32) + `..." in Content-Encoding` + supported},
		{"three codings", []string{"gzip, br, zstd"}, "Content-Encoding lists more than 2 content codings (identity aside); at most 2 are decoded"},
		{"three over two fields", []string{"gzip, gzip", "identity, gzip"}, "Content-Encoding lists more than 2 content codings (identity aside); at most 2 are decoded"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			for _, path := range []string{"/api/v1/notification", "/api/v1/watch"} {
				r := s.call(t, http.MethodPost, path, notify, http.Header{"Content-Encoding": tc.header})
				want := map[string]any{"code": "UNSUPPORTED_MEDIA_TYPE", "error": "unsupported_media_type", "message": tc.msg, "details": tc.msg, "request_id": r.Header.Get("X-Request-ID")}
				if r.Status != http.StatusUnsupportedMediaType || !equalJSON(r.Body, want) || len(r.Header.Get("X-Request-ID")) != 36 {
					t.Fatalf("%s: got %d %s\nwant 415 %v", path, r.Status, r.Raw, want)
				}
				if got := r.Header.Values("Accept-Encoding"); len(got) != 1 || got[0] != "gzip, deflate, br, zstd" {
					t.Fatalf("%s: Accept-Encoding %q", path, got)
				}
			}
		})
	}
	t.Run("no body", func(t *testing.T) {
		if r := s.call(t, http.MethodGet, "/api/v1/schema", "", http.Header{"Content-Encoding": {"compress"}}); r.Status != 200 {
			t.Fatalf("got %d %s", r.Status, r.Raw)
		}
	})
}

// TestDecompressCorrupt: a body that does not decode under its coding is
// the handler's 400, the message naming the coding that failed; in a
// stacked list, the layer that failed.
func TestDecompressCorrupt(t *testing.T) {
	s := start(t, setup{yaml: matrixConfig("", "")})
	notify := []byte(`{"event_type":"public","identifier":{"k":"v"}}`)
	gz := gzipped(t, notify)
	badCRC := bytes.Clone(gz)
	badCRC[len(badCRC)-8] ^= 0xff
	tests := []struct {
		name   string
		header string
		body   []byte
		msg    string
	}{
		{"gzip not gzip", "gzip", notify, "gzip body: gzip: invalid header"},
		{"gzip truncated", "gzip", gz[:len(gz)/2], "gzip body: unexpected EOF"},
		{"gzip bad checksum", "gzip", badCRC, "gzip body: gzip: invalid checksum"},
		{"gzip trailing garbage", "gzip", append(bytes.Clone(gz), "trailing garbage"...), "gzip body: gzip: invalid header"},
		{"gzip trailing bytes", "gzip", append(bytes.Clone(gz), "trailing"...), "gzip body: unexpected EOF"},
		{"deflate zlib truncated", "deflate", zlibbed(t, notify)[:6], "deflate body: unexpected EOF"},
		{"deflate raw garbage", "deflate", []byte{0xff, 0xff, 0xff, 0xff}, "deflate body: flate: corrupt input before offset 1"},
		{"br garbage", "br", notify, "br body: brotli: PADDING_2"},
		{"zstd garbage", "zstd", notify, "zstd body: invalid input: magic number mismatch"},
		{"zstd 9 MiB window", "zstd", zstdFrame(0x69, notify), "zstd body: window size exceeded (windows up to 8388608 bytes are decoded, RFC 9659)"},
		{"gzip inside br", "gzip, br", brotlied(0)(t, notify), "gzip body: gzip: invalid header"},
		{"br outside gzip", "gzip, br", gz, "br body: a window of 2^24 bytes is larger than the 2^22 decoded (the encoders' default; use a lower lgwin)"},
		{"br 16 MiB window", "br", brotlied(24)(t, notify), "br body: a window of 2^24 bytes is larger than the 2^22 decoded (the encoders' default; use a lower lgwin)"},
		{"br 8 MiB window", "br", brotlied(23)(t, notify), "br body: a window of 2^23 bytes is larger than the 2^22 decoded (the encoders' default; use a lower lgwin)"},
	}
	t.Run("zstd 8 MiB window decodes", func(t *testing.T) {
		if r := s.call(t, http.MethodPost, "/api/v1/notification", string(zstdFrame(0x68, notify)), http.Header{"Content-Encoding": {"zstd"}}); r.Status != 200 {
			t.Fatalf("got %d %s", r.Status, r.Raw)
		}
	})
	// An empty body is empty under any coding, sent with Content-Length 0
	// or chunked: the handler's own answer.
	t.Run("empty", func(t *testing.T) {
		for _, chunked := range []bool{false, true} {
			req, err := http.NewRequest(http.MethodPost, s.URL+"/api/v1/notification", http.NoBody)
			if err != nil {
				t.Fatal(err)
			}
			req.Header.Set("Content-Encoding", "gzip, br")
			if chunked {
				req.Body = io.NopCloser(strings.NewReader(""))
				req.TransferEncoding = []string{"chunked"}
			}
			resp, err := http.DefaultClient.Do(req)
			if err != nil {
				t.Fatal(err)
			}
			raw, _ := io.ReadAll(resp.Body)
			resp.Body.Close()
			var got map[string]any
			_ = json.Unmarshal(raw, &got)
			const details = "EOF while parsing a value: the body is empty"
			want := map[string]any{"code": "INVALID_JSON", "error": "Invalid Notification Request", "message": "JSON parsing failed: " + details, "details": details, "request_id": resp.Header.Get("X-Request-ID")}
			if resp.StatusCode != 400 || !equalJSON(got, want) {
				t.Fatalf("chunked %v: got %d %s\nwant 400 %v", chunked, resp.StatusCode, raw, want)
			}
		}
	})
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			for _, ep := range []struct{ path, code, label string }{
				{"/api/v1/notification", "INVALID_NOTIFICATION_REQUEST", "Invalid Notification Request"},
				{"/api/v1/replay", "INVALID_REPLAY_REQUEST", "Invalid Replay Request"},
			} {
				r := s.call(t, http.MethodPost, ep.path, string(tc.body), http.Header{"Content-Encoding": {tc.header}})
				msg := "reading the request body failed: " + tc.msg
				want := map[string]any{"code": ep.code, "error": ep.label, "message": msg, "details": msg, "request_id": r.Header.Get("X-Request-ID")}
				if r.Status != http.StatusBadRequest || !equalJSON(r.Body, want) {
					t.Fatalf("%s: got %d %s\nwant 400 %v", ep.path, r.Status, r.Raw, want)
				}
			}
		})
	}
}

// TestDecompressBomb: 10 MiB of zeros compressed to a few KiB get the
// handler's 413 under every coding, and serving one such request
// allocates a bounded amount that does not grow with the decoded size:
// the decoder's window and the handler's buffer of the body limit
// (64 KiB here), never the 10 MiB. The windows are part of the formats:
// a zstd frame may ask for 8 MiB (RFC 9659; more is refused) and a
// brotli stream for 4 MiB (more is refused), which the decoders
// allocate; the small-window rows show that nothing else grows with the
// bomb, the last two what the largest windows cost.
func TestDecompressBomb(t *testing.T) {
	const limit = 64 << 10
	s := start(t, setup{yaml: matrixConfig("", ""), edit: func(c *configs.Config) { c.Application.MaxBodyBytes = limit }})
	zeros := make([]byte, 10<<20)
	const mib = 1 << 20
	tests := []struct {
		name, header string
		encode       func(testing.TB, []byte) []byte
		maxAlloc     uint64
	}{
		{"gzip", "gzip", gzipped, mib},
		{"deflate zlib", "deflate", zlibbed, mib},
		{"deflate raw", "deflate", deflated, mib},
		{"br small window", "br", brotlied(16), mib},
		{"zstd small window", "zstd", zstded(64 << 10), mib},
		{"gzip, br", "gzip, br", then(gzipped, brotlied(16)), mib},
		{"zstd 8 MiB window", "zstd", zstded(8 << 20), 8*mib + mib},
		{"br 4 MiB window", "br", brotlied(22), 4*mib + mib},
	}
	msg := "request body exceeds the limit of 65536 bytes"
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			bomb := string(tc.encode(t, zeros))
			hdr := http.Header{"Content-Encoding": {tc.header}}
			var least uint64
			for i := range 3 {
				var before, after runtime.MemStats
				runtime.ReadMemStats(&before)
				r := s.call(t, http.MethodPost, "/api/v1/notification", bomb, hdr)
				runtime.ReadMemStats(&after)
				want := map[string]any{"code": "PAYLOAD_TOO_LARGE", "error": "Invalid Notification Request", "message": msg, "details": msg, "request_id": r.Header.Get("X-Request-ID")}
				if r.Status != http.StatusRequestEntityTooLarge || !equalJSON(r.Body, want) {
					t.Fatalf("got %d %s\nwant 413 %v", r.Status, r.Raw, want)
				}
				// The least of three requests: other goroutines of the
				// test binary may allocate during one.
				if d := after.TotalAlloc - before.TotalAlloc; i == 0 || d < least {
					least = d
				}
			}
			t.Logf("%s: %d compressed bytes, %d bytes allocated per request", tc.name, len(bomb), least)
			if least > tc.maxAlloc {
				t.Fatalf("one request allocated %d bytes, more than %d", least, tc.maxAlloc)
			}
		})
	}
}

// FuzzDecompress sends random bytes under each coding (and under a
// stacked list) through the middleware to a handler that reads the body
// as herald's handlers do: the answer is never a 5xx, nothing panics,
// and the handler never receives more than the limit. Its seeds are
// valid, truncated and bomb bodies of each coding.
func FuzzDecompress(f *testing.F) {
	codings := []struct {
		header string
		encode func(testing.TB, []byte) []byte
	}{
		{"gzip", gzipped}, {"deflate", zlibbed}, {"deflate", deflated}, {"br", brotlied(0)}, {"zstd", zstded(0)},
		{"gzip, br", then(gzipped, brotlied(0))}, {"br, zstd", then(brotlied(0), zstded(0))},
		{"x-gzip, deflate", then(gzipped, zlibbed)}, {"identity", plain},
	}
	const limit = 4096
	doc := []byte(`{"event_type":"public","identifier":{"k":"v"},"payload":{"a":[1,2,3]}}`)
	zeros := make([]byte, 64<<10)
	for i, c := range codings {
		for _, p := range [][]byte{doc, zeros} {
			b := c.encode(f, p)
			f.Add(uint8(i), b)
			f.Add(uint8(i), b[:len(b)/2])
		}
	}
	f.Add(uint8(0), []byte{})
	f.Add(uint8(4), []byte("\x28\xb5\x2f\xfd\x00\x58"))

	var got int
	h := api.Decompress(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		b, err := io.ReadAll(http.MaxBytesReader(w, r.Body, limit))
		got = len(b)
		if err != nil {
			_ = r.Body.Close()
			w.WriteHeader(http.StatusBadRequest)
			return
		}
		if r.Header.Get("Content-Encoding") != "identity" && (r.Header.Get("Content-Encoding") != "" || r.Header.Get("Content-Length") != "" || r.ContentLength != -1) {
			t := "coding headers left on the request"
			w.WriteHeader(http.StatusInternalServerError)
			_, _ = io.WriteString(w, t)
		}
	}))
	f.Fuzz(func(t *testing.T, which uint8, data []byte) {
		coding := codings[int(which)%len(codings)].header
		req := httptest.NewRequest(http.MethodPost, "/api/v1/notification", bytes.NewReader(data))
		req.Header.Set("Content-Encoding", coding)
		rec := httptest.NewRecorder()
		got = 0
		h.ServeHTTP(rec, req)
		if rec.Code >= 500 {
			t.Fatalf("%s: status %d %s", coding, rec.Code, rec.Body)
		}
		if got > limit {
			t.Fatalf("%s: handler received %d bytes, more than %d", coding, got, limit)
		}
	})
}

// BenchmarkDecompress measures the middleware and a handler reading a
// small notification under each coding (the cost a pool of decoders
// would save).
func BenchmarkDecompress(b *testing.B) {
	doc := []byte(`{"event_type":"public","identifier":{"k":"v"},"payload":{"text":"` + strings.Repeat("forecast step ready; ", 40) + `"}}`)
	h := api.Decompress(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if _, err := io.ReadAll(http.MaxBytesReader(w, r.Body, 1<<20)); err != nil {
			b.Fatal(err)
		}
	}))
	for _, c := range []struct {
		header string
		encode func(testing.TB, []byte) []byte
	}{
		{"identity", plain}, {"gzip", gzipped}, {"deflate", zlibbed}, {"br", brotlied(0)}, {"zstd", zstded(0)},
		{"zstd", func(t testing.TB, p []byte) []byte { return zstdFrame(0x68, p) }},
	} {
		body := c.encode(b, doc)
		b.Run(c.header+"/"+strconv.Itoa(len(body)), func(b *testing.B) {
			b.ReportAllocs()
			for b.Loop() {
				req := httptest.NewRequest(http.MethodPost, "/api/v1/notification", bytes.NewReader(body))
				req.Header.Set("Content-Encoding", c.header)
				h.ServeHTTP(httptest.NewRecorder(), req)
			}
		})
	}
}
