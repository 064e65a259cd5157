package handlers_test

import (
	"net/url"
	"slices"
	"testing"

	"herald/handlers"
)

func TestRoleMapAdmits(t *testing.T) {
	id := func(realm string, roles ...string) *handlers.Identity {
		return &handlers.Identity{Username: "u", Realm: realm, Roles: roles}
	}
	tests := []struct {
		name string
		m    handlers.RoleMap
		id   *handlers.Identity
		want bool
	}{
		{"empty map admits any user", handlers.RoleMap{}, id("ecmwf", "reader"), true},
		{"nil identity never", handlers.RoleMap{}, nil, false},
		{"matching role in realm", handlers.RoleMap{"ecmwf": {"admin", "ops"}}, id("ecmwf", "reader", "ops"), true},
		{"realm not in map", handlers.RoleMap{"ecmwf": {"admin"}}, id("desp", "admin"), false},
		{"no matching role", handlers.RoleMap{"ecmwf": {"admin", "operator"}}, id("ecmwf", "reader"), false},
		{"no roles", handlers.RoleMap{"ecmwf": {"admin"}}, id("ecmwf"), false},
		{"no realm", handlers.RoleMap{"ecmwf": {"admin"}}, id("", "admin"), false},
		{"wildcard admits the realm", handlers.RoleMap{"internal": {"*"}}, id("internal", "anything"), true},
		{"wildcard admits the realm without roles", handlers.RoleMap{"internal": {"*"}}, id("internal"), true},
		{"wildcard is per realm", handlers.RoleMap{"internal": {"*"}}, id("external", "admin"), false},
		{"roles match exactly", handlers.RoleMap{"ecmwf": {"Admin"}}, id("ecmwf", "admin"), false},
	}
	for _, tc := range tests {
		if got := tc.m.Admits(tc.id); got != tc.want {
			t.Errorf("%s: Admits = %v", tc.name, got)
		}
	}
}

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
		got, err := handlers.ParseDestinationList([]byte(tc.body), tc.field)
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
		got, err := handlers.ParseDestinationList(body, field)
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
		if got := handlers.DestinationListURL(u, tc.user).String(); got != tc.want {
			t.Errorf("%s %q: %s, want %s", tc.server, tc.user, got, tc.want)
		}
	}
}
