package session_test

import (
	"os/exec"
	"strings"
	"testing"
)

// TestImportRules enforces the design's arrows: package session knows no
// WebSocket library and no HTTP endpoint (packages handlers and api),
// and package stream, which both SSE and sessions use, knows neither
// sessions nor access control (go list -deps).
func TestImportRules(t *testing.T) {
	for pkg, banned := range map[string][]string{
		"github.com/herald-gateway/herald/session": {"github.com/coder/websocket", "github.com/herald-gateway/herald/handlers", "github.com/herald-gateway/herald/api"},
		"github.com/herald-gateway/herald/stream":  {"github.com/coder/websocket", "github.com/herald-gateway/herald/handlers", "github.com/herald-gateway/herald/api", "github.com/herald-gateway/herald/session", "github.com/herald-gateway/herald/auth"},
	} {
		out, err := exec.Command("go", "list", "-deps", pkg).CombinedOutput()
		if err != nil {
			t.Fatalf("go list: %v\n%s", err, out)
		}
		deps := strings.Fields(string(out))
		if len(deps) < 10 {
			t.Fatalf("go list -deps %s listed %d packages: %q", pkg, len(deps), out)
		}
		for _, d := range deps {
			for _, b := range banned {
				if d == b {
					t.Errorf("%s depends on %s", pkg, d)
				}
			}
		}
	}
}
