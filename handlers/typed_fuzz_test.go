package handlers_test

import (
	"context"
	"net/http"
	"strconv"
	"strings"
	"testing"

	"github.com/herald-gateway/herald/notification"
)

// fuzzTyped are the event types FuzzEvents posts to, by index: one per
// codec family, the codec each is typed by.
var fuzzTyped = append(append([]struct{ eventType, codec string }(nil), readingFamilies...),
	struct{ eventType, codec string }{"log", "syslog_codec"},
	struct{ eventType, codec string }{"note", "note_proto"},
	struct{ eventType, codec string }{"vec", "vec_cbor"},
	struct{ eventType, codec string }{"vecavro", "vec_avro"},
	struct{ eventType, codec string }{"tick", "ticks"},
)

// FuzzEvents posts random bodies to the raw notify endpoint of every
// codec family (with the codec's media type, and random query
// identifiers) on the JetStream engine: never a 5xx, and never a partial
// store: a refused payload stores nothing, an accepted one exactly the
// notifications its reply lists, in order.
func FuzzEvents(f *testing.F) {
	cs := newTestCodecs(f, typedDefs)
	for i, et := range fuzzTyped {
		var seeds [][]byte
		switch et.codec {
		case "syslog_codec":
			seeds = append(seeds, []byte("<134>1 2026-12-03T10:00:00.123456Z host-1 app - - - hello"), []byte("<13>Dec  3 10:00:00 host app: x"))
		case "note_proto":
			seeds = append(seeds, cs.encode(f, et.codec, `{"user_id":7,"payload":"p","action":"go"}`))
		case "vec_cbor":
			seeds = append(seeds, cs.encode(f, et.codec, vectorMax))
		case "vec_avro":
			seeds = append(seeds, cs.encode(f, et.codec, strings.Replace(vectorMax, "18446744073709551615", "9223372036854775807", 1)))
		case "ticks":
			seeds = append(seeds, []byte(`{"n":3}`), []byte(`{"n":65537}`), []byte(`{"n":-1}`), []byte(`{"n":"x"}`))
		default:
			seeds = append(seeds, cs.encode(f, et.codec, readingLine))
		}
		seeds = append(seeds, nil, []byte("{"), []byte{0xff, 0x00})
		for _, b := range seeds {
			f.Add(uint8(i), "", b)
			f.Add(uint8(i), "src=a&station=s1", b)
		}
	}
	s := startServer(f, typedConfig(f, typedDefs, ""), nil)
	f.Fuzz(func(t *testing.T, which uint8, query string, body []byte) {
		et := fuzzTyped[int(which)%len(fuzzTyped)]
		ct := notification.MediaType(cs.codec(t, et.codec).Format)
		ctx := context.Background()
		before, err := s.Engine.LastSeq(ctx, et.eventType)
		if err != nil {
			t.Fatal(err)
		}
		path := "/api/v1/events/" + et.eventType
		if query != "" && printableQuery(query) {
			path += "?" + query
		}
		r := s.post(t, path, ct, body)
		after, err := s.Engine.LastSeq(ctx, et.eventType)
		if err != nil {
			t.Fatal(err)
		}
		switch {
		case r.Status >= 500:
			t.Fatalf("%s %q: %d %s", et.eventType, body, r.Status, r.Raw)
		case r.Status == http.StatusOK:
			ids, _ := r.Body["ids"].([]any)
			if uint64(len(ids)) != after-before {
				t.Fatalf("%s: reply lists %d ids, %d were stored", et.eventType, len(ids), after-before)
			}
			for k, id := range ids {
				if id != et.eventType+"@"+strconv.FormatUint(before+uint64(k)+1, 10) {
					t.Fatalf("%s: ids %v after %d", et.eventType, ids, before)
				}
			}
		default:
			if after != before {
				t.Fatalf("%s: refused with %d, but %d were stored: %s", et.eventType, r.Status, after-before, r.Raw)
			}
		}
	})
}

// printableQuery reports whether q can stand in a request line as it is.
func printableQuery(q string) bool {
	for i := 0; i < len(q); i++ {
		if q[i] <= ' ' || q[i] >= 0x7f || q[i] == '#' {
			return false
		}
	}
	return true
}
