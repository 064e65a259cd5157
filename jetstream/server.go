package jetstream

import (
	"context"
	"fmt"
	"log/slog"
	"net"
	"os"
	"strconv"
	"time"

	"github.com/nats-io/nats-server/v2/server"
)

// embeddedReadyTimeout bounds the embedded server's startup (JetStream
// recovers its streams from disk before it accepts clients).
const embeddedReadyTimeout = 2 * time.Minute

// embeddedMaxControlLine is the embedded server's max_control_line: the
// longest protocol line (PUB/HPUB/SUB with its subject and reply) it
// accepts before it drops the connection with "maximum control line
// exceeded". nats-server's default is 4,096 bytes. herald's own longest
// lines stay well under that (a publish: at most maxSubjectLen + about
// 50 bytes; a consumer creation: about 60 bytes plus a stream name of at
// most 255, its filter travelling in the request body), so the default
// would do; 16 KiB is headroom against a line herald did not foresee,
// at no cost (the server allocates only what a line needs, and the limit
// is per line, not per connection). An external server keeps its own
// setting, which is why herald's limits are sized for 4,096. A line
// over the limit still only costs a reconnection: the engine re-dials a
// connection the server dropped.
const embeddedMaxControlLine = 16 << 10

// startEmbedded starts the in-process nats-server: JetStream with a file
// store under o.DataDir, no network listener unless o.Listen names a
// loopback address, sync-always when asked, the token as its only
// credential when one is set, and its logs sent to log. It first takes
// the data directory's lock (lockDataDir), which the caller releases by
// closing the returned file once the server has shut down; a directory
// another herald holds is refused, naming its pid.
func startEmbedded(o EmbeddedOptions, token string, log *slog.Logger) (_ *server.Server, lock *os.File, err error) {
	if err := os.MkdirAll(o.DataDir, 0o750); err != nil {
		return nil, nil, fmt.Errorf("embedded nats-server: data directory %s: %w", o.DataDir, err)
	}
	if lock, err = lockDataDir(o.DataDir); err != nil {
		return nil, nil, fmt.Errorf("embedded nats-server: %w", err)
	}
	defer func() {
		if err != nil {
			_ = lock.Close()
		}
	}()
	s, err := newEmbedded(o, token, log)
	return s, lock, err
}

// newEmbedded starts the server once its data directory is locked.
func newEmbedded(o EmbeddedOptions, token string, log *slog.Logger) (*server.Server, error) {
	opts := &server.Options{
		ServerName:    o.ServerName,
		JetStream:     true,
		StoreDir:      o.DataDir,
		SyncAlways:    o.SyncAlways,
		DontListen:    o.Listen == "",
		NoSigs:        true,
		Authorization: token,
		// Explicit, rather than the server's default of 4,096 bytes.
		MaxControlLine: embeddedMaxControlLine,
	}
	if o.Listen != "" {
		host, port, err := net.SplitHostPort(o.Listen)
		if err != nil {
			return nil, fmt.Errorf("embedded nats-server: listen address %q: %w", o.Listen, err)
		}
		p, err := strconv.Atoi(port)
		if err != nil {
			return nil, fmt.Errorf("embedded nats-server: listen address %q: port: %w", o.Listen, err)
		}
		if p == 0 {
			p = server.RANDOM_PORT // ":0" means any free port, as for net.Listen
		}
		opts.Host, opts.Port = host, p
	} else {
		opts.Port = server.RANDOM_PORT // unused: DontListen
	}
	s, err := server.NewServer(opts)
	if err != nil {
		return nil, fmt.Errorf("embedded nats-server (data directory %s): %w", o.DataDir, err)
	}
	s.SetLoggerV2(&serverLogger{log: log.With("component", "nats-server")}, false, false, false)
	s.Start()
	if !s.ReadyForConnections(embeddedReadyTimeout) {
		s.Shutdown()
		s.WaitForShutdown()
		return nil, fmt.Errorf("embedded nats-server (data directory %s) not ready after %s", o.DataDir, embeddedReadyTimeout)
	}
	if !s.JetStreamEnabled() {
		s.Shutdown()
		s.WaitForShutdown()
		return nil, fmt.Errorf("embedded nats-server (data directory %s): JetStream did not start; see the nats-server log lines", o.DataDir)
	}
	if o.Listen != "" {
		log.Info("embedded nats-server accepts NATS clients", "url", s.ClientURL())
	}
	return s, nil
}

// serverLogger sends nats-server's log lines to slog: notices at debug
// level (the server is chatty at startup), warnings and errors as such.
type serverLogger struct {
	log *slog.Logger
}

func (l *serverLogger) logf(level slog.Level, format string, v []any) {
	if !l.log.Enabled(context.Background(), level) {
		return
	}
	l.log.Log(context.Background(), level, fmt.Sprintf(format, v...))
}

// Noticef implements server.Logger.
func (l *serverLogger) Noticef(format string, v ...any) { l.logf(slog.LevelDebug, format, v) }

// Warnf implements server.Logger.
func (l *serverLogger) Warnf(format string, v ...any) { l.logf(slog.LevelWarn, format, v) }

// Fatalf implements server.Logger.
func (l *serverLogger) Fatalf(format string, v ...any) { l.logf(slog.LevelError, format, v) }

// Errorf implements server.Logger.
func (l *serverLogger) Errorf(format string, v ...any) { l.logf(slog.LevelError, format, v) }

// Debugf implements server.Logger.
func (l *serverLogger) Debugf(format string, v ...any) { l.logf(slog.LevelDebug-4, format, v) }

// Tracef implements server.Logger.
func (l *serverLogger) Tracef(format string, v ...any) { l.logf(slog.LevelDebug-8, format, v) }
