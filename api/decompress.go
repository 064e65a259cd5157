package api

import (
	"bufio"
	"compress/flate"
	"compress/gzip"
	"compress/zlib"
	"errors"
	"fmt"
	"io"
	"net/http"
	"strconv"
	"strings"

	"github.com/andybalholm/brotli"
	"github.com/klauspost/compress/zstd"

	"github.com/herald-gateway/herald/api/httperr"
)

// maxCodings bounds the codings one request may stack (`gzip, br` is
// the realistic most): every layer holds a decoder window, so a longer
// list only serves decompression bombs.
const maxCodings = 2

// maxZstdWindow is the largest zstd window decoded: RFC 9659 §3 limits
// the "zstd" content coding to 8 MB windows (encoders must not exceed
// it). The decoder allocates the window of a frame up front, so without
// the limit a frame header of a few bytes could ask for gigabytes.
const maxZstdWindow = 8 << 20

// acceptEncoding is the Accept-Encoding header of a 415: the codings
// decoded (x-gzip is an alias of gzip; identity is always acceptable).
// supportedCodings names them all in the 415 message.
const (
	acceptEncoding   = "gzip, deflate, br, zstd"
	supportedCodings = "gzip, x-gzip, deflate, br, zstd, identity"
)

// maxEchoCoding bounds the coding name echoed in a 415 message.
const maxEchoCoding = 32

// Decompress decodes request bodies sent with a Content-Encoding (RFC 9110
// §8.4): gzip (x-gzip), deflate (zlib-wrapped, or raw DEFLATE when the
// zlib header is absent, as some clients send), br and zstd; identity and
// no header pass through. A list of codings is decoded in reverse order
// of application (the last one first), at most maxCodings of them. An
// unknown coding, or a longer list, answers 415 with an Accept-Encoding
// header listing the supported codings (RFC 9110 §15.5.16).
//
// Decoding is lazy: nothing is read before the handler reads the body, so
// its read deadline and its body limit (http.MaxBytesReader in handlers)
// apply to the decoded stream. A bomb therefore ends in the handler's 413
// with at most the limit in memory besides the decoder's window (gzip and
// deflate 32 KiB; zstd up to 8 MiB and br up to 4 MiB, larger windows
// refused), and a corrupt
// body in its 400, the error naming the coding ("gzip body: ..."). The
// request the handler
// sees has no Content-Encoding and no Content-Length (ContentLength -1).
// Decoders are released when their stream ends, fails, or the request
// ends, whichever comes first.
//
// Requests without a body (GET, or an empty body with a Content-Length
// of 0) pass through unchanged: there is nothing to decode.
func Decompress(next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		values := r.Header.Values("Content-Encoding")
		if len(values) == 0 || r.Body == nil || r.Body == http.NoBody {
			next.ServeHTTP(w, r)
			return
		}
		codings, msg := parseCodings(values)
		if msg != "" {
			unsupportedCoding(w, r, msg)
			return
		}
		if len(codings) == 0 {
			// identity only.
			next.ServeHTTP(w, r)
			return
		}
		body := newDecodedBody(r.Body, codings)
		defer body.Close()
		r2 := new(http.Request)
		*r2 = *r
		r2.Header = r.Header.Clone()
		r2.Header.Del("Content-Encoding")
		r2.Header.Del("Content-Length")
		r2.ContentLength = -1
		r2.Body = body
		next.ServeHTTP(w, r2)
	})
}

// parseCodings returns the codings of the Content-Encoding field values
// in the order they were applied (identity and empty list elements left
// out), or the message of the 415 answer.
func parseCodings(values []string) ([]string, string) {
	var codings []string
	for _, v := range values {
		for _, name := range strings.Split(v, ",") {
			name = strings.TrimSpace(name)
			c := strings.ToLower(name)
			switch c {
			case "", "identity":
				continue
			case "x-gzip":
				c = "gzip"
			case "gzip", "deflate", "br", "zstd":
			default:
				return nil, "unsupported content coding " + strconv.Quote(echo(name, maxEchoCoding)) +
					" in Content-Encoding; supported: " + supportedCodings
			}
			codings = append(codings, c)
			if len(codings) > maxCodings {
				return nil, "Content-Encoding lists more than " + strconv.Itoa(maxCodings) +
					" content codings (identity aside); at most " + strconv.Itoa(maxCodings) + " are decoded"
			}
		}
	}
	return codings, ""
}

// unsupportedCoding answers 415 UNSUPPORTED_MEDIA_TYPE with the JSON error
// body and the Accept-Encoding header of the supported codings.
func unsupportedCoding(w http.ResponseWriter, r *http.Request, msg string) {
	w.Header().Set("Accept-Encoding", acceptEncoding)
	httperr.WriteJSON(w, http.StatusUnsupportedMediaType, httperr.ErrorBody{
		Code: "UNSUPPORTED_MEDIA_TYPE", Error: "unsupported_media_type", Message: msg, Details: msg,
		RequestID: httperr.RequestID(r.Context()),
	})
}

// codingError is a decoding failure of one coding; its text names the
// coding ("gzip body: unexpected EOF").
type codingError struct {
	coding string
	err    error
}

func (e *codingError) Error() string { return e.coding + " body: " + e.err.Error() }
func (e *codingError) Unwrap() error { return e.err }

// sourceError is a read error of the request body itself (a timeout, a
// dropped connection): it reaches the handler unchanged, not as a
// coding's failure.
type sourceError struct{ err error }

func (e *sourceError) Error() string { return e.err.Error() }
func (e *sourceError) Unwrap() error { return e.err }

// source reads the request body, marks its errors (io.EOF excepted:
// decoders compare it) and tells whether it was empty.
type source struct {
	r     io.Reader
	n     int64
	ended bool
}

func (s *source) Read(p []byte) (int, error) {
	n, err := s.r.Read(p)
	s.n += int64(n)
	if err == io.EOF {
		s.ended = true
	} else if err != nil {
		err = &sourceError{err}
	}
	return n, err
}

// empty reports whether the body ended without a byte.
func (s *source) empty() bool { return s.ended && s.n == 0 }

// layer decodes one coding from src. The decoder is made on the first
// read and released at the end of its stream, on its first error, or on
// Close; errors are sticky.
type layer struct {
	coding  string
	src     io.Reader
	body    *source
	dec     io.Reader
	release func()
	err     error
}

func (l *layer) Read(p []byte) (int, error) {
	if l.err != nil {
		return 0, l.err
	}
	if l.dec == nil {
		dec, release, err := openDecoder(l.coding, l.src)
		if err != nil {
			if err == io.EOF {
				// The stream ended before its header.
				err = io.ErrUnexpectedEOF
			}
			return 0, l.fail(err)
		}
		l.dec, l.release = dec, release
	}
	n, err := l.dec.Read(p)
	if err != nil {
		err = l.fail(err)
	}
	return n, err
}

// fail records err (wrapped as this coding's failure unless it is the end
// of the stream or already attributed) and releases the decoder.
// An error of an empty body is its end.
func (l *layer) fail(err error) error {
	l.close()
	if l.body.empty() {
		// An empty body is empty whatever its coding, as it is when it
		// comes with Content-Length 0 (which Decompress passes through),
		// whatever the decoder thinks of an empty stream.
		err = io.EOF
	}
	var ce *codingError
	var se *sourceError
	if err != io.EOF && !errors.As(err, &ce) && !errors.As(err, &se) {
		err = &codingError{coding: l.coding, err: err}
	}
	l.err = err
	return err
}

// close releases the decoder.
func (l *layer) close() {
	if l.release != nil {
		l.release()
	}
	l.dec, l.release = nil, nil
}

// openDecoder returns the decoder of coding reading src and the function
// releasing it.
func openDecoder(coding string, src io.Reader) (io.Reader, func(), error) {
	switch coding {
	case "gzip":
		z, err := gzip.NewReader(src)
		if err != nil {
			return nil, nil, err
		}
		return z, func() { _ = z.Close() }, nil
	case "deflate":
		// RFC 9110 §8.4.1.2: deflate is the zlib format (RFC 1950). Some
		// clients send raw DEFLATE (RFC 1951) instead; like browsers
		// decoding responses, accept it when the zlib header is absent.
		// A standard raw stream cannot start like a zlib header: its
		// first byte would be a stored block with non-zero padding.
		br := bufio.NewReaderSize(src, 4096)
		if hdr, _ := br.Peek(2); len(hdr) == 2 && isZlibHeader(hdr[0], hdr[1]) {
			z, err := zlib.NewReader(br)
			if err != nil {
				return nil, nil, err
			}
			return z, func() { _ = z.Close() }, nil
		}
		f := flate.NewReader(br)
		return f, func() { _ = f.Close() }, nil
	case "br":
		br := bufio.NewReaderSize(src, 64)
		if hdr, _ := br.Peek(1); len(hdr) == 1 {
			if bits := brotliWindowBits(hdr[0]); bits > maxBrotliWindowBits {
				return nil, nil, fmt.Errorf("a window of 2^%d bytes is larger than the 2^%d decoded (the encoders' default; use a lower lgwin)", bits, maxBrotliWindowBits)
			}
		}
		return brotli.NewReader(br), func() {}, nil
	case "zstd":
		d, err := zstd.NewReader(src,
			zstd.WithDecoderConcurrency(1), // decode in the reading goroutine: no goroutines, one block buffer
			zstd.WithDecoderLowmem(true),
			zstd.WithDecoderMaxWindow(maxZstdWindow),
		)
		if err != nil {
			return nil, nil, err
		}
		return zstdReader{d}, d.Close, nil
	}
	return nil, nil, fmt.Errorf("unsupported coding %q", coding)
}

// maxBrotliWindowBits bounds the brotli windows decoded: 22 (4 MiB) is
// the default of the reference encoder and its bindings. The decoder
// sizes its buffer from the window the stream declares (up to 16 MiB for
// a 14-byte body), and cannot be told a lower limit.
const maxBrotliWindowBits = 22

// brotliWindowBits reads WBITS from the first byte of a brotli stream
// (RFC 7932 §9.1); 25 stands for the large-window extension, which is no
// part of the content coding.
func brotliWindowBits(b byte) int {
	if b&1 == 0 {
		return 16
	}
	if n := (b >> 1) & 7; n != 0 {
		return 17 + int(n)
	}
	switch m := (b >> 4) & 7; m {
	case 0:
		return 17
	case 1:
		return 25
	default:
		return 8 + int(m)
	}
}

// zstdReader explains the decoder's refusal of a window beyond the limit.
type zstdReader struct{ d *zstd.Decoder }

func (z zstdReader) Read(p []byte) (int, error) {
	n, err := z.d.Read(p)
	if errors.Is(err, zstd.ErrWindowSizeExceeded) || errors.Is(err, zstd.ErrDecoderSizeExceeded) {
		err = fmt.Errorf("%w (windows up to %d bytes are decoded, RFC 9659)", err, maxZstdWindow)
	}
	return n, err
}

// isZlibHeader reports whether cmf and flg start a zlib stream (RFC 1950
// §2.2): method 8 (deflate), a window of at most 32 KiB and the check
// bits.
func isZlibHeader(cmf, flg byte) bool {
	return cmf&0x0f == 8 && cmf>>4 <= 7 && (uint16(cmf)<<8|uint16(flg))%31 == 0
}

// decodedBody is the request body seen through its decoders: the last
// coding applied is decoded first.
type decodedBody struct {
	orig   io.ReadCloser
	top    io.Reader
	layers []*layer
	closed bool
}

func newDecodedBody(orig io.ReadCloser, codings []string) *decodedBody {
	b := &decodedBody{orig: orig}
	src := &source{r: orig}
	var r io.Reader = src
	for i := len(codings) - 1; i >= 0; i-- {
		l := &layer{coding: codings[i], src: r, body: src}
		b.layers = append(b.layers, l)
		r = l
	}
	b.top = r
	return b
}

func (b *decodedBody) Read(p []byte) (int, error) {
	if b.closed {
		return 0, http.ErrBodyReadAfterClose
	}
	n, err := b.top.Read(p)
	if err != nil {
		// A source error reaches the handler as the body's own error
		// would without a coding (the handler classifies timeouts).
		var se *sourceError
		if errors.As(err, &se) {
			var ce *codingError
			if !errors.As(err, &ce) {
				err = se.err
			}
		}
		b.release()
	}
	return n, err
}

// release frees every decoder.
func (b *decodedBody) release() {
	for _, l := range b.layers {
		l.close()
	}
}

// Close releases the decoders and closes the request body.
func (b *decodedBody) Close() error {
	if b.closed {
		return nil
	}
	b.closed = true
	b.release()
	return b.orig.Close()
}
