package notification

import (
	"context"
	"encoding/json"
	"fmt"
	"math/rand/v2"
	"reflect"
	"strconv"
	"testing"
)

// The one-record notify path that writes the stored row straight from the
// WIRE JSON payload (recordStored) against the batch path it bypasses
// (recordsBatch): the same notification, byte for byte, or the same
// error.

// checkStoredNotify compares both paths on one notify; it reports
// whether the notify was stored (false: refused, or not reaching the
// payload).
func checkStoredNotify(t testing.TB, s *Schema, identJSON, payload string) (stored bool) {
	t.Helper()
	var id map[string]json.RawMessage
	if identJSON != "" {
		if err := json.Unmarshal([]byte(identJSON), &id); err != nil {
			return false
		}
	}
	if s.checkDeclared(id) != nil {
		return false // records refuses these before either path
	}
	wire := []byte(payload)
	want, werr := s.recordsBatch(context.Background(), id, wire, true)
	got, done, gerr := s.recordStored(id, wire)
	if !done {
		t.Fatal("the WIRE JSON codec took the batch path")
	}
	if werr != nil || gerr != nil {
		if fmt.Sprintf("%T %+v", werr, werr) != fmt.Sprintf("%T %+v", gerr, gerr) {
			t.Fatalf("ident %s payload %q: errors differ\nbatch:  %T %+v\nstored: %T %+v", identJSON, payload, werr, werr, gerr, gerr)
		}
		if wv, ok := werr.(*ValidationError); ok {
			gv := gerr.(*ValidationError)
			if wv.Field != gv.Field || wv.Message != gv.Message || wv.Detail != gv.Detail || fmt.Sprint(wv.Cause) != fmt.Sprint(gv.Cause) {
				t.Fatalf("ident %s payload %q: validation errors differ\nbatch:  %#v\nstored: %#v", identJSON, payload, wv, gv)
			}
		}
		return false
	}
	if len(want) != 1 || !reflect.DeepEqual(want[0], got) {
		t.Fatalf("ident %s payload %q: notifications differ\nbatch:  %+v\nstored: %+v", identJSON, payload, want[0], got)
	}
	return true
}

// TestStoredNotifyMatchesBatch: generated readings (every identifier
// agreeing, disagreeing, out of range or left to the record; optional
// fields null or absent; values of the wrong type) give the same
// notification or error on both paths.
func TestStoredNotifyMatchesBatch(t *testing.T) {
	s, _ := typedRegistry(t, "reading_json").Schema("reading")
	r := rand.New(rand.NewPCG(13, 1))
	pick := func(xs ...string) string { return xs[r.IntN(len(xs))] }
	var stored, refused int
	for range 3000 {
		step := strconv.Itoa(r.IntN(400) - 20)
		station := pick(`"s1"`, `"ecmwf"`, `""`, `"a/b"`, `"é\u00e9"`, `1`, `null`)
		fields := []string{
			`"station":` + station,
			`"step":` + pick(step, step, `"12"`, `1.5`, `null`, `2147483648`),
			`"temperature":` + pick(`21.5`, `-0.0`, `1e400`, `5e-324`, `"x"`),
			`"humidity":` + pick(`0.25`, `null`, `3.4028236e38`, `1`),
			`"at":` + pick(`"2026-12-03T10:00:00.123456789Z"`, `"2026-12-03T10:00:00+02:00"`, `"yesterday"`),
			`"secret":` + pick(`"pin"`, `null`),
		}
		r.Shuffle(len(fields), func(i, j int) { fields[i], fields[j] = fields[j], fields[i] })
		fields = fields[:len(fields)-r.IntN(2)]
		payload := "{"
		for i, f := range fields {
			if i > 0 {
				payload += ","
			}
			payload += f
		}
		payload += "}"
		identJSON := pick(`{}`, ``, `{"station":"s1"}`, `{"step":`+step+`}`, `{"step":"`+step+`"}`, `{"station":`+station+`,"step":12}`, `{"step":null}`)
		if checkStoredNotify(t, s, identJSON, payload) {
			stored++
		} else {
			refused++
		}
	}
	if stored < 50 || refused < 50 {
		t.Fatalf("stored %d, refused %d: the generator reaches too little of either side", stored, refused)
	}
}

// FuzzStoredNotify compares both paths on arbitrary payloads and
// identifiers.
func FuzzStoredNotify(f *testing.F) {
	for _, seed := range [][2]string{
		{`{}`, readingJSON},
		{`{"station":"s1","step":12}`, readingJSON},
		{`{"step":13}`, readingJSON},
		{``, `{"station":"s1","step":400,"temperature":1,"at":"2026-12-03T10:00:00Z"}`},
		{``, `{"station":"s1","step":"twelve","temperature":1,"at":"2026-12-03T10:00:00Z"}`},
		{`{"step":"12"}`, `{"station":"s\u0000","step":12,"temperature":1e308,"humidity":null,"at":"2262-04-11T23:47:16.854775807Z"}`},
		{``, `{"station":"s1","temperature":1,"at":"2026-12-03T10:00:00Z"}`},
		{``, `[]`},
		{``, ``},
	} {
		f.Add(seed[0], seed[1])
	}
	s, _ := typedRegistry(f, "reading_json").Schema("reading")
	f.Fuzz(func(t *testing.T, identJSON, payload string) {
		checkStoredNotify(t, s, identJSON, payload)
	})
}
