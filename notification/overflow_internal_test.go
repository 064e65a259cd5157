package notification

import "testing"

// TestMayOverflow: the cheap pre-check before the number range pass
// fires on every number that could leave the f64 range, and not on the
// letters of keys and strings.
func TestMayOverflow(t *testing.T) {
	for _, c := range []struct {
		body string
		want bool
	}{
		{`{"event_type":"mars","identifier":{"step":12}}`, false},
		{`{"payload":1e400}`, true},
		{`{"payload":1.5E+3}`, true},
		{`{"payload":-0.0e-1}`, true},
		{`{"payload":"1e400"}`, true}, // conservative inside strings: the range pass decides
		{`{"payload":"eee"}`, false},
		{`{"payload":` + digits(309) + `}`, true},
		{`{"payload":` + digits(308) + `}`, false},
	} {
		if got := mayOverflow([]byte(c.body)); got != c.want {
			t.Errorf("mayOverflow(%.60s) = %v, want %v", c.body, got, c.want)
		}
	}
}

func digits(n int) string {
	b := make([]byte, n)
	for i := range b {
		b[i] = '9'
	}
	return string(b)
}
