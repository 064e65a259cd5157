package notification

import (
	"encoding/json"
	"strings"
	"testing"
)

func TestTimeHandlerCanonical(t *testing.T) {
	h := NewTimeHandler()
	tests := []struct{ in, want, errHas string }{
		{in: "9", want: "0900"},
		{in: "0", want: "0000"},
		{in: "00", want: "0000"},
		{in: "01", want: "0100"},
		{in: "14", want: "1400"},
		{in: "23", want: "2300"},
		{in: "9:05", want: "0905"},
		{in: "0:59", want: "0059"},
		{in: "00:00", want: "0000"},
		{in: "14:30", want: "1430"},
		{in: "23:59", want: "2359"},
		{in: "1430", want: "1430"},
		{in: "0905", want: "0905"},
		{in: "0000", want: "0000"},
		{in: "2359", want: "2359"},
		{in: "24", errHas: `invalid time "24": hour 24 is not between 0 and 23`},
		{in: "99", errHas: "hour 99 is not between 0 and 23"},
		{in: "24:00", errHas: `invalid time "24:00": hour 24 is not between 0 and 23`},
		{in: "12:60", errHas: `invalid time "12:60": minute 60 is not between 0 and 59`},
		{in: "2400", errHas: "hour 24 is not between 0 and 23"},
		{in: "1260", errHas: "minute 60 is not between 0 and 59"},
		{in: "123", errHas: `invalid time "123": accepted forms are H, HH, H:MM, HH:MM or HHMM with hours 0-23 and minutes 00-59`},
		{in: "12345", errHas: "accepted forms are"},
		{in: "12:5", errHas: `invalid time "12:5": with a colon the form is H:MM or HH:MM (minutes exactly two digits)`},
		{in: "1:2", errHas: "with a colon the form is H:MM or HH:MM"},
		{in: "012:30", errHas: "with a colon the form is"},
		{in: ":30", errHas: "with a colon the form is"},
		{in: "12:", errHas: "with a colon the form is"},
		{in: "12:30:00", errHas: "with a colon the form is"},
		{in: "ab:30", errHas: "with a colon the form is"},
		{in: "12:ab", errHas: "with a colon the form is"},
		{in: "12.30", errHas: "accepted forms are"},
		{in: "12-30", errHas: "accepted forms are"},
		{in: "+9", errHas: "accepted forms are"},
		{in: " 9", errHas: "accepted forms are"},
		{in: "9 ", errHas: "accepted forms are"},
		{in: " 14:30", errHas: "with a colon the form is"},
		{in: "14:30 ", errHas: "with a colon the form is"},
		{in: "１２", errHas: "accepted forms are"},
		{in: "", errHas: "value is empty; a time is required (H, HH, H:MM, HH:MM or HHMM"},
	}
	for _, tc := range tests {
		got, err := h.Canonical(tc.in)
		if tc.errHas != "" {
			if err == nil || !strings.Contains(err.Error(), tc.errHas) {
				t.Errorf("Canonical(%q) = %q, %v; want error containing %q", tc.in, got, err, tc.errHas)
			}
			continue
		}
		if err != nil || got != tc.want {
			t.Errorf("Canonical(%q) = %q, %v; want %q", tc.in, got, err, tc.want)
		}
	}
}

func TestTimeHandlerDescribe(t *testing.T) {
	h := NewTimeHandler()
	got, _ := json.Marshal(h.Describe())
	if string(got) != `{}` || h.Type() != "TimeHandler" {
		t.Errorf("Describe() = %s, Type() = %q", got, h.Type())
	}
}

func FuzzTimeHandlerCanonical(f *testing.F) {
	for _, s := range []string{"9", "00", "23", "24", "9:05", "14:30", "12:60", "1430", "2400", "123", "", "12:5"} {
		f.Add(s)
	}
	h := NewTimeHandler()
	f.Fuzz(func(t *testing.T, v string) {
		got, err := h.Canonical(v)
		if err != nil {
			return
		}
		if len(got) != 4 || !timeDigits(got) || got[:2] > "23" || got[2:] > "59" {
			t.Fatalf("Canonical(%q) = %q, not HHMM", v, got)
		}
		again, err := h.Canonical(got)
		if err != nil || again != got {
			t.Fatalf("Canonical(%q) = %q, but Canonical(%q) = %q, %v", v, got, got, again, err)
		}
	})
}
