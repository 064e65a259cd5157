package httperr

import (
	"context"
	"errors"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	jsonv2 "github.com/go-json-experiment/json"
)

func TestWriteJSON(t *testing.T) {
	tests := []struct {
		name   string
		status int
		v      any
		want   string
		code   int
	}{
		{"error body", http.StatusNotFound, ErrorBody{Code: "NOT_FOUND", Error: "not_found", Message: "m", Details: "d", RequestID: "r"}, `{"code":"NOT_FOUND","error":"not_found","message":"m","details":"d","request_id":"r"}` + "\n", http.StatusNotFound},
		{"auth body", http.StatusForbidden, AuthErrorBody{Code: "FORBIDDEN", Error: "forbidden", Message: "m", RequestID: "r"}, `{"code":"FORBIDDEN","error":"forbidden","message":"m","request_id":"r"}` + "\n", http.StatusForbidden},
		{"unencodable", http.StatusOK, func() {}, `{"code":"INTERNAL_ERROR","error":"internal_error","message":"response encoding failed"}` + "\n", http.StatusInternalServerError},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			rec := httptest.NewRecorder()
			WriteJSON(rec, tt.status, tt.v)
			if rec.Code != tt.code || rec.Body.String() != tt.want || rec.Header().Get("Content-Type") != "application/json" {
				t.Fatalf("got %d %q %q, want %d %q", rec.Code, rec.Header().Get("Content-Type"), rec.Body.String(), tt.code, tt.want)
			}
		})
	}
}

func TestRequestID(t *testing.T) {
	if got := RequestID(context.Background()); got != "" {
		t.Fatalf("RequestID(empty) = %q, want \"\"", got)
	}
	if got := RequestID(WithRequestID(context.Background(), "abc")); got != "abc" {
		t.Fatalf("RequestID = %q, want abc", got)
	}
}

func TestJSONErrorText(t *testing.T) {
	var v struct{ Force bool }
	err := jsonv2.Unmarshal([]byte(`{"Force":1}`), &v)
	if got := JSONErrorText(err); !strings.HasPrefix(got, "json: cannot unmarshal JSON number into Go bool") {
		t.Fatalf("%q", got)
	}
	// The other wording, whichever this process drew.
	if got := JSONErrorText(errors.New(`json: unable to unmarshal JSON number into Go bool within "/force"`)); got != `json: cannot unmarshal JSON number into Go bool within "/force"` {
		t.Fatalf("%q", got)
	}
}
