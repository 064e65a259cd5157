// Command healthcheck is the container's HEALTHCHECK: it asks herald's
// readiness endpoint and exits 0 when it answers 200, 1 otherwise. The
// runtime image (distroless/static) has no shell, curl or wget, so the
// Dockerfile builds this small static binary next to herald.
//
// The URL is $HEALTHCHECK_URL when set, else
// http://127.0.0.1:$HERALD_APPLICATION__PORT/ready (port 8000 when that
// variable is unset). It deliberately reads no other HERALD_ variable:
// herald treats every HERALD_ variable as a config override.
package main

import (
	"fmt"
	"io"
	"net/http"
	"os"
	"time"
)

func main() {
	os.Exit(probe(os.Getenv, os.Stderr))
}

// probe performs one readiness request and returns the exit code.
func probe(getenv func(string) string, stderr io.Writer) int {
	url := getenv("HEALTHCHECK_URL")
	if url == "" {
		port := getenv("HERALD_APPLICATION__PORT")
		if port == "" {
			port = "8000"
		}
		url = "http://127.0.0.1:" + port + "/ready"
	}
	client := &http.Client{Timeout: 3 * time.Second}
	resp, err := client.Get(url)
	if err != nil {
		fmt.Fprintf(stderr, "healthcheck: %v\n", err)
		return 1
	}
	defer resp.Body.Close()
	_, _ = io.Copy(io.Discard, io.LimitReader(resp.Body, 64<<10))
	if resp.StatusCode != http.StatusOK {
		fmt.Fprintf(stderr, "healthcheck: %s answered %s\n", url, resp.Status)
		return 1
	}
	return 0
}
