package api

import (
	"testing"

	"github.com/go-chi/chi/v5"

	"github.com/herald-gateway/herald/internal/cowmap"
)

// TestRoutePattern: the route kept per list of route patterns is chi's
// RoutePattern of that list, for lists of every length (past four, not
// kept), read again from the cache.
func TestRoutePattern(t *testing.T) {
	var routes cowmap.Map[routeKey, string]
	lists := [][]string{
		nil,
		{"/"},
		{"/api/v1/*", "/notification"},
		{"/api/v1/*", "/admin/*", "/notification/{notification_id}"},
		{"/a/*", "/b/*", "/c/*", "/d/*", "/e"},
	}
	for round := range 2 {
		for _, l := range lists {
			rc := &chi.Context{RoutePatterns: l}
			if got, want := routePattern(&routes, rc), rc.RoutePattern(); got != want {
				t.Errorf("round %d, %q: %q, want %q", round, l, got, want)
			}
		}
	}
	if routes.Len() != 4 {
		t.Errorf("%d routes kept, want 4 (not the one of five patterns)", routes.Len())
	}
}
