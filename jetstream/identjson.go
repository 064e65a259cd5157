package jetstream

import (
	"encoding/json"
	"slices"

	"github.com/herald-gateway/herald/internal/jsonplain"
)

// identifierJSON is json.Marshal of an identifier map, byte for byte,
// without reflection when every key and value is plain printable ASCII
// that encoding/json copies as is (no quote, backslash or HTML
// character to escape): the usual identifier. Anything else goes to
// encoding/json. Every publish encodes its identifier, and the handlers
// size the message before publishing it, so this runs twice per notify.
func identifierJSON(m map[string]string) ([]byte, error) {
	size := 2
	for k, v := range m {
		if !jsonplain.String(k) || !jsonplain.String(v) {
			return json.Marshal(m)
		}
		size += len(k) + len(v) + 6 // "k":"v",
	}
	var small [16]string
	keys := small[:0]
	for k := range m {
		keys = append(keys, k)
	}
	slices.Sort(keys)
	b := make([]byte, 0, size)
	b = append(b, '{')
	for i, k := range keys {
		if i > 0 {
			b = append(b, ',')
		}
		b = append(b, '"')
		b = append(b, k...)
		b = append(b, `":"`...)
		b = append(b, m[k]...)
		b = append(b, '"')
	}
	return append(b, '}'), nil
}
