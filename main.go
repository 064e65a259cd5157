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
	"net/http"
	"os"
	"os/signal"
	"strconv"
	"strings"
	"syscall"
	"time"

	"herald/api"
	"herald/codec/catalog"
	"herald/codec/cli"
	"herald/codec/ddl"
	"herald/codec/resource"
	"herald/configs"
	"herald/engine"
	"herald/handlers"
	"herald/jetstream"
	"herald/notification"
)

// version is the server version shown on the homepage.
const version = "0.1.0"

const usage = `herald: an Aviso-compatible notification gateway.

Usage:
  herald [serve] [--config FILE]   run the server (the default command)
  herald codec COMMAND ...         check codec definitions, decode and encode
                                   payloads (herald codec --help)
  herald help                      show this help
  herald version                   print the version

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
	if len(args) > 0 && !strings.HasPrefix(args[0], "-") {
		cmd, args = args[0], args[1:]
	}
	switch cmd {
	case "serve":
		return serve(ctx, args, env, stdout, stderr, ready)
	case "codec":
		return cli.Main(args, os.Stdin, stdout, stderr)
	case "help":
		serveFlags(stdout).Usage()
		return 0
	case "version":
		fmt.Fprintln(stdout, "herald", version)
		return 0
	default:
		fmt.Fprintf(stderr, "herald: unknown command %q\n\n", cmd)
		serveFlags(stderr).Usage()
		return 2
	}
}

func serveFlags(out io.Writer) *flag.FlagSet {
	fs := flag.NewFlagSet("herald serve", flag.ContinueOnError)
	fs.SetOutput(out)
	fs.String("config", "", "path of the config `FILE` (default: $HERALD_CONFIG_FILE, $AVISOSERVER_CONFIG_FILE, configs/config.yaml)")
	fs.Usage = func() {
		fmt.Fprint(out, usage)
		fs.PrintDefaults()
	}
	return fs
}

func serve(ctx context.Context, args, env []string, stdout, stderr io.Writer, ready chan<- net.Addr) int {
	fs := serveFlags(stderr)
	if err := fs.Parse(args); err != nil {
		if errors.Is(err, flag.ErrHelp) {
			return 0
		}
		return 2
	}
	if fs.NArg() > 0 {
		fmt.Fprintf(stderr, "herald: unexpected argument %q\n", fs.Arg(0))
		return 2
	}
	path, err := configs.ResolvePath(fs.Lookup("config").Value.String(), env)
	if err != nil {
		fmt.Fprintf(stderr, "herald: %v\n", err)
		return 1
	}
	cfg, err := configs.Load(path, env)
	if err != nil {
		fmt.Fprintf(stderr, "herald: config %s:\n%v\n", path, err)
		return 1
	}
	reg, err := notification.NewRegistry(cfg)
	if err != nil {
		fmt.Fprintf(stderr, "herald: config %s:\n%v\n", path, err)
		return 1
	}
	codecs, err := loadCodecs(cfg.Codecs)
	if err != nil {
		fmt.Fprintf(stderr, "herald: config %s: codecs: %v\n", path, err)
		return 1
	}
	log := newLogger(cfg.Logging, stdout)
	if !reg.Strict() && len(reg.Names()) > 0 {
		log.Warn("notification_schema_strict is false: unknown event types are accepted through the generic fallback")
	}

	eng, err := newEngine(ctx, cfg, log)
	if err != nil {
		fmt.Fprintf(stderr, "herald: backend: %v\n", err)
		return 1
	}
	defer eng.Close() // a no-op after drain

	auth, err := api.NewAuthenticator(api.AuthOptions{Config: cfg.Auth, Logger: log})
	if err != nil {
		fmt.Fprintf(stderr, "herald: config %s:\n%v\n", path, err)
		return 1
	}
	var ecpds *handlers.ECPDS
	if cfg.ECPDS != nil {
		if ecpds, err = handlers.NewECPDS(handlers.ECPDSOptions{Config: *cfg.ECPDS, Logger: log}); err != nil {
			fmt.Fprintf(stderr, "herald: config %s:\n%v\n", path, err)
			return 1
		}
		defer ecpds.Close()
	}
	cors := api.NewCORS(cfg.Application.CORS)
	h := handlers.New(handlers.Options{
		Registry:        reg,
		Engine:          eng,
		Watch:           cfg.WatchEndpoint,
		MaxBodyBytes:    cfg.Application.MaxBodyBytes,
		ReadBodyTimeout: time.Duration(cfg.Application.ReadBodyTimeoutSec) * time.Second,
		StaticFilesPath: cfg.Application.StaticFilesPath,
		Version:         version,
		Logger:          log,
		Auth:            auth.Policy(),
		ECPDS:           ecpds,
		CORSManaged:     cors != nil,
	})
	limits := api.NewStreamLimiter(api.StreamLimitOptions{
		PerUser:       cfg.WatchEndpoint.MaxStreamsPerUser,
		PerClient:     cfg.WatchEndpoint.MaxStreamsPerClient,
		AddressHeader: cfg.Application.ClientAddressHeader,
	})
	srv := &http.Server{
		Handler:           api.NewRouter(api.Options{Handlers: h, Logger: log, Auth: auth, CORS: cors, Limits: limits}),
		ReadHeaderTimeout: time.Duration(cfg.Application.ReadHeaderTimeoutSec) * time.Second,
		IdleTimeout:       2 * time.Minute,
		ConnContext:       handlers.ConnContext,
		ErrorLog:          slog.NewLogLogger(log.Handler(), slog.LevelWarn),
	}
	addr := net.JoinHostPort(cfg.Application.Host, strconv.Itoa(cfg.Application.Port))
	ln, err := net.Listen("tcp", addr)
	if err != nil {
		fmt.Fprintf(stderr, "herald: listen on %s: %v\n", addr, err)
		return 1
	}
	log.Info("herald listening", "address", ln.Addr().String(), "backend", cfg.NotificationBackend.Kind,
		"event_types", reg.Names(), "codec_statements", codecs, "config", path, "version", version, "auth", cfg.Auth)
	served := make(chan error, 1)
	go func() { served <- srv.Serve(ln) }()
	if ready != nil {
		ready <- ln.Addr()
	}

	select {
	case err := <-served:
		log.Error("server stopped", "error", err)
		return 1
	case <-ctx.Done():
	}
	grace := time.Duration(cfg.Application.ShutdownGraceSec) * time.Second
	log.Info("shutting down", "grace", grace.String())
	drain(log, srv, h, eng, grace)
	log.Info("stopped")
	return 0
}

// engineShutdown is implemented by engines whose Close can be bounded by
// a deadline (the JetStream engine stopping its embedded server).
type engineShutdown interface {
	Shutdown(ctx context.Context) error
}

// drain stops the server within grace, the backend included: open
// streams are told to end (server_shutdown), open requests get the grace
// minus the time reserved for the backend, connections still open then
// are closed, and the backend gets what is left.
func drain(log *slog.Logger, srv *http.Server, h *handlers.Handlers, eng engine.Engine, grace time.Duration) {
	deadline := time.Now().Add(grace)
	h.Shutdown()
	// The backend needs a moment to stop (the embedded nats-server flushes
	// its store): keep a quarter of the grace for it, at most 2 s.
	reserve := min(grace/4, 2*time.Second)
	sctx, cancel := context.WithDeadline(context.Background(), deadline.Add(-reserve))
	err := srv.Shutdown(sctx)
	cancel()
	if err != nil {
		log.Warn("graceful drain incomplete; closing remaining connections", "error", err)
		_ = srv.Close()
	}
	ectx, cancel := context.WithDeadline(context.Background(), deadline)
	defer cancel()
	if es, ok := eng.(engineShutdown); ok {
		err = es.Shutdown(ectx)
	} else {
		err = eng.Close()
	}
	if err != nil {
		log.Warn("backend shutdown incomplete", "error", err)
	}
}

// newEngine builds the configured backend.
func newEngine(ctx context.Context, cfg *configs.Config, log *slog.Logger) (engine.Engine, error) {
	switch cfg.NotificationBackend.Kind {
	case configs.BackendInMemory:
		m := cfg.NotificationBackend.InMemory
		return engine.NewMemory(engine.MemoryOptions{MaxHistoryPerTopic: m.MaxHistoryPerTopic, MaxTopics: m.MaxTopics}), nil
	case configs.BackendJetStream:
		opts, err := jetstream.OptionsFromConfig(cfg)
		if err != nil {
			return nil, err
		}
		opts.Logger = log.With("component", "jetstream")
		return jetstream.Open(ctx, opts)
	default:
		return nil, fmt.Errorf("notification_backend.kind %q is not available in this build", cfg.NotificationBackend.Kind)
	}
}

// loadCodecs compiles the codec definitions of the `codecs` block with
// their resources, so that a definition that does not compile stops herald
// before the port is bound. It returns how many statements were applied.
// Paths are relative to the working directory, like data_dir.
func loadCodecs(c *configs.Codecs) (int, error) {
	if c == nil {
		return 0, nil
	}
	set := resource.NewSet()
	for _, r := range c.Resources {
		files, err := resource.LoadDir(r.Dir)
		if err == nil {
			err = set.Add(r.Name, max(r.Version, 1), files)
		}
		if err != nil {
			return 0, fmt.Errorf("resource %s@%d (%s): %w", r.Name, max(r.Version, 1), r.Dir, err)
		}
	}
	src, err := os.ReadFile(c.Definitions)
	if err != nil {
		return 0, fmt.Errorf("reading definitions: %w", err)
	}
	results, err := catalog.NewWithResources(set).Exec(string(src))
	if err != nil {
		var de *ddl.Error
		if errors.As(err, &de) {
			return 0, fmt.Errorf("%s:%d:%d: %s", c.Definitions, de.Pos.Line, de.Pos.Col, de.Msg)
		}
		return 0, fmt.Errorf("%s: %w", c.Definitions, err)
	}
	return len(results), nil
}

// newLogger returns the JSON logger at the configured level.
func newLogger(cfg configs.Logging, out io.Writer) *slog.Logger {
	level := slog.LevelInfo
	switch strings.ToLower(strings.TrimSpace(cfg.Level)) {
	case "trace", "debug":
		level = slog.LevelDebug
	case "warn", "warning":
		level = slog.LevelWarn
	case "error":
		level = slog.LevelError
	}
	return slog.New(slog.NewJSONHandler(out, &slog.HandlerOptions{Level: level}))
}
