package handlers_test

import (
	"bufio"
	"encoding/json"
	"io"
	"net"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/herald-gateway/herald/configs"
)

// TestSlowBodyTimesOut sends headers and part of a body, then stalls: the
// request must end with 408 and the JSON error, not hold the handler.
func TestSlowBodyTimesOut(t *testing.T) {
	s := startServer(t, testConfig, func(c *configs.Config) { c.Application.ReadBodyTimeoutSec = 1 })
	conn, err := net.Dial("tcp", strings.TrimPrefix(s.URL, "http://"))
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close()
	_, err = io.WriteString(conn, "POST /api/v1/notification HTTP/1.1\r\nHost: x\r\nContent-Length: 100\r\n\r\n{\"event_type\":")
	if err != nil {
		t.Fatal(err)
	}
	_ = conn.SetReadDeadline(time.Now().Add(10 * time.Second))
	resp, err := http.ReadResponse(bufio.NewReader(conn), nil)
	if err != nil {
		t.Fatalf("no response to a stalled body: %v", err)
	}
	defer resp.Body.Close()
	var body map[string]any
	_ = json.NewDecoder(resp.Body).Decode(&body)
	if resp.StatusCode != http.StatusRequestTimeout || body["code"] != "REQUEST_TIMEOUT" ||
		body["message"] != "request body was not received within 1s" || body["request_id"] != resp.Header.Get("X-Request-ID") {
		t.Fatalf("status %d body %v", resp.StatusCode, body)
	}
}
