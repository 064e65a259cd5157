// Package server assembles herald: a Runtime (the registry of schemas,
// the codec catalog, authentication, CORS, ECPDS, limits and the
// handlers' settings) built and validated as a whole from a
// configs.Config, the engine, the handlers and the router, and a Server
// that runs them and swaps in a new Runtime when the configuration is
// reloaded. main, the load tools and the tests all build herald through
// it: one wiring, not four.
//
// It is the only package that reads the raw configuration structs for
// running code: every other package receives its own option types.
package server

import (
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"net/http"
	"os"
	"reflect"
	"sort"
	"time"

	"github.com/herald-gateway/herald/api"
	"github.com/herald-gateway/herald/auth"
	"github.com/herald-gateway/herald/codec/catalog"
	"github.com/herald-gateway/herald/codec/ddl"
	"github.com/herald-gateway/herald/codec/resource"
	"github.com/herald-gateway/herald/codec/workers"
	"github.com/herald-gateway/herald/configs"
	"github.com/herald-gateway/herald/ecpds"
	"github.com/herald-gateway/herald/handlers"
	"github.com/herald-gateway/herald/notification"
	"github.com/herald-gateway/herald/payload"
)

// Runtime is everything a configuration decides that may change while
// herald runs. It is immutable once built; a reload builds a new one.
type Runtime struct {
	// Config is the configuration it was built from.
	Config *configs.Config
	// History is the registry of past payload schemas the registry's
	// typed payloads decode old records with: one per process, kept
	// across reloads.
	History *payload.History
	// Fingerprint identifies the configuration (a hash of its loaded
	// form, environment overrides included).
	Fingerprint string
	// Registry holds the compiled schemas.
	Registry *notification.Registry
	// Codecs is the compiled codec catalog (nil without a codecs block);
	// CodecStatements counts the statements applied.
	Codecs          *catalog.Catalog
	CodecStatements int
	// Workers are the extension workers JAQ-backed codecs run their
	// programs on; a reload takes them over.
	Workers *workers.Pool
	// Auth authenticates requests; CORS is the cross-origin policy (nil
	// without a cors block); ECPDS checks destinations (nil without an
	// ecpds block).
	Auth  *auth.Authenticator
	CORS  *api.CORS
	ECPDS *ecpds.Client
	// Limits are the concurrent-stream limits.
	Limits api.StreamLimitOptions
	// Handlers are the handlers' settings.
	Handlers handlers.Settings
	// LogLevel is the logging level.
	LogLevel slog.Level
}

// RuntimeOptions are what a Runtime needs besides the configuration.
type RuntimeOptions struct {
	// Logger receives the components' logs; nil discards them.
	Logger *slog.Logger
	// HTTPClient calls auth-o-tron and ECPDS; nil builds the default ones.
	HTTPClient *http.Client
	// AuthNow and ECPDSNow are the clocks of token verification and of the
	// ECPDS cache (tests); nil means time.Now.
	AuthNow, ECPDSNow func() time.Time
	// AuthObserver and ECPDSObserver are told the authentication attempts
	// and the ECPDS lookups (metrics); nil records nothing.
	AuthObserver  auth.Observer
	ECPDSObserver ecpds.Observer
}

// NewRuntime builds and validates the Runtime of cfg as a whole: every
// error names what was wrong, with the messages startup gives. reuse,
// when not nil, is the Runtime in force: parts whose configuration did
// not change are taken over from it (the ECPDS cache).
func NewRuntime(cfg *configs.Config, opts RuntimeOptions, reuse *Runtime) (*Runtime, error) {
	log := opts.Logger
	if log == nil {
		log = slog.New(slog.DiscardHandler)
	}
	rt := &Runtime{Config: cfg, Fingerprint: Fingerprint(cfg)}
	// Each part is checked even when an earlier one failed, so that one
	// run reports every problem of the file.
	var errs []error
	level, err := ParseLogLevel(cfg.Logging.Level)
	if err != nil {
		errs = append(errs, err)
	}
	rt.LogLevel = level
	codecsFailed := false
	if rt.Codecs, rt.CodecStatements, err = LoadCodecs(cfg.Codecs); err != nil {
		errs = append(errs, fmt.Errorf("codecs: %w", err))
		codecsFailed = true
	}
	// One pool of extension workers per process: a reload keeps it.
	if reuse != nil && reuse.Workers != nil {
		rt.Workers = reuse.Workers
	} else {
		rt.Workers = workers.New(workers.Config{})
	}
	if reuse != nil && reuse.History != nil {
		rt.History = reuse.History
	} else {
		rt.History = payload.NewHistory()
	}
	if rt.Registry, err = notification.NewRegistryWith(cfg, notification.RegistryOptions{Codecs: rt.Codecs,
		Workers: rt.Workers, History: rt.History, Logger: log.With("component", "codec"), CodecsFailed: codecsFailed}); err != nil {
		errs = append(errs, err)
	}
	if rt.Auth, err = auth.NewAuthenticator(auth.Options{Config: authConfig(cfg.Auth), HTTPClient: opts.HTTPClient,
		Now: opts.AuthNow, Logger: log.With("component", "auth"), Observer: opts.AuthObserver}); err != nil {
		errs = append(errs, err)
	}
	if cfg.Application.CORS != nil {
		c := cfg.Application.CORS
		rt.CORS = api.NewCORS(&api.CORSConfig{AllowedOrigins: c.AllowedOrigins, AllowedHeaders: c.AllowedHeaders,
			MaxAge: time.Duration(c.MaxAgeSec) * time.Second})
	}
	if cfg.ECPDS != nil {
		if reuse != nil && reuse.ECPDS != nil && reflect.DeepEqual(reuse.Config.ECPDS, cfg.ECPDS) {
			rt.ECPDS = reuse.ECPDS
		} else if rt.ECPDS, err = ecpds.New(ecpds.Options{Config: ecpdsConfig(*cfg.ECPDS), HTTPClient: opts.HTTPClient,
			Now: opts.ECPDSNow, Logger: log.With("component", "ecpds"), Observer: opts.ECPDSObserver}); err != nil {
			errs = append(errs, err)
		}
	}
	if len(errs) > 0 {
		if rt.ECPDS != nil && (reuse == nil || rt.ECPDS != reuse.ECPDS) {
			rt.ECPDS.Close()
		}
		return nil, errors.Join(errs...)
	}
	w := cfg.WatchEndpoint
	rt.Limits = api.StreamLimitOptions{PerUser: w.MaxStreamsPerUser, PerClient: w.MaxStreamsPerClient,
		AddressHeader: cfg.Application.ClientAddressHeader, TrustedProxies: cfg.Application.TrustedProxyPrefixes()}
	rt.Handlers = handlers.Settings{
		Registry: rt.Registry,
		Watch: handlers.WatchSettings{
			Heartbeat:        time.Duration(w.SSEHeartbeatIntervalSec) * time.Second,
			MaxDuration:      time.Duration(w.ConnectionMaxDurationSec) * time.Second,
			ReplayBatchSize:  w.ReplayBatchSize,
			ReplayBatchDelay: time.Duration(w.ReplayBatchDelayMs) * time.Millisecond,
			LiveQueueSize:    w.LiveQueueSize,
			MaxLag:           time.Duration(w.MaxLagSec) * time.Second,
			SendBufferBytes:  w.StreamSendBufferBytes,
		},
		MaxBodyBytes:    cfg.Application.MaxBodyBytes,
		ReadBodyTimeout: time.Duration(cfg.Application.ReadBodyTimeoutSec) * time.Second,
		StaticFilesPath: cfg.Application.StaticFilesPath,
		Homepage:        homepageSettings(cfg),
		Auth:            streamPolicy(rt.Auth.Policy(), cfg),
		CORSManaged:     rt.CORS != nil,
		Session: handlers.SessionSettings{
			MaxSubscriptions: cfg.Session.MaxSubscriptions, MaxProducers: cfg.Session.MaxProducers,
			MaxProducerBytes: cfg.Session.MaxProducerBytes, ProducerCredit: cfg.Session.ProducerCredit,
			ProducerMaxBatch: cfg.Session.ProducerMaxBatch, QueueFrames: cfg.Session.QueueFrames,
			QueueBytes: cfg.Session.QueueBytes, MaxFrameEvents: cfg.Session.MaxFrameEvents,
			MaxFrameBytes:      cfg.Session.MaxFrameBytes,
			BlockingTimeout:    time.Duration(cfg.Session.BlockingTimeoutMs) * time.Millisecond,
			MaxSessionsPerUser: cfg.Session.MaxSessionsPerUser,
		},
	}
	rt.Handlers.MaxBatchNotifications = cfg.Application.MaxBatchNotifications
	if cfg.Auth.Enabled {
		rt.Handlers.Authenticate = rt.Auth.Authenticate
	}
	if c := cfg.Application.CORS; c != nil {
		rt.Handlers.AllowedOrigins = append([]string(nil), c.AllowedOrigins...)
	}
	if rt.ECPDS != nil {
		// Only a configured client: a nil *ecpds.Client in the interface
		// would not compare equal to nil.
		rt.Handlers.ECPDS = rt.ECPDS
	}
	return rt, nil
}

// homepageSettings are the links of the built-in homepage: the
// application.homepage links with Aviso's labels, and the metrics
// listener when metrics are enabled.
func homepageSettings(cfg *configs.Config) handlers.HomepageSettings {
	var hs handlers.HomepageSettings
	if h := cfg.Application.Homepage; h != nil {
		for _, l := range []handlers.Link{
			{Label: "Client documentation", URL: h.ClientDocumentationURL},
			{Label: "Client repository", URL: h.ClientRepositoryURL},
			{Label: "Server documentation", URL: h.ServerDocumentationURL},
			{Label: "Server repository", URL: h.ServerRepositoryURL},
		} {
			if l.URL != "" {
				hs.Links = append(hs.Links, l)
			}
		}
	}
	if m := cfg.Metrics; m.Enabled {
		hs.MetricsHost, hs.MetricsPort = m.Host, m.Port
	}
	return hs
}

// ecpdsConfig is the ecpds setting of a validated `ecpds` block.
func ecpdsConfig(e configs.ECPDS) ecpds.Config {
	policy := ecpds.Strict
	if e.PartialOutagePolicy == configs.ECPDSAnySuccess {
		policy = ecpds.AnySuccess
	}
	return ecpds.Config{Username: e.Username, Password: e.Password, Servers: append([]string(nil), e.Servers...),
		MatchKey: e.MatchKey, TargetField: e.TargetField, CacheTTL: time.Duration(e.CacheTTLSeconds) * time.Second,
		MaxEntries: e.MaxEntries, RequestTimeout: time.Duration(e.RequestTimeoutSeconds) * time.Second,
		ConnectTimeout: time.Duration(e.ConnectTimeoutSeconds) * time.Second, PartialOutagePolicy: policy}
}

// authConfig is the api setting of an `auth` block.
func authConfig(a configs.Auth) auth.Config {
	mode := auth.ModeDirect
	if a.Mode == configs.AuthModeTrustedProxy {
		mode = auth.ModeTrustedProxy
	}
	return auth.Config{Enabled: a.Enabled, Mode: mode, AuthOTronURL: a.AuthOTronURL, JWTSecret: a.JWTSecret,
		JWKSFile: a.JWKSFile, AdminRoles: a.AdminRoles, Timeout: time.Duration(a.TimeoutMs) * time.Millisecond}
}

// Fingerprint identifies a loaded configuration: the first 16 hex digits
// of the SHA-256 of its JSON form followed by, with a codecs block, the
// text of the codec definitions file and the files of each resource (a
// reload that changes only the definitions changes the codecs, so it
// changes the fingerprint). Two configurations with the same fingerprint
// behave the same; it is logged at start and after every reload. A file
// that cannot be read counts as empty here (loading the codecs reports
// it).
func Fingerprint(cfg *configs.Config) string {
	b, err := json.Marshal(cfg)
	if err != nil {
		return "unknown"
	}
	h := sha256.New()
	h.Write(b)
	if c := cfg.Codecs; c != nil {
		src, _ := os.ReadFile(c.Definitions)
		fmt.Fprintf(h, "\x00definitions %d\x00", len(src))
		h.Write(src)
		for _, r := range c.Resources {
			files, _ := resource.LoadDir(r.Dir)
			names := make([]string, 0, len(files))
			for name := range files {
				names = append(names, name)
			}
			sort.Strings(names)
			for _, name := range names {
				fmt.Fprintf(h, "\x00resource %s %s %d\x00", r.Name, name, len(files[name]))
				h.Write(files[name])
			}
		}
	}
	return hex.EncodeToString(h.Sum(nil)[:8])
}

// levelOff is the slog level of logging.level off: above every level
// herald logs at.
const levelOff = slog.Level(1 << 20)

// ParseLogLevel reads logging.level (see configs.LogLevel): trace and
// debug are slog's debug, off is above error. Any other value is an
// error naming the valid ones, as configuration validation words it.
func ParseLogLevel(s string) (slog.Level, error) {
	name, ok := configs.LogLevel(s)
	if !ok {
		return 0, fmt.Errorf("logging.level: must be %s, got %q", configs.LogLevelNames, s)
	}
	switch name {
	case "trace", "debug":
		return slog.LevelDebug, nil
	case "warn":
		return slog.LevelWarn, nil
	case "error":
		return slog.LevelError, nil
	case "off":
		return levelOff, nil
	}
	return slog.LevelInfo, nil
}

// LoadCodecs compiles the codec definitions of the `codecs` block with
// their resources and returns the catalog and the number of statements
// applied. The paths are used as they are: configs.Load has already made
// a config file's relative ones relative to its directory.
func LoadCodecs(c *configs.Codecs) (*catalog.Catalog, int, error) {
	if c == nil {
		return nil, 0, nil
	}
	set := resource.NewSet()
	for _, r := range c.Resources {
		files, err := resource.LoadDir(r.Dir)
		if err == nil {
			err = set.Add(r.Name, max(r.Version, 1), files)
		}
		if err != nil {
			return nil, 0, fmt.Errorf("resource %s@%d (%s): %w", r.Name, max(r.Version, 1), r.Dir, err)
		}
	}
	src, err := os.ReadFile(c.Definitions)
	if err != nil {
		return nil, 0, fmt.Errorf("reading definitions: %w", err)
	}
	cat := catalog.NewWithResources(set)
	results, err := cat.Exec(string(src))
	if err != nil {
		var de *ddl.Error
		if errors.As(err, &de) {
			return nil, 0, fmt.Errorf("%s:%d:%d: %s", c.Definitions, de.Pos.Line, de.Pos.Col, de.Msg)
		}
		return nil, 0, fmt.Errorf("%s: %w", c.Definitions, err)
	}
	return cat, len(results), nil
}

// streamPolicy adds to the authentication policy the access rules of each
// event type that has an auth block.
func streamPolicy(p auth.Policy, cfg *configs.Config) auth.Policy {
	p.Streams = map[string]*auth.StreamRules{}
	for _, s := range cfg.NotificationSchema {
		if s.Auth == nil {
			continue
		}
		p.Streams[s.Name] = &auth.StreamRules{
			Required:   s.Auth.Required != nil && *s.Auth.Required,
			ReadRoles:  auth.RoleMap(s.Auth.ReadRoles),
			WriteRoles: auth.RoleMap(s.Auth.WriteRoles),
			Plugins:    s.Auth.Plugins,
		}
	}
	return p
}
