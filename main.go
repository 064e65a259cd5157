// Command herald is a schema-driven notification gateway compatible with
// ECMWF's aviso-server. This file holds only the command line, the config
// load, the wiring of the packages, signal handling and the graceful drain.
package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"log/slog"
	"net"
	"os"
	"os/signal"
	"runtime/debug"
	"slices"
	"sort"
	"strconv"
	"strings"
	"syscall"
	"time"

	clientcli "github.com/herald-gateway/herald/client/cli"
	"github.com/herald-gateway/herald/codec/catalog"
	"github.com/herald-gateway/herald/codec/cli"
	"github.com/herald-gateway/herald/codec/ddl"
	"github.com/herald-gateway/herald/configs"
	"github.com/herald-gateway/herald/internal/logwriter"
	"github.com/herald-gateway/herald/server"
	"github.com/herald-gateway/herald/tracing"
)

// version is herald's version: the `version` field of the startup log,
// the homepage's, and what `herald --version` prints. Release builds set
// it with -ldflags "-X main.version=1.2.3"; otherwise it is read from the
// module's build information (versionFromBuild).
var version string

// heraldVersion is herald's version: the stamped one, else the build's.
func heraldVersion() string {
	if version != "" {
		return version
	}
	return versionFromBuild(debug.ReadBuildInfo)
}

// versionFromBuild is the version of an unstamped build: the module
// version `go install MODULE@v1.2.3` records, else "devel" with the VCS
// revision `go build` records in a checkout (its first 12 characters,
// "-modified" when the tree had changes), else "devel".
func versionFromBuild(read func() (*debug.BuildInfo, bool)) string {
	bi, ok := read()
	if !ok {
		return "devel"
	}
	if v := bi.Main.Version; v != "" && v != "(devel)" {
		return v
	}
	v := "devel"
	var rev string
	var modified bool
	for _, s := range bi.Settings {
		switch s.Key {
		case "vcs.revision":
			rev = s.Value
		case "vcs.modified":
			modified = s.Value == "true"
		}
	}
	if rev != "" {
		v += "+" + rev[:min(12, len(rev))]
		if modified {
			v += "-modified"
		}
	}
	return v
}

const usage = `herald: an Aviso-compatible notification gateway.

Usage:
  herald [serve] [--config FILE]   run the server (the default command)
  herald check-config [--config FILE]
                                   check the config as startup does, without
                                   starting; print its event types and codecs
                                   (exit 0), or the problems (exit 1)
  herald codec COMMAND ...         check codec definitions, decode and encode
                                   payloads (herald codec --help)
  herald help                      show this help
` + clientcli.Usage + `
  herald version, herald --version print the version

The config file is an aviso-server config. It is found in this order:
--config FILE, $HERALD_CONFIG_FILE, $AVISOSERVER_CONFIG_FILE, configs/config.yaml.
Single values are overridden with HERALD_A__B=value or AVISOSERVER_A__B=value
(for example HERALD_APPLICATION__PORT=9000).

Serve flags:
`

func main() {
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	os.Exit(run(ctx, os.Args[1:], os.Environ(), os.Stdout, os.Stderr, nil))
}

// run executes one command line and returns the exit code. ready, when not
// nil, receives the listening address once the server accepts requests.
func run(ctx context.Context, args, env []string, stdout, stderr io.Writer, ready chan<- net.Addr) int {
	cmd := "serve"
	if i := commandIndex(args); i >= 0 {
		// Flags given before the command (herald --url U watch ...) are
		// the command's, as if given after it.
		cmd = args[i]
		args = append(append([]string(nil), args[:i]...), args[i+1:]...)
	}
	switch cmd {
	case "serve":
		return serve(ctx, args, env, stdout, stderr, ready)
	case "check-config":
		return checkConfig(args, env, stdout, stderr)
	case "codec":
		return cli.Main(args, os.Stdin, stdout, stderr)
	case "notify", "watch", "replay", "schema", "session":
		return clientcli.Main(ctx, cmd, args, env, os.Stdin, stdout, stderr)
	case "help":
		serveFlags(stdout).Usage()
		return 0
	case "version":
		fmt.Fprintln(stdout, "herald", heraldVersion())
		return 0
	default:
		fmt.Fprintf(stderr, "herald: unknown command %q\n\n", cmd)
		serveFlags(stderr).Usage()
		return 2
	}
}

// commandIndex returns the position of the command name in args: the
// first word that is not a flag or a flag's value, -1 when there is none
// (serve). Value flags are --config and the client's --url and --token,
// unless given as --flag=value.
func commandIndex(args []string) int {
	valueFlags := append([]string{"config"}, clientcli.ValueFlags...)
	for i := 0; i < len(args); i++ {
		a := args[i]
		if a == "--" {
			return -1
		}
		if !strings.HasPrefix(a, "-") {
			return i
		}
		name := strings.TrimLeft(a, "-")
		if !strings.Contains(name, "=") && slices.Contains(valueFlags, name) {
			i++ // its value
		}
	}
	return -1
}

func serveFlags(out io.Writer) *flag.FlagSet {
	fs := configFlags("herald serve", out)
	fs.Bool("version", false, "print the version and exit")
	fs.Usage = func() {
		fmt.Fprint(out, usage)
		fs.PrintDefaults()
	}
	return fs
}

// configFlags is the flag set of a command that reads the config file.
func configFlags(name string, out io.Writer) *flag.FlagSet {
	fs := flag.NewFlagSet(name, flag.ContinueOnError)
	fs.SetOutput(out)
	fs.String("config", "", "path of the config `FILE` (default: $HERALD_CONFIG_FILE, $AVISOSERVER_CONFIG_FILE, configs/config.yaml)")
	return fs
}

// parseFlags parses a command's flags; it returns the exit code when the
// command must stop (0 for -help, 2 for a usage error).
func parseFlags(fs *flag.FlagSet, args []string, stderr io.Writer) (int, bool) {
	if err := fs.Parse(args); err != nil {
		if errors.Is(err, flag.ErrHelp) {
			return 0, false
		}
		return 2, false
	}
	if fs.NArg() > 0 {
		fmt.Fprintf(stderr, "herald: unexpected argument %q\n", fs.Arg(0))
		return 2, false
	}
	return 0, true
}

// loadConfig finds, loads and validates the configuration file as
// startup does before anything else: unknown keys, types and every rule
// of the file. A problem is written to stderr with startup's messages
// and ok is false.
func loadConfig(configFlag string, env []string, stderr io.Writer) (path string, cfg *configs.Config, ok bool) {
	path, err := configs.ResolvePath(configFlag, env)
	if err != nil {
		fmt.Fprintf(stderr, "herald: %v\n", err)
		return path, nil, false
	}
	cfg, err = configs.Load(path, env)
	if err != nil {
		fmt.Fprintf(stderr, "herald: config %s:\n%v\n", path, err)
		return path, nil, false
	}
	return path, cfg, true
}

// loadRuntime builds the Runtime of a loaded configuration as startup
// does before it binds the port: every schema, the codecs block,
// authentication and ECPDS. A problem is written to stderr with
// startup's messages and ok is false.
func loadRuntime(path string, cfg *configs.Config, log *slog.Logger, stderr io.Writer) (rt *server.Runtime, ok bool) {
	rt, err := server.NewRuntime(cfg, server.RuntimeOptions{Logger: log}, nil)
	if err != nil {
		fmt.Fprintf(stderr, "herald: config %s:\n%v\n", path, err)
		return nil, false
	}
	return rt, true
}

// checkConfig is `herald check-config`: everything startup checks before
// it binds the port, and nothing started. A valid config prints one
// line saying so (with the fingerprint the startup log shows), then one
// line per event type and one per codec, sorted, and exits 0; warnings
// go to stderr. An invalid one prints startup's messages to stderr and
// exits 1.
func checkConfig(args, env []string, stdout, stderr io.Writer) int {
	fs := configFlags("herald check-config", stderr)
	fs.Usage = func() {
		fmt.Fprint(stderr, "Usage: herald check-config [--config FILE]\n\n"+
			"Checks the config as startup does, without binding a port or starting the backend,\n"+
			"and prints its event types and codecs (exit 0), or the problems (exit 1).\n\n")
		fs.PrintDefaults()
	}
	if code, ok := parseFlags(fs, args, stderr); !ok {
		return code
	}
	path, cfg, ok := loadConfig(fs.Lookup("config").Value.String(), env, stderr)
	if !ok {
		return 1
	}
	for _, w := range cfg.Warnings() {
		fmt.Fprintf(stderr, "herald: warning: %s\n", w)
	}
	rt, ok := loadRuntime(path, cfg, nil, stderr)
	if !ok {
		return 1
	}
	fmt.Fprintf(stdout, "herald: config %s is valid (fingerprint %s)\n", path, rt.Fingerprint)
	for _, name := range rt.Registry.Names() {
		fmt.Fprintf(stdout, "event_type %s\n", name)
	}
	for _, line := range codecLines(rt.Codecs) {
		fmt.Fprintln(stdout, line)
	}
	return 0
}

// codecLines describes the codecs of a catalog, one line each sorted by
// name: "codec NAME FORMAT SCHEMA" (the wire format and the internal
// schema it decodes into).
func codecLines(cat *catalog.Catalog) []string {
	if cat == nil {
		return nil
	}
	var lines []string
	for _, k := range cat.Keys() {
		if k.Kind != ddl.KindCodec {
			continue
		}
		if c, ok := cat.Codec(k.Name); ok {
			lines = append(lines, fmt.Sprintf("codec %s %s %s", c.Name, c.Format, c.Schema))
		}
	}
	sort.Strings(lines)
	return lines
}

func serve(ctx context.Context, args, env []string, stdout, stderr io.Writer, ready chan<- net.Addr) int {
	fs := serveFlags(stderr)
	if code, ok := parseFlags(fs, args, stderr); !ok {
		return code
	}
	if fs.Lookup("version").Value.String() == "true" {
		fmt.Fprintln(stdout, "herald", heraldVersion())
		return 0
	}
	// Everything the configuration decides is checked first, then the
	// log is set up (stdout, and the OTLP export when logging.otlp asks
	// for it), then the port is bound (a port in use fails before the
	// backend starts), then the backend starts.
	path, cfg, ok := loadConfig(fs.Lookup("config").Value.String(), env, stderr)
	if !ok {
		return 1
	}
	level := new(slog.LevelVar)
	// The log goes through a bounded buffer written by one goroutine: a
	// request pays for copying its access log line, not for a write
	// system call under the handler's lock. Close (deferred) writes what
	// is buffered before serve returns; lines dropped because the output
	// did not keep up are counted and said in the log.
	var log *slog.Logger
	logOut := logwriter.New(stdout, logwriter.Options{Dropped: func(n uint64) {
		log.Warn("log lines dropped: the log output did not keep up", "dropped", n)
	}})
	defer logOut.Close()
	// stdout gets every record with the secrets of its values hidden
	// (tracing.ReplaceAttr); the OTLP export, when on, gets the same
	// records except those that carry a secret.
	hopts := &slog.HandlerOptions{Level: level, ReplaceAttr: tracing.ReplaceAttr}
	var stdoutLog slog.Handler = slog.NewJSONHandler(logOut, hopts)
	if cfg.Logging.Format == configs.LogFormatText {
		stdoutLog = slog.NewTextHandler(logOut, hopts)
	}
	tel, err := newTelemetry(ctx, cfg, env, slog.New(stdoutLog).With("component", "otlp"))
	if err != nil {
		fmt.Fprintf(stderr, "herald: %v\n", err)
		return 1
	}
	log = slog.New(tel.Handler(stdoutLog, level))
	// Runs before logOut.Close: the records up to "stopped" are exported,
	// and what the flush has to say reaches stdout.
	defer flushTelemetry(tel, slog.New(stdoutLog))
	for _, w := range cfg.Warnings() {
		log.Warn(w)
	}
	rt, ok := loadRuntime(path, cfg, log, stderr)
	if !ok {
		return 1
	}
	cfg = rt.Config
	addr := net.JoinHostPort(cfg.Application.Host, strconv.Itoa(cfg.Application.Port))
	ln, err := net.Listen("tcp", addr)
	if err != nil {
		fmt.Fprintf(stderr, "herald: listen on %s: %v\n", addr, err)
		return 1
	}
	defer ln.Close()
	mln, err := server.ListenMetrics(cfg)
	if err != nil {
		fmt.Fprintf(stderr, "herald: %v\n", err)
		return 1
	}
	srv, err := server.New(ctx, cfg, server.Options{ConfigPath: path, Env: env, Logger: log, LogLevel: level, Version: heraldVersion(), Runtime: rt,
		MetricsListener: mln, OTLP: tel, Tracer: tel.Tracer()})
	if err != nil {
		fmt.Fprintf(stderr, "herald: %v\n", err)
		return 1
	}
	httpSrv := srv.HTTPServer()
	log.Info("herald listening", "address", ln.Addr().String(), "backend", cfg.NotificationBackend.Kind,
		"event_types", rt.Registry.Names(), "codec_statements", rt.CodecStatements, "config", path,
		"config_fingerprint", rt.Fingerprint, "version", heraldVersion(), "auth", cfg.Auth, "log_export", logExport(cfg))
	served := make(chan error, 1)
	go func() { served <- httpSrv.Serve(ln) }()
	if ready != nil {
		ready <- ln.Addr()
	}

	hup := make(chan os.Signal, 1)
	signal.Notify(hup, syscall.SIGHUP)
	defer signal.Stop(hup)
	for {
		select {
		case err := <-served:
			log.Error("server stopped", "error", err)
			srv.Drain(nil, time.Second)
			return 1
		case <-hup:
			// Errors are logged by Reload; the running configuration stays.
			_, _ = srv.Reload(ctx, server.ReloadOptions{Trigger: "SIGHUP"})
			continue
		case <-ctx.Done():
		}
		break
	}
	grace := time.Duration(srv.Runtime().Config.Application.ShutdownGraceSec) * time.Second
	log.Info("shutting down", "grace", grace.String())
	srv.Drain(httpSrv, grace)
	log.Info("stopped")
	return 0
}

// otlpFlushTimeout bounds the export of the last log records at
// shutdown: a collector that is down does not hold the exit longer.
const otlpFlushTimeout = 5 * time.Second

// newTelemetry sets up the OpenTelemetry pipeline of cfg: the log's
// export over OTLP when logging.otlp is enabled, and the tracer with its
// span export when tracing is. diag receives the
// export's own problems and must write to stdout only.
func newTelemetry(ctx context.Context, cfg *configs.Config, env []string, diag *slog.Logger) (*tracing.Telemetry, error) {
	opts := tracing.Options{Version: heraldVersion(), Env: env, Diagnostics: diag}
	if e, ok := cfg.Logging.Export(); ok {
		opts.Logs = &tracing.LogExport{Protocol: e.Protocol, URL: e.URL}
	}
	if t := cfg.Tracing; t.On() {
		opts.Traces = &tracing.TraceExport{Protocol: t.Protocol, URL: t.ExportURL(), SampleRatio: t.SampleRatio, MaxQueueSize: t.MaxQueueSize}
	}
	return tracing.New(ctx, opts)
}

// flushTelemetry exports the records still queued for the collector,
// for up to otlpFlushTimeout, and logs to stdout when it cannot.
func flushTelemetry(tel *tracing.Telemetry, stdout *slog.Logger) {
	ctx, cancel := context.WithTimeout(context.Background(), otlpFlushTimeout)
	defer cancel()
	if err := tel.Shutdown(ctx); err != nil {
		stdout.Warn("OTLP export: the last records or spans may be lost", "error", err.Error())
	}
}

// logExport describes the log's OTLP export for the startup line:
// "off", or the protocol and URL.
func logExport(cfg *configs.Config) string {
	e, ok := cfg.Logging.Export()
	if !ok {
		return "off"
	}
	return "otlp " + e.Protocol + " " + e.URL
}
