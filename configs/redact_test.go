package configs

import (
	"bytes"
	"encoding/json"
	"fmt"
	"log/slog"
	"strings"
	"testing"
)

// TestSecretsRedacted checks that jwt_secret, the ECPDS password and the
// NATS token never appear when a config is printed or logged.
func TestSecretsRedacted(t *testing.T) {
	c := Default()
	c.Auth.JWTSecret = "jwt-secret-value"
	c.Auth.AdminRoles = map[string][]string{"ecmwf": {"admin"}}
	c.NotificationBackend.JetStream.Token = "nats-token-value"
	c.ECPDS = defaultECPDS()
	c.ECPDS.Username = "svc"
	c.ECPDS.Password = "ecpds-password-value"
	secrets := []string{"jwt-secret-value", "ecpds-password-value", "nats-token-value"}

	var logged bytes.Buffer
	log := slog.New(slog.NewJSONHandler(&logged, nil))
	log.Info("config", "auth", c.Auth, "ecpds", c.ECPDS, "jetstream", c.NotificationBackend.JetStream, "backend", c.NotificationBackend)
	log.Info("pointer", "ecpds", c.ECPDS, "auth", &c.Auth)
	outputs := map[string]string{
		"log":         logged.String(),
		"%v config":   fmt.Sprintf("%v", c),
		"%+v config":  fmt.Sprintf("%+v", c),
		"%v ecpds":    fmt.Sprintf("%v", *c.ECPDS),
		"%+v auth":    fmt.Sprintf("%+v", c.Auth),
		"%s auth":     fmt.Sprint(&c.Auth),
		"json config": mustJSON(t, c),
	}
	for name, out := range outputs {
		for _, s := range secrets {
			if strings.Contains(out, s) {
				t.Errorf("%s shows a secret: %s", name, out)
			}
		}
	}
	for _, want := range []string{`"jwt_secret":"[redacted]"`, `"password":"[redacted]"`, `"Token":"[redacted]"`, `"username":"svc"`, `"admin_roles":{"ecmwf":["admin"]}`} {
		if !strings.Contains(logged.String(), want) {
			t.Errorf("log lacks %s: %s", want, logged.String())
		}
	}
	if got := fmt.Sprintf("%+v", c.Auth); got != "{Enabled:false Mode:direct AuthOTronURL: JWTSecret:[redacted] AdminRoles:map[ecmwf:[admin]] TimeoutMs:5000 JWKSFile:}" {
		t.Errorf("%%+v auth = %s", got)
	}
	// An unset secret shows as empty, so the log tells whether it is set.
	if got := fmt.Sprintf("%v", Auth{}); !strings.Contains(got, "JWTSecret: ") {
		t.Errorf("unset secret: %s", got)
	}
}

func mustJSON(t *testing.T, v any) string {
	t.Helper()
	b, err := json.Marshal(v)
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}
