package leanhttp

import (
	"bufio"
	"bytes"
	"io"
	"net"
	"net/http"
	"testing"
)

// FuzzExchange feeds arbitrary bytes to the client as a server's answer,
// over an in-memory connection the server closes after writing them. The
// client must return, with an error or a status: a success is a 2xx
// status, an error with a status an answer read in full whose status is
// not 2xx. When net/http reads the same bytes as a final answer too,
// both must agree on the status and the body (an error quotes it).
func FuzzExchange(f *testing.F) {
	for _, seed := range []string{
		"HTTP/1.1 200 OK\r\nContent-Length: 2\r\n\r\nok",
		"HTTP/1.1 200 OK\r\ncontent-length: 110\r\ncontent-type: application/json\r\nx-request-id: f17a5ee6-c391-42a3-bf90-eef59fa3d824\r\ndate: Mon, 07 Dec 2026 18:07:17 GMT\r\n\r\n" +
			`{"status":"success","request_id":"f17a5ee6-c391-42a3-bf90-eef59fa3d824","processed_at":"2026-12-07T18:07:18Z"}`,
		"HTTP/1.1 400 Bad Request\r\ncontent-length: 15\r\ncontent-type: application/json\r\n\r\n{\"error\":\"bad\"}",
		"HTTP/1.1 404 Not Found\r\ncontent-length: 0\r\nconnection: close\r\n\r\n",
		"HTTP/1.1 200 OK\r\nContent-Type: application/json\r\nTransfer-Encoding: chunked\r\n\r\n5;x=y\r\nhello\r\n6\r\n world\r\n0\r\nTrailer: t\r\n\r\n",
		"HTTP/1.1 500 Internal Server Error\r\nTransfer-Encoding: chunked\r\n\r\n4\r\nbusy\r\n0\r\n\r\n",
		"HTTP/1.1 100 Continue\r\n\r\nHTTP/1.1 204 No Content\r\n\r\n",
		"HTTP/1.0 200 OK\r\nContent-Length: 3\r\n\r\nabcdef",
		"HTTP/1.1 200 OK\r\n\r\nno length",
		"HTTP/1.1 200 OK\r\nContent-Length: 999999999999999\r\n\r\nshort",
		"HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\nfffffffffffffff\r\nshort",
		"HTTP/1.1 2x0 OK\r\n\r\n",
		"",
		"\r\n",
		"HTTP/1.1 200 OK\r\nContent-Length: 2\r\nContent-Length: 2\r\n\r\nok",
	} {
		f.Add([]byte(seed), false)
		f.Add([]byte(seed), true)
	}
	f.Fuzz(func(t *testing.T, answer []byte, keep bool) {
		p := New("fuzz")
		served := make(chan struct{})
		p.dial = func() (net.Conn, error) {
			client, server := net.Pipe()
			go func() {
				defer close(served)
				defer server.Close()
				if _, err := http.ReadRequest(bufio.NewReader(server)); err != nil {
					t.Errorf("the request does not parse: %v", err)
					return
				}
				_, _ = server.Write(answer)
			}()
			return client, nil
		}
		var (
			status int
			body   []byte
			err    error
		)
		if keep {
			status, body, err = p.Read("POST", "/fuzz", []byte(`{}`), nil)
		} else {
			status, err = p.Do("POST", "/fuzz", []byte(`{}`))
		}
		// Closing the kept connection ends a server still writing bytes
		// past the answer.
		p.Close()
		<-served
		switch {
		case err == nil && status/100 != 2:
			t.Fatalf("status %d without an error", status)
		case err != nil && status/100 == 2:
			t.Fatalf("status %d with an error: %v", status, err)
		case err != nil && status != 0 && (status < 200 || status > 599):
			t.Fatalf("status %d with an error: %v", status, err)
		case err != nil && body != nil:
			t.Fatalf("a body with an error: %v", err)
		case !keep && body != nil:
			t.Fatal("Do returned a body")
		}
		if status == 0 {
			return
		}
		resp, herr := http.ReadResponse(bufio.NewReader(bytes.NewReader(answer)), &http.Request{Method: "POST"})
		if herr != nil || resp.StatusCode < 200 { // net/http returns interim answers
			return
		}
		want, herr := io.ReadAll(resp.Body)
		if herr != nil {
			return
		}
		if resp.StatusCode != status {
			t.Fatalf("status %d, net/http reads %d", status, resp.StatusCode)
		}
		if err == nil && keep && !bytes.Equal(body, want) {
			t.Fatalf("body %q, net/http reads %q", body, want)
		}
		if err != nil && !bytes.HasSuffix([]byte(err.Error()), want[:min(len(want), MaxErrorBody)]) {
			t.Fatalf("error %q, net/http reads the body %q", err, want)
		}
	})
}
