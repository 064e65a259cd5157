package server

import (
	"errors"
	"fmt"
	"time"

	"github.com/herald-gateway/herald/configs"
	"github.com/herald-gateway/herald/jetstream"
)

// JetStreamOptions maps herald's configuration onto jetstream.Options: the
// notification_backend.jetstream block (connection, retries, stream
// defaults, embedded server) and one StreamSpec per schema with its
// storage_policy. The logger is left for the caller to set.
func JetStreamOptions(cfg *configs.Config) (jetstream.Options, error) {
	js := cfg.NotificationBackend.JetStream
	o := jetstream.Options{
		URL:              js.NatsURL,
		Token:            js.Token,
		ConnectTimeout:   time.Duration(js.TimeoutSeconds) * time.Second,
		ConnectAttempts:  js.RetryAttempts,
		ReconnectDelay:   time.Duration(js.ReconnectDelayMs) * time.Millisecond,
		MaxReconnects:    js.MaxReconnectAttempts,
		PublishAttempts:  js.PublishRetryAttempts,
		PublishRetryBase: time.Duration(js.PublishRetryBaseDelayMs) * time.Millisecond,
		Embedded: jetstream.EmbeddedOptions{
			DataDir:    js.DataDir,
			Listen:     js.Listen,
			SyncAlways: js.SyncAlways,
		},
		Defaults: jetstream.StreamPolicy{
			MaxMsgs:   -1,
			MaxBytes:  -1,
			Storage:   js.StorageType,
			Retention: js.RetentionPolicy,
			Discard:   js.DiscardPolicy,
		},
	}
	if js.MaxReconnectAttempts == 0 {
		o.MaxReconnects = -1 // aviso-server: unset or 0 means unlimited
	}
	// js.EnableAutoReconnect is ignored, as aviso-server 0.13 ignores it.
	if js.MaxMessages != nil {
		o.Defaults.MaxMsgs = *js.MaxMessages
	}
	if js.MaxBytes != nil {
		o.Defaults.MaxBytes = *js.MaxBytes
	}
	if js.Replicas != nil {
		o.Defaults.Replicas = *js.Replicas
	}
	if js.RetentionTime != "" {
		d, err := configs.ParseDuration(js.RetentionTime)
		if err != nil {
			return jetstream.Options{}, fmt.Errorf("notification_backend.jetstream.retention_time: %w", err)
		}
		o.Defaults.MaxAge = d
	}
	var errs []error
	for _, s := range cfg.NotificationSchema {
		spec := jetstream.StreamSpec{Base: s.Name, EventType: s.Name}
		if s.Topic != nil && s.Topic.Base != "" {
			spec.Base = s.Topic.Base
		}
		if sp := s.StoragePolicy; sp != nil {
			p, err := policyOverride(sp)
			if err != nil {
				errs = append(errs, fmt.Errorf("notification_schema.%s.storage_policy: %w", s.Name, err))
				continue
			}
			spec.Policy = p
		}
		o.Streams = append(o.Streams, spec)
	}
	if err := errors.Join(errs...); err != nil {
		return jetstream.Options{}, err
	}
	return o, nil
}

// policyOverride maps a schema's storage_policy (Aviso's backends,
// docs/operations.md).
func policyOverride(sp *configs.StoragePolicy) (jetstream.PolicyOverride, error) {
	var p jetstream.PolicyOverride
	if sp.RetentionTime != nil {
		d, err := configs.ParseDuration(*sp.RetentionTime)
		if err != nil {
			return p, fmt.Errorf("retention_time: %w", err)
		}
		p.MaxAge = &d
	}
	if sp.MaxMessages != nil {
		n := *sp.MaxMessages
		p.MaxMsgs = &n
	}
	if sp.MaxSize != nil {
		n, err := configs.ParseSize(*sp.MaxSize)
		if err != nil {
			return p, fmt.Errorf("max_size: %w", err)
		}
		p.MaxBytes = &n
	}
	if sp.AllowDuplicates != nil {
		n := int64(1)
		if *sp.AllowDuplicates {
			n = -1
		}
		p.MaxMsgsPerSubject = &n
	}
	if sp.Compression != nil {
		c := *sp.Compression
		p.Compression = &c
	}
	return p, nil
}
