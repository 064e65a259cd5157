package program

import (
	"context"
	"encoding/json"
	"errors"
	"strings"
	"testing"
	"time"
)

func TestCompileErrors(t *testing.T) {
	tests := []struct {
		src  string
		off  int
		want string
	}{
		{".a | ]", 5, `unexpected token "]"`},
		{"{a: 1", 5, "unexpected EOF"},
		{".a | frob(1)", 5, "function not defined: frob/1"},
		{"$x + $xy", 5, "variable not defined: $xy"},
		{"1 + $xy", 4, "variable not defined: $xy"},
		{"inputs", 0, "input(s)/0 is not allowed"},
		{"\"a\" | input", 6, "input(s)/0 is not allowed"},
		{`import "m" as m; .`, 7, `cannot load module: "m"`},
	}
	for _, tt := range tests {
		_, err := Compile(tt.src)
		var ce *CompileError
		if !errors.As(err, &ce) || ce.Offset != tt.off || ce.Msg != tt.want {
			t.Errorf("Compile(%q) = %#v, want offset %d %q", tt.src, err, tt.off, tt.want)
		}
	}
}

func run(t *testing.T, src string, v any) ([]any, error) {
	t.Helper()
	p, err := Compile(src)
	if err != nil {
		t.Fatal(err)
	}
	var out []any
	err = p.Run(context.Background(), v, func(o any) error {
		out = append(out, o)
		return nil
	})
	return out, err
}

func TestRun(t *testing.T) {
	out, err := run(t, ".[] | . + 1", []any{json.Number("18446744073709551615"), json.Number("1.10"), 2})
	if err != nil || len(out) != 3 {
		t.Fatal(out, err)
	}
	// a json.Number passes through unchanged; arithmetic makes a number
	if out, _ := run(t, ".", json.Number("1.10")); out[0] != json.Number("1.10") {
		t.Errorf("pass-through: %#v", out[0])
	}
	_, err = run(t, `"secret" | error`, nil)
	var re *RunError
	if !errors.As(err, &re) || strings.Contains(err.Error(), "secret") || !strings.Contains(re.Detail(), "secret") {
		t.Errorf("run error: %v / %q", err, re.Detail())
	}
	if out, _ := run(t, "env, $ENV", nil); len(out) != 2 || len(out[0].(map[string]any)) != 0 || len(out[1].(map[string]any)) != 0 {
		t.Errorf("programs see no environment: %v", out)
	}
	if out, err := run(t, "1, halt, 2", nil); err != nil || len(out) != 1 {
		t.Errorf("halt: %v %v", out, err)
	}
	if _, err := run(t, `"x" | halt_error`, nil); err == nil {
		t.Error("halt_error is an error")
	}
	p, _ := Compile("def f: f; f")
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Millisecond)
	defer cancel()
	err = p.Run(ctx, nil, func(any) error { return nil })
	if !errors.As(err, &re) || !re.Timeout {
		t.Errorf("deadline: %v", err)
	}
	p, _ = Compile("range(10)")
	n := 0
	if err := p.Run(context.Background(), nil, func(any) error {
		if n++; n == 3 {
			return ErrStop
		}
		return nil
	}); err != nil || n != 3 {
		t.Errorf("stop: %d %v", n, err)
	}
}

func TestOrder(t *testing.T) {
	p, err := Compile(`"x" as $__prog_name | {id: .user_id, action: .action, meta: {z: 1, a: 2}, "q r": 1, $__prog_name}, {(.k): 1, x: 2}, {b: 1, a: 2} | {"s\(1)": 1}`)
	if err != nil {
		t.Fatal(err)
	}
	o := p.Order()
	pref := map[string]int{"user_id": 0, "action": 1, "extra": 2}
	tests := []struct {
		m    map[string]any
		want string
	}{
		{map[string]any{"meta": 1, "action": 1, "id": 1, "q r": 1, "__prog_name": 1}, "id action meta q r __prog_name"},
		{map[string]any{"a": 1, "z": 1}, "z a"},
		{map[string]any{"a": 1, "b": 1}, "b a"},
		{map[string]any{"x": 1, "dyn": 1}, "x dyn"},
		{map[string]any{"zz": 1, "extra": 1, "user_id": 1, "id": 1, "aa": 1}, "user_id extra id aa zz"},
	}
	for _, tt := range tests {
		if got := strings.Join(o.Keys(tt.m, pref), " "); got != tt.want {
			t.Errorf("Keys(%v) = %s, want %s", tt.m, got, tt.want)
		}
	}
	var none *Order
	if got := strings.Join(none.Keys(map[string]any{"b": 1, "a": 1, "action": 1}, pref), " "); got != "action a b" {
		t.Errorf("nil order: %s", got)
	}
}

func FuzzCompile(f *testing.F) {
	for _, s := range []string{".", ".lines[] | select(.quantity > 0)", "{id: .user_id, action: .action}", "{schema_version: 2, count: length, records: .}",
		`{user_id: (.c[] | select(.t == "user_id").c[0] | tonumber)}`, "range(length) as $i | .[$i] + {index: $i}", ".events[] | .user_id //= 0", "def f: f; f",
		`reduce .[] as {a: $x, $b} (0; . + $x)`, `"\(.a)" | @base64d`, "try error catch .", "label $out | foreach .[] as $i (0; .+$i; if . > 3 then ., break $out else . end)"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, src string) {
		p, err := Compile(src)
		if err != nil {
			var ce *CompileError
			if !errors.As(err, &ce) || ce.Offset < 0 || ce.Offset > len(src) {
				t.Fatalf("compile error %#v", err)
			}
			return
		}
		_ = p.Order().Keys(map[string]any{"a": 1, "b": 2}, nil)
	})
}
