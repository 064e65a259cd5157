package auth

import (
	"testing"
)

func TestRoleMapAdmits(t *testing.T) {
	id := func(realm string, roles ...string) *Identity {
		return &Identity{Username: "u", Realm: realm, Roles: roles}
	}
	tests := []struct {
		name string
		m    RoleMap
		id   *Identity
		want bool
	}{
		{"empty map admits any user", RoleMap{}, id("ecmwf", "reader"), true},
		{"nil identity never", RoleMap{}, nil, false},
		{"matching role in realm", RoleMap{"ecmwf": {"admin", "ops"}}, id("ecmwf", "reader", "ops"), true},
		{"realm not in map", RoleMap{"ecmwf": {"admin"}}, id("desp", "admin"), false},
		{"no matching role", RoleMap{"ecmwf": {"admin", "operator"}}, id("ecmwf", "reader"), false},
		{"no roles", RoleMap{"ecmwf": {"admin"}}, id("ecmwf"), false},
		{"no realm", RoleMap{"ecmwf": {"admin"}}, id("", "admin"), false},
		{"wildcard admits the realm", RoleMap{"internal": {"*"}}, id("internal", "anything"), true},
		{"wildcard admits the realm without roles", RoleMap{"internal": {"*"}}, id("internal"), true},
		{"wildcard is per realm", RoleMap{"internal": {"*"}}, id("external", "admin"), false},
		{"roles match exactly", RoleMap{"ecmwf": {"Admin"}}, id("ecmwf", "admin"), false},
	}
	for _, tc := range tests {
		if got := tc.m.Admits(tc.id); got != tc.want {
			t.Errorf("%s: Admits = %v", tc.name, got)
		}
	}
}
