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
	"strconv"
	"strings"
	"syscall"
	"time"

	"herald/codec/cli"
	"herald/configs"
	"herald/handlers"
	"herald/server"
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
	level := new(slog.LevelVar)
	log := slog.New(slog.NewJSONHandler(stdout, &slog.HandlerOptions{Level: level}))
	for _, w := range cfg.Warnings() {
		log.Warn(w)
	}
	// Everything the configuration decides is checked first, then the
	// port is bound (a port in use fails before the backend starts), then
	// the backend starts.
	rt, err := server.NewRuntime(cfg, server.RuntimeOptions{Logger: log}, nil)
	if err != nil {
		fmt.Fprintf(stderr, "herald: config %s:\n%v\n", path, err)
		return 1
	}
	addr := net.JoinHostPort(cfg.Application.Host, strconv.Itoa(cfg.Application.Port))
	ln, err := net.Listen("tcp", addr)
	if err != nil {
		fmt.Fprintf(stderr, "herald: listen on %s: %v\n", addr, err)
		return 1
	}
	defer ln.Close()
	srv, err := server.New(ctx, cfg, server.Options{ConfigPath: path, Env: env, Logger: log, LogLevel: level, Version: version, Runtime: rt})
	if err != nil {
		fmt.Fprintf(stderr, "herald: %v\n", err)
		return 1
	}
	httpSrv := srv.HTTPServer()
	log.Info("herald listening", "address", ln.Addr().String(), "backend", cfg.NotificationBackend.Kind,
		"event_types", rt.Registry.Names(), "codec_statements", rt.CodecStatements, "config", path,
		"config_fingerprint", rt.Fingerprint, "version", version, "auth", cfg.Auth)
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
			_, _ = srv.Reload(ctx, handlers.ReloadOptions{Trigger: "SIGHUP"})
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
