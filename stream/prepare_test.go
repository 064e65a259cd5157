package stream_test

import (
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/herald-gateway/herald/configs"
	"github.com/herald-gateway/herald/notification"
	"github.com/herald-gateway/herald/stream"
)

// prepareConfig has an event type with a required field, a spatial
// field and a historical cap.
const prepareConfig = `
application: {host: 127.0.0.1, port: 0}
notification_backend: {kind: in_memory}
notification_schema:
  mars:
    topic: {base: mars, key_order: [class, step]}
    max_historical_notifications: 7
    identifier:
      class: {type: EnumHandler, values: [od, rd], required: true}
      step: {type: IntHandler, range: [0, 360], required: false}
      polygon: {type: PolygonHandler, required: false}
`

func prepareRegistry(t *testing.T) *notification.Registry {
	t.Helper()
	cfg, err := configs.Parse([]byte(prepareConfig), nil)
	if err != nil {
		t.Fatal(err)
	}
	reg, err := notification.NewRegistry(cfg)
	if err != nil {
		t.Fatal(err)
	}
	return reg
}

// checkLog records the checks Prepare ran, refusing those told to.
type checkLog struct {
	ran                 []string
	readErr, destErr    error
	readName, destTopic string
}

func (l *checkLog) checks() stream.Checks {
	return stream.Checks{
		Read: func(sc *notification.Schema) error {
			l.ran = append(l.ran, "read")
			l.readName = sc.Name
			return l.readErr
		},
		Destination: func(sc *notification.Schema, f *notification.Filter) error {
			l.ran = append(l.ran, "destination")
			l.destTopic = f.Pattern.Display()
			return l.destErr
		},
	}
}

// TestPrepareOrder: a request wrong in every step is refused for the
// first wrong one in Prepare's order (event type, read check, spatial
// identifier, cursors, identifier, WHERE, format, destination check);
// righting each in turn moves the refusal to the next step. The checks
// run in their place and not after a refusal.
func TestPrepareOrder(t *testing.T) {
	reg := prepareRegistry(t)
	denied := errors.New("denied by the read check")
	refused := errors.New("refused by the destination check")
	fields := map[string]string{
		"event_type": `"nope"`,
		"identifier": `{"class":"xx","polygon":"(0,0,1,1,0,0)","point":"1,2"}`,
		"from_id":    `"abc"`,
		"where":      `"step >"`,
		"format":     `"avro"`,
	}
	steps := []struct {
		name   string
		fix    func(l *checkLog) // what is righted (or refused) before this step
		want   string            // in the error's message
		ran    string
		status error // the exact error, for the checks
	}{
		{"event type", func(*checkLog) {}, "nope", "", nil},
		{"read check", func(l *checkLog) { fields["event_type"] = `"mars"`; l.readErr = denied }, "", "read", denied},
		{"spatial", func(l *checkLog) { l.readErr = nil }, "Cannot specify both identifier.polygon and identifier.point", "read", nil},
		{"cursors", func(*checkLog) { fields["identifier"] = `{"class":"xx"}` }, "from_id", "read", nil},
		{"identifier", func(*checkLog) { fields["from_id"] = `"1"` }, "class", "read", nil},
		{"where", func(*checkLog) { fields["identifier"] = `{"class":"od"}` }, "where: column 7", "read", nil},
		{"format", func(*checkLog) { fields["where"] = `"step > 6"` }, "format 'avro' is not available", "read", nil},
		{"destination", func(l *checkLog) { fields["format"] = `"json"`; l.destErr = refused }, "", "read destination", refused},
	}
	l := &checkLog{}
	for _, st := range steps {
		st.fix(l)
		l.ran = nil
		var b strings.Builder
		for k, v := range fields {
			if b.Len() > 0 {
				b.WriteByte(',')
			}
			b.WriteString(`"` + k + `":` + v)
		}
		req, err := notification.ParseRequest([]byte("{" + b.String() + "}"))
		if err != nil {
			t.Fatalf("%s: %v", st.name, err)
		}
		p, err := stream.Prepare(reg, req, stream.Watch, stream.Limits{}, l.checks())
		switch {
		case p != nil || err == nil:
			t.Fatalf("%s: prepared %+v, error %v", st.name, p, err)
		case st.status != nil && err != st.status:
			t.Fatalf("%s: error %v, want the check's own %v", st.name, err, st.status)
		case !strings.Contains(err.Error(), st.want):
			t.Fatalf("%s: error %q, want one about %q", st.name, err, st.want)
		case strings.Join(l.ran, " ") != st.ran:
			t.Fatalf("%s: checks run %q, want %q", st.name, l.ran, st.ran)
		}
	}
	// A WHERE that does not compile is a validation error of the request
	// (the endpoint's own code), whatever the compiler's error type.
	req, _ := notification.ParseRequest([]byte(`{"event_type":"mars","identifier":{"class":"od"},"where":"step >"}`))
	_, err := stream.Prepare(reg, req, stream.Watch, stream.Limits{}, stream.Checks{})
	var ve *notification.ValidationError
	if !errors.As(err, &ve) || ve.Message != err.Error() || ve.Detail != ve.Message {
		t.Fatalf("WHERE error %T %v", err, err)
	}
}

// TestPrepareSpec: an accepted request becomes the spec of its stream:
// the query and topic of its identifier, its cursors, the historical cap
// of its event type, its WHERE and format, and the limits (heartbeat and
// maximum duration for watches only); it joins a stream set under its
// event type, marked when it asked for a format.
func TestPrepareSpec(t *testing.T) {
	reg := prepareRegistry(t)
	lim := stream.Limits{Heartbeat: time.Second, MaxDuration: time.Hour, PageSize: 5, PageDelay: time.Millisecond, QueueSize: 9, MaxLag: time.Minute}
	l := &checkLog{}
	req, err := notification.ParseRequest([]byte(`{"event_type":"mars","identifier":{"class":"od"},"from_id":"3","where":"step > 6"}`))
	if err != nil {
		t.Fatal(err)
	}
	for _, mode := range []stream.Mode{stream.Watch, stream.Replay} {
		l.ran = nil
		p, err := stream.Prepare(reg, req, mode, lim, l.checks())
		if err != nil {
			t.Fatalf("%v: %v", mode, err)
		}
		sp := p.Spec
		if p.Schema.Name != "mars" || p.View != nil || p.Topic() != "mars.od.*" || sp.Query.Stream != "mars" || sp.Mode != mode ||
			*sp.Cursors.FromSeq != 3 || sp.HistoryCap != 7 || sp.Where == nil || sp.Format != "" ||
			sp.PageSize != 5 || sp.PageDelay != time.Millisecond || sp.QueueSize != 9 || sp.MaxLag != time.Minute {
			t.Fatalf("%v: prepared %+v, spec %+v", mode, p, sp)
		}
		watch := mode == stream.Watch
		if (sp.Heartbeat == time.Second) != watch || (sp.MaxDuration == time.Hour) != watch || (sp.Heartbeat == 0) == watch {
			t.Fatalf("%v: heartbeat %v, max duration %v", mode, sp.Heartbeat, sp.MaxDuration)
		}
		if strings.Join(l.ran, " ") != "read destination" || l.readName != "mars" || l.destTopic != "mars.od.*" {
			t.Fatalf("%v: checks %q on %q and %q", mode, l.ran, l.readName, l.destTopic)
		}
		if p.SetKey() != "mars" || stream.FormatKey("mars") == "mars" {
			t.Fatalf("%v: set key %q, format key %q", mode, p.SetKey(), stream.FormatKey("mars"))
		}
	}
	// Checks left nil pass.
	if _, err := stream.Prepare(reg, req, stream.Watch, lim, stream.Checks{}); err != nil {
		t.Fatal(err)
	}
}
