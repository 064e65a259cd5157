package server_test

import (
	"bufio"
	"errors"
	"fmt"
	"io"
	"net/http"
	"os"
	"os/exec"
	"strconv"
	"strings"
	"testing"
	"time"
)

// benchClientEnv, set in a test binary's environment, makes the binary
// the client process of BenchmarkNotifyTracing's -extclient variants
// (serveBenchClient) instead of running tests.
const benchClientEnv = "HERALD_TRACING_BENCH_CLIENT"

// TestMain runs the tests, or the benchmark's client process.
func TestMain(m *testing.M) {
	if spec := os.Getenv(benchClientEnv); spec != "" {
		os.Exit(serveBenchClient(spec, os.Stdin, os.Stdout))
	}
	os.Exit(m.Run())
}

// serveBenchClient is the client process of an -extclient variant. spec
// is "<conc> <traceparent or -> <url of herald 0> <url of herald 1>";
// each line read from in, "<i> <n>", runs a phase (n notifies to
// herald i from conc clients, as tracingBench.phase) and is answered on
// out with "<wall ns> <CPU ns of this process>", or "error <text>".
func serveBenchClient(spec string, in io.Reader, out io.Writer) int {
	f := strings.Fields(spec)
	conc := 0
	if len(f) == 4 {
		conc, _ = strconv.Atoi(f[0])
	}
	if conc <= 0 {
		fmt.Fprintf(os.Stderr, "%s: %q is not \"<conc> <traceparent> <url> <url>\"\n", benchClientEnv, spec)
		return 2
	}
	t := &tracingBench{parent: f[1], urls: [2]string{f[2], f[3]}}
	if t.parent == "-" {
		t.parent = ""
	}
	for i := range t.clients {
		t.clients[i] = newBenchHTTPClient(conc)
	}
	sc := bufio.NewScanner(in)
	for sc.Scan() {
		var i, n int
		if _, err := fmt.Sscan(sc.Text(), &i, &n); err != nil || i < 0 || i > 1 || n < conc {
			fmt.Fprintf(out, "error bad phase %q\n", sc.Text())
			continue
		}
		r, err := t.phase(i, conc, n)
		if err != nil {
			fmt.Fprintf(out, "error %s\n", strings.ReplaceAll(err.Error(), "\n", "; "))
			continue
		}
		fmt.Fprintf(out, "%d %d\n", r.wall, r.cpu)
	}
	return 0
}

// newBenchHTTPClient returns an HTTP client keeping up to conns
// connections alive.
func newBenchHTTPClient(conns int) *http.Client {
	return &http.Client{Transport: &http.Transport{MaxIdleConns: conns, MaxIdleConnsPerHost: conns}}
}

// extClient is the client process of an -extclient variant, the test
// binary run again with benchClientEnv set.
type extClient struct {
	in  io.Writer
	out *bufio.Scanner
}

// startExtClient starts the client process of t's heralds with conc
// clients; it ends with tb.
func startExtClient(tb testing.TB, t *tracingBench, conc int) *extClient {
	tb.Helper()
	exe, err := os.Executable()
	if err != nil {
		tb.Fatal(err)
	}
	parent := t.parent
	if parent == "" {
		parent = "-"
	}
	cmd := exec.Command(exe)
	cmd.Env = append(os.Environ(), fmt.Sprintf("%s=%d %s %s %s", benchClientEnv, conc, parent, t.urls[0], t.urls[1]))
	cmd.Stderr = os.Stderr
	in, err := cmd.StdinPipe()
	if err != nil {
		tb.Fatal(err)
	}
	out, err := cmd.StdoutPipe()
	if err != nil {
		tb.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		tb.Fatal(err)
	}
	tb.Cleanup(func() {
		_ = in.Close() // the client ends at the end of its input
		if err := cmd.Wait(); err != nil {
			tb.Errorf("the benchmark's client process: %v", err)
		}
	})
	return &extClient{in: in, out: bufio.NewScanner(out)}
}

// phase runs a phase of n notifies to herald i in the client process
// and returns its wall time and the client process's CPU time.
func (c *extClient) phase(i, n int) (wall, cpu time.Duration, err error) {
	if _, err := fmt.Fprintf(c.in, "%d %d\n", i, n); err != nil {
		return 0, 0, fmt.Errorf("the client process: %w", err)
	}
	if !c.out.Scan() {
		return 0, 0, fmt.Errorf("the client process ended: %w", errors.Join(c.out.Err(), io.ErrUnexpectedEOF))
	}
	line := c.out.Text()
	if msg, ok := strings.CutPrefix(line, "error "); ok {
		return 0, 0, errors.New(msg)
	}
	var w, u int64
	if _, err := fmt.Sscan(line, &w, &u); err != nil {
		return 0, 0, fmt.Errorf("the client process answered %q: %w", line, err)
	}
	return time.Duration(w), time.Duration(u), nil
}
