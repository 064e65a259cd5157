package main

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"time"

	"github.com/nats-io/nats.go"
	"github.com/nats-io/nats.go/jetstream"

	"github.com/herald-gateway/herald/bench/internal/benchproc"
)

// instance is one server under measurement, alone on the machine with
// its own nats-server (JetStream) and its own data, for one round.
type instance struct {
	side    string // herald or aviso-server
	base    string // http://127.0.0.1:port
	cmd     *exec.Cmd
	exited  chan struct{} // closed when cmd has exited
	nats    *exec.Cmd
	logPath string
	dir     string
}

// meter returns the CPU meter of the server and its nats-server.
func (in *instance) meter() cpuMeter {
	m := cpuMeter{server: in.cmd.Process.Pid}
	if in.nats != nil && in.nats.Process != nil {
		m.nats = in.nats.Process.Pid
	}
	return m
}

// childEnv is the environment of a child process: this process's,
// without anything that would configure herald or aviso-server besides
// what the run sets (HERALD_*, AVISOSERVER_*, RUST_LOG, NATS_TOKEN), plus
// extra.
func childEnv(extra []string) []string {
	var env []string
	for _, kv := range os.Environ() {
		name, _, _ := strings.Cut(kv, "=")
		if strings.HasPrefix(name, "HERALD_") || strings.HasPrefix(name, "AVISOSERVER_") || name == "RUST_LOG" || name == "NATS_TOKEN" {
			continue
		}
		env = append(env, kv)
	}
	return append(env, extra...)
}

// startNATS starts the external nats-server binary with JetStream on a
// free loopback port and a file store under dir, and waits until its
// JetStream answers. It returns the process and its URL.
func startNATS(ctx context.Context, bin, dir string, log io.Writer) (*exec.Cmd, string, error) {
	port, err := benchproc.FreePort()
	if err != nil {
		return nil, "", err
	}
	// nats-server 2.15 allows 1,000 consumers per stream by default;
	// aviso-server opens one per watcher (herald one per stream), and
	// the consumers of a phase's watchers linger for their inactivity
	// threshold, so the limit is lifted for the 1,000-watcher fan-out.
	conf := filepath.Join(dir, "nats.conf")
	text := fmt.Sprintf("listen: \"127.0.0.1:%d\"\njetstream {\n  store_dir: %q\n  limits { default_max_consumers: -1 }\n}\n", port, filepath.Join(dir, "nats"))
	if err := os.WriteFile(conf, []byte(text), 0o600); err != nil {
		return nil, "", fmt.Errorf("nats-server config: %w", err)
	}
	cmd := exec.Command(bin, "-c", conf)
	cmd.Stdout, cmd.Stderr = log, log
	cmd.SysProcAttr = benchproc.OrphanGuard()
	cmd.Dir = dir
	if err := cmd.Start(); err != nil {
		return nil, "", fmt.Errorf("nats-server: %w", err)
	}
	url := fmt.Sprintf("nats://127.0.0.1:%d", port)
	if err := waitJetStream(ctx, url); err != nil {
		benchproc.Stop(cmd, 5*time.Second)
		return nil, "", err
	}
	return cmd, url, nil
}

// waitJetStream waits until the JetStream of the nats-server at url
// answers an account info request.
func waitJetStream(ctx context.Context, url string) error {
	deadline := time.Now().Add(time.Minute)
	for {
		err := func() error {
			nc, err := nats.Connect(url, nats.Timeout(time.Second), nats.NoReconnect())
			if err != nil {
				return err
			}
			defer nc.Close()
			js, err := jetstream.New(nc)
			if err != nil {
				return err
			}
			actx, cancel := context.WithTimeout(ctx, 2*time.Second)
			defer cancel()
			_, err = js.AccountInfo(actx)
			return err
		}()
		if err == nil {
			return nil
		}
		if time.Now().After(deadline) {
			return fmt.Errorf("nats-server at %s: JetStream never answered: %w", url, err)
		}
		if err := benchproc.Pause(ctx, 50*time.Millisecond); err != nil {
			return fmt.Errorf("nats-server at %s: %w", url, err)
		}
	}
}

// start starts side's binary on the config at configPath, with a
// nats-server of its own when the engine is JetStream, and waits until
// it answers GET /health with 200. Its output (and the nats-server's) go
// to a log file in a fresh directory under parent.
func start(ctx context.Context, side, bin, natsBin, configPath, engine, parent string) (*instance, error) {
	dir, err := os.MkdirTemp(parent, side+"-")
	if err != nil {
		return nil, err
	}
	in := &instance{side: side, dir: dir, logPath: filepath.Join(dir, "server.log")}
	logFile, err := os.Create(in.logPath)
	if err != nil {
		return nil, err
	}
	defer logFile.Close() // the children hold their own descriptors
	natsURL := ""
	if engine == "jetstream" {
		if in.nats, natsURL, err = startNATS(ctx, natsBin, dir, logFile); err != nil {
			return nil, err
		}
	}
	port, err := benchproc.FreePort()
	if err != nil {
		in.stop()
		return nil, err
	}
	in.base = fmt.Sprintf("http://127.0.0.1:%d", port)
	in.cmd = exec.Command(bin)
	in.cmd.Env = childEnv(sideEnv(configPath, port, natsURL))
	in.cmd.Dir = dir
	in.cmd.Stdout, in.cmd.Stderr = logFile, logFile
	in.cmd.SysProcAttr = benchproc.OrphanGuard()
	if err := in.cmd.Start(); err != nil {
		in.stop()
		return nil, fmt.Errorf("%s: %w", side, err)
	}
	in.exited = make(chan struct{})
	go func() { _ = in.cmd.Wait(); close(in.exited) }()
	if err := waitHealthy(ctx, in.base, in.exited); err != nil {
		in.stop()
		return nil, fmt.Errorf("%s did not start: %w\n%s", side, err, tail(in.logPath, 20))
	}
	return in, nil
}

// waitHealthy waits until base answers GET /health with 200, for at
// most a minute, failing early when the process exits.
func waitHealthy(ctx context.Context, base string, exited <-chan struct{}) error {
	deadline := time.Now().Add(time.Minute)
	client := &http.Client{Timeout: time.Second}
	for {
		resp, err := client.Get(base + "/health")
		if err == nil {
			_, _ = io.Copy(io.Discard, resp.Body)
			resp.Body.Close()
			if resp.StatusCode == http.StatusOK {
				return nil
			}
			err = fmt.Errorf("GET /health: %s", resp.Status)
		}
		select {
		case <-exited:
			return errors.New("exited before answering GET /health")
		default:
		}
		if time.Now().After(deadline) {
			return err
		}
		if err := benchproc.Pause(ctx, 50*time.Millisecond); err != nil {
			return err
		}
	}
}

// stop ends the server with SIGINT (killing it after 15 s), then its
// nats-server.
func (in *instance) stop() {
	if in.cmd != nil && in.cmd.Process != nil && in.exited != nil {
		_ = in.cmd.Process.Signal(os.Interrupt)
		select {
		case <-in.exited:
		case <-time.After(15 * time.Second):
			_ = in.cmd.Process.Kill()
			<-in.exited
		}
	}
	benchproc.Stop(in.nats, 15*time.Second)
}

// tail returns the last n lines of a file, for error messages.
func tail(path string, n int) string {
	raw, err := os.ReadFile(path)
	if err != nil {
		return ""
	}
	lines := strings.Split(strings.TrimRight(string(raw), "\n"), "\n")
	return strings.Join(lines[max(0, len(lines)-n):], "\n")
}

// openAPIVersion returns info.version of the server's OpenAPI document
// (both servers serve one at /api-docs/openapi.json), "" when it has
// none.
func openAPIVersion(base string) string {
	client := &http.Client{Timeout: 5 * time.Second}
	resp, err := client.Get(base + "/api-docs/openapi.json")
	if err != nil {
		return ""
	}
	defer resp.Body.Close()
	var doc struct {
		Info struct {
			Version string `json:"version"`
		} `json:"info"`
	}
	if resp.StatusCode != http.StatusOK || json.NewDecoder(resp.Body).Decode(&doc) != nil {
		return ""
	}
	return doc.Info.Version
}
