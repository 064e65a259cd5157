package ecpds_test

import (
	"log/slog"
	"net/url"
	"slices"
	"strings"
	"testing"

	"github.com/herald-gateway/herald/ecpds"
)

func TestParseDestinationList(t *testing.T) {
	tests := []struct {
		name, body, field string
		want              []string
		err               string
	}{
		{"populated", `{"destinationList":[{"name":"CIP","type":32,"active":true},{"name":"FOO","type":16,"active":true},{"name":"BAR","type":16,"active":false}],"success":"yes"}`, "name", []string{"CIP", "FOO"}, ""},
		{"empty", `{"destinationList":[],"success":"yes"}`, "name", []string{}, ""},
		{"custom field", `{"destinationList":[{"id":"DEST1","name":"CIP","active":true}],"success":"yes"}`, "id", []string{"DEST1"}, ""},
		{"skipped records", `{"destinationList":[{"id":"x","active":true},{"name":1,"active":true},{"name":"A"},{"name":"B","active":"true"},7,null,{"name":"C","active":true}],"success":"yes"}`, "name", []string{"C"}, ""},
		{"success no", `{"destinationList":[],"success":"no"}`, "name", nil, `"success" is "no", not "yes"`},
		{"success Yes", `{"destinationList":[],"success":"Yes"}`, "name", nil, `"success" is "Yes", not "yes"`},
		{"success missing", `{"destinationList":[]}`, "name", nil, `the response has no "success" field`},
		{"list missing", `{"success":"yes"}`, "name", nil, `the response has no "destinationList" array`},
		{"list null", `{"destinationList":null,"success":"yes"}`, "name", nil, `the response has no "destinationList" array`},
		{"list not an array", `{"destinationList":{},"success":"yes"}`, "name", nil, "not a destination list: json: cannot unmarshal object into Go struct field .destinationList of type []json.RawMessage"},
		{"not JSON", `<html>`, "name", nil, "not a destination list: invalid character '<' looking for beginning of value"},
	}
	for _, tc := range tests {
		got, err := ecpds.ParseDestinationList([]byte(tc.body), tc.field)
		gotErr := ""
		if err != nil {
			gotErr = err.Error()
		}
		if gotErr != tc.err || !slices.Equal(got, tc.want) || (tc.want != nil && got == nil) {
			t.Errorf("%s: got %q, %q; want %q, %q", tc.name, got, gotErr, tc.want, tc.err)
		}
	}
}

func FuzzParseDestinationList(f *testing.F) {
	for _, s := range []string{`{"destinationList":[{"name":"CIP","active":true}],"success":"yes"}`, `{}`, `[]`, `{"destinationList":[1,null,"x"],"success":"yes"}`, ``} {
		f.Add([]byte(s), "name")
	}
	f.Fuzz(func(t *testing.T, body []byte, field string) {
		got, err := ecpds.ParseDestinationList(body, field)
		if err != nil && got != nil {
			t.Fatalf("destinations %q with error %v", got, err)
		}
	})
}

func TestDestinationListURL(t *testing.T) {
	tests := []struct{ server, user, want string }{
		{"https://ecpds.example.org", "alice", "https://ecpds.example.org/ecpds/v1/destination/list?id=alice"},
		{"https://proxy.example/ecpds-api/", "alice", "https://proxy.example/ecpds-api/ecpds/v1/destination/list?id=alice"},
		{"https://proxy.example/ecpds-api", "alice", "https://proxy.example/ecpds-api/ecpds/v1/destination/list?id=alice"},
		{"http://127.0.0.1:8080//", "user+name with spaces&extra=injected", "http://127.0.0.1:8080/ecpds/v1/destination/list?id=user%2Bname+with+spaces%26extra%3Dinjected"},
	}
	for _, tc := range tests {
		u, err := url.Parse(tc.server)
		if err != nil {
			t.Fatal(err)
		}
		if got := ecpds.DestinationListURL(u, tc.user).String(); got != tc.want {
			t.Errorf("%s %q: %s, want %s", tc.server, tc.user, got, tc.want)
		}
	}
}

func TestConfigRedactsPassword(t *testing.T) {
	c := ecpds.Config{Username: "svc", Password: "s3cret", Servers: []string{"https://a"}}
	if s := c.String(); strings.Contains(s, "s3cret") || !strings.Contains(s, "[REDACTED]") {
		t.Errorf("String() = %q", s)
	}
	var b strings.Builder
	slog.New(slog.NewJSONHandler(&b, nil)).Info("x", "ecpds", c)
	if s := b.String(); strings.Contains(s, "s3cret") || !strings.Contains(s, "[REDACTED]") {
		t.Errorf("log = %q", s)
	}
}
