package cli

import (
	"strings"
	"testing"
	"time"

	"github.com/herald-gateway/herald/internal/testkit"
)

// opened reports whether the server's answer on the latest connection
// has opened the stream (its first event is written after the
// subscription exists).
func opened(s string) bool {
	return strings.Contains(s, "connection_established") || strings.Contains(s, "replay_started")
}

// waitOpened waits until the stream on p's latest forwarded connection is
// open.
func waitOpened(t *testing.T, p *testkit.Proxy) {
	t.Helper()
	testkit.WaitFor(t, 20*time.Second, "the stream to open through the proxy", func() bool { return opened(p.Latest()) })
}
