package notification

import (
	"encoding/json"
	"strings"
	"testing"
)

func TestNewDateHandler(t *testing.T) {
	str := func(s string) *string { return &s }
	tests := []struct {
		format   *string
		describe string
		errHas   string
	}{
		{format: nil, describe: `{"canonical_format":"%Y%m%d"}`},
		{format: str("%Y%m%d"), describe: `{"canonical_format":"%Y%m%d"}`},
		{format: str("%Y-%m-%d"), describe: `{"canonical_format":"%Y-%m-%d"}`},
		{format: str("%d/%m/%Y"), errHas: `canonical_format "%d/%m/%Y" is not supported; use "%Y%m%d" (20250706) or "%Y-%m-%d" (2025-07-06)`},
		{format: str(""), errHas: `canonical_format "" is not supported`},
		{format: str("%Y%m%d "), errHas: `canonical_format "%Y%m%d " is not supported`},
	}
	for _, tc := range tests {
		h, err := NewDateHandler(tc.format)
		if tc.errHas != "" {
			if err == nil || !strings.Contains(err.Error(), tc.errHas) {
				t.Errorf("NewDateHandler(%q) error = %v; want one containing %q", *tc.format, err, tc.errHas)
			}
			continue
		}
		if err != nil {
			t.Fatal(err)
		}
		got, _ := json.Marshal(h.Describe())
		if string(got) != tc.describe || h.Type() != "DateHandler" {
			t.Errorf("Describe() = %s, Type() = %q; want %s", got, h.Type(), tc.describe)
		}
	}
}

// The accepted inputs and results follow chrono's NaiveDate parsing as
// Aviso uses it (checked against chrono 0.4.45).
func TestDateHandlerCanonical(t *testing.T) {
	iso := "%Y-%m-%d"
	compactH, _ := NewDateHandler(nil)
	isoH, _ := NewDateHandler(&iso)
	tests := []struct{ in, compact, iso, errHas string }{
		{in: "2025-12-25", compact: "20251225", iso: "2025-12-25"},
		{in: "20251225", compact: "20251225", iso: "2025-12-25"},
		{in: "2025-359", compact: "20251225", iso: "2025-12-25"},
		{in: "2025-001", compact: "20250101", iso: "2025-01-01"},
		{in: "2025-365", compact: "20251231", iso: "2025-12-31"},
		{in: "2024-366", compact: "20241231", iso: "2024-12-31"},
		{in: "2024-060", compact: "20240229", iso: "2024-02-29"},
		{in: "2024-02-29", compact: "20240229", iso: "2024-02-29"},
		{in: "2000-02-29", compact: "20000229", iso: "2000-02-29"},
		{in: "0000-02-29", compact: "00000229", iso: "0000-02-29"},
		{in: "9999-12-31", compact: "99991231", iso: "9999-12-31"},
		// chrono leniency: unpadded fields, whitespace before numbers, a
		// signed year, and the day-of-year pattern reading short inputs.
		{in: "2025-7-6", compact: "20250706", iso: "2025-07-06"},
		{in: "1-1-1", compact: "00010101", iso: "0001-01-01"},
		{in: "99-01-01", compact: "00990101", iso: "0099-01-01"},
		{in: " 2025-12-25", compact: "20251225", iso: "2025-12-25"},
		{in: "2025- 12-25", compact: "20251225", iso: "2025-12-25"},
		{in: "\u00a02025-12-25", compact: "20251225", iso: "2025-12-25"},
		{in: "+2025-12-25", compact: "20251225", iso: "2025-12-25"},
		{in: "2025125", compact: "20251205", iso: "2025-12-05"},
		{in: "2025-1", compact: "20250101", iso: "2025-01-01"},
		{in: "2025-12", compact: "20250112", iso: "2025-01-12"},
		{in: "2025-02-30", errHas: `invalid date "2025-02-30": day 30 is not between 1 and 28 for 2025-02`},
		{in: "2023-02-29", errHas: "day 29 is not between 1 and 28 for 2023-02"},
		{in: "1900-02-29", errHas: "day 29 is not between 1 and 28 for 1900-02"},
		{in: "2025-13-01", errHas: `invalid date "2025-13-01": month 13 is not between 1 and 12`},
		{in: "2025-00-10", errHas: "month 0 is not between 1 and 12"},
		{in: "2025-01-32", errHas: "day 32 is not between 1 and 31 for 2025-01"},
		{in: "2025-04-31", errHas: "day 31 is not between 1 and 30 for 2025-04"},
		{in: "2025-366", errHas: `invalid date "2025-366": day of year 366 is not between 1 and 365 for 2025`},
		{in: "2025-000", errHas: "day of year 0 is not between 1 and 365 for 2025"},
		{in: "-2025-12-25", errHas: "year -2025 is outside 0000-9999"},
		{in: "+12345-01-01", errHas: "year 12345 is outside 0000-9999"},
		{in: "2025/12/25", errHas: `invalid date "2025/12/25": accepted forms are YYYY-MM-DD, YYYYMMDD or YYYY-DDD (day of year)`},
		{in: "2025.12.25", errHas: "accepted forms are"},
		{in: "2025", errHas: "accepted forms are"},
		{in: "2025-", errHas: "accepted forms are"},
		{in: "202501", errHas: "accepted forms are"},
		{in: "2025-0359", errHas: "accepted forms are"},
		{in: "+20251225", errHas: "accepted forms are"},
		{in: "2025-12-25T00:00:00", errHas: "accepted forms are"},
		{in: "2025-12-25 ", errHas: "accepted forms are"},
		{in: "25-12-2025", errHas: "accepted forms are"},
		{in: "abc-def-ghi", errHas: "accepted forms are"},
		{in: "2025-+12-25", errHas: "accepted forms are"},
		{in: "", errHas: "value is empty; a date is required (YYYY-MM-DD, YYYYMMDD or YYYY-DDD (day of year))"},
	}
	for _, tc := range tests {
		for _, hc := range []struct {
			h    *DateHandler
			want string
		}{{compactH, tc.compact}, {isoH, tc.iso}} {
			got, err := hc.h.Canonical(tc.in)
			if tc.errHas != "" {
				if err == nil || !strings.Contains(err.Error(), tc.errHas) {
					t.Errorf("%s Canonical(%q) = %q, %v; want error containing %q", hc.h.format, tc.in, got, err, tc.errHas)
				}
				continue
			}
			if err != nil || got != hc.want {
				t.Errorf("%s Canonical(%q) = %q, %v; want %q", hc.h.format, tc.in, got, err, hc.want)
			}
		}
	}
}

func FuzzDateHandlerCanonical(f *testing.F) {
	for _, s := range []string{"2025-12-25", "20251225", "2025-359", "2024-366", "2025-02-30", "2025-7-6", " 2025-1", "+2025-12-25", "-1-01-01", "", "2025"} {
		f.Add(s)
	}
	iso := "%Y-%m-%d"
	compactH, _ := NewDateHandler(nil)
	isoH, _ := NewDateHandler(&iso)
	f.Fuzz(func(t *testing.T, v string) {
		c, cerr := compactH.Canonical(v)
		i, ierr := isoH.Canonical(v)
		if (cerr == nil) != (ierr == nil) {
			t.Fatalf("Canonical(%q): the formats disagree: %v / %v", v, cerr, ierr)
		}
		if cerr != nil {
			return
		}
		if len(c) != 8 || len(i) != 10 || strings.ReplaceAll(i, "-", "") != c {
			t.Fatalf("Canonical(%q) = %q and %q", v, c, i)
		}
		for _, h := range []*DateHandler{compactH, isoH} {
			for _, out := range []string{c, i} {
				again, err := h.Canonical(out)
				want := c
				if h == isoH {
					want = i
				}
				if err != nil || again != want {
					t.Fatalf("%s Canonical(%q) = %q, %v; want %q", h.format, out, again, err, want)
				}
			}
		}
	})
}
