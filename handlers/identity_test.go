package handlers_test

import (
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
