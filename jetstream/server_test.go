package jetstream

import (
	"context"
	"fmt"
	"io"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"runtime/debug"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/nats-io/nats-server/v2/server"
)

// runServer starts an in-process nats-server with JetStream on a
// loopback port, storing in dir; mod may adjust its options.
func runServer(t testing.TB, dir string, port int, mod func(*server.Options)) *server.Server {
	t.Helper()
	s, err := tryServer(t, dir, port, mod)
	if err != nil {
		t.Fatal(err)
	}
	return s
}

// tryServer is runServer returning its failure, for a caller that can
// try again (on another port).
func tryServer(t testing.TB, dir string, port int, mod func(*server.Options)) (*server.Server, error) {
	t.Helper()
	opts := &server.Options{
		ServerName: "test-" + strconv.Itoa(port),
		Host:       "127.0.0.1",
		Port:       port,
		JetStream:  true,
		StoreDir:   dir,
		NoSigs:     true,
		NoLog:      true,
	}
	if mod != nil {
		mod(opts)
	}
	s, err := server.NewServer(opts)
	if err != nil {
		return nil, err
	}
	// Its warnings and errors go to the test's log (the reason it does
	// not get ready, for one).
	s.SetLoggerV2(&serverLog{w: newTestLogWriter(t), name: opts.ServerName}, false, false, false)
	s.Start()
	if !s.ReadyForConnections(wait) {
		s.Shutdown()
		s.WaitForShutdown()
		return nil, fmt.Errorf("nats-server %s (port %d) not ready", opts.ServerName, port)
	}
	t.Cleanup(func() {
		s.Shutdown()
		s.WaitForShutdown()
	})
	return s, nil
}

// stopServer shuts an in-process server down and waits for it.
func stopServer(s *server.Server) {
	s.Shutdown()
	s.WaitForShutdown()
}

// natsServerBinary returns the path of a nats-server binary of the version
// herald depends on, built from the module cache on first use and kept
// under the user cache directory.
func natsServerBinary(t testing.TB) string {
	t.Helper()
	// The version herald builds with; test binaries do not always carry
	// their dependencies' versions, so ask the go command.
	version := "unknown"
	if out, err := exec.Command("go", "list", "-m", "-f", "{{.Version}}", "github.com/nats-io/nats-server/v2").Output(); err == nil {
		version = strings.TrimSpace(string(out))
	} else if bi, ok := debug.ReadBuildInfo(); ok {
		for _, d := range bi.Deps {
			if d.Path == "github.com/nats-io/nats-server/v2" {
				version = d.Version
			}
		}
	}
	cache, err := os.UserCacheDir()
	if err != nil {
		cache = os.TempDir()
	}
	dir := filepath.Join(cache, "herald-test")
	bin := filepath.Join(dir, "nats-server-"+version)
	if _, err := os.Stat(bin); err == nil {
		return bin
	}
	if err := os.MkdirAll(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	tmp := fmt.Sprintf("%s.%d.tmp", bin, os.Getpid())
	cmd := exec.Command("go", "build", "-o", tmp, "github.com/nats-io/nats-server/v2")
	if out, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("building nats-server %s for the fault test: %v\n%s", version, err, out)
	}
	if err := os.Rename(tmp, bin); err != nil {
		t.Fatal(err)
	}
	return bin
}

// process is a nats-server running as a separate process.
type process struct {
	t    testing.TB
	bin  string
	conf string
	port int
	cmd  *exec.Cmd
	done chan struct{}
}

// startProcess runs nats-server from bin with JetStream storing in dir,
// with the default sync settings, on a loopback port.
func startProcess(t testing.TB, bin, dir string, port int) *process {
	t.Helper()
	conf := filepath.Join(t.TempDir(), "nats.conf")
	text := fmt.Sprintf("listen: \"127.0.0.1:%d\"\nserver_name: herald_fault\njetstream {\n  store_dir: %q\n}\n", port, dir)
	if err := os.WriteFile(conf, []byte(text), 0o644); err != nil {
		t.Fatal(err)
	}
	p := &process{t: t, bin: bin, conf: conf, port: port}
	p.start()
	t.Cleanup(p.kill)
	return p
}

// start runs the process and waits until it accepts connections.
func (p *process) start() {
	p.t.Helper()
	p.cmd = exec.Command(p.bin, "-c", p.conf)
	if err := p.cmd.Start(); err != nil {
		p.t.Fatalf("start nats-server: %v", err)
	}
	done := make(chan struct{})
	p.done = done
	go func(cmd *exec.Cmd) {
		_ = cmd.Wait()
		close(done)
	}(p.cmd)
	deadline := time.Now().Add(wait)
	for {
		c, err := net.DialTimeout("tcp", "127.0.0.1:"+strconv.Itoa(p.port), time.Second)
		if err == nil {
			c.Close()
			return
		}
		select {
		case <-p.done:
			p.t.Fatalf("nats-server exited at startup")
		case <-time.After(20 * time.Millisecond): // polling a condition with a deadline
		}
		if time.Now().After(deadline) {
			p.t.Fatalf("nats-server not listening on port %d: %v", p.port, err)
		}
	}
}

// kill stops the process with SIGKILL and waits for it.
func (p *process) kill() {
	if p.cmd == nil || p.cmd.Process == nil {
		return
	}
	select {
	case <-p.done:
		return
	default:
	}
	_ = p.cmd.Process.Kill()
	<-p.done
}

// urlOptions are test-friendly options for an external server: short
// timeouts, quick retries, unlimited reconnection; mod may adjust them.
func urlOptions(t testing.TB, url string, mod func(*Options)) Options {
	o := Options{
		URL:              url,
		ConnectAttempts:  3,
		ConnectTimeout:   2 * time.Second,
		ReconnectDelay:   50 * time.Millisecond,
		MaxReconnects:    -1,
		PublishAttempts:  4,
		PublishRetryBase: 20 * time.Millisecond,
		PublishTimeout:   3 * time.Second,
		RequestTimeout:   2 * time.Second,
		FeedHeartbeat:    500 * time.Millisecond,
		Defaults:         StreamPolicy{MaxMsgsPerSubject: -1},
		Streams:          []StreamSpec{{Base: "mars", EventType: "mars"}},
		Logger:           testLogger(t),
	}
	if mod != nil {
		mod(&o)
	}
	return o
}

// openURL opens an engine with urlOptions, closed when the test ends.
func openURL(t testing.TB, url string, mod func(*Options)) *Engine {
	t.Helper()
	o := urlOptions(t, url, mod)
	ctx, cancel := context.WithTimeout(context.Background(), wait)
	defer cancel()
	e, err := Open(ctx, o)
	if err != nil {
		t.Fatalf("Open(%s): %v", url, err)
	}
	t.Cleanup(func() { _ = e.Close() })
	return e
}

// serverLog is a nats-server logger writing its warnings and errors to a
// test's log; notices, debug and trace lines are dropped.
type serverLog struct {
	w    io.Writer
	name string
}

func (l *serverLog) line(level, format string, v []any) {
	fmt.Fprintf(l.w, "nats-server %s: %s: %s\n", l.name, level, fmt.Sprintf(format, v...))
}

func (l *serverLog) Noticef(string, ...any)         {}
func (l *serverLog) Debugf(string, ...any)          {}
func (l *serverLog) Tracef(string, ...any)          {}
func (l *serverLog) Warnf(format string, v ...any)  { l.line("warning", format, v) }
func (l *serverLog) Errorf(format string, v ...any) { l.line("error", format, v) }
func (l *serverLog) Fatalf(format string, v ...any) { l.line("fatal", format, v) }
