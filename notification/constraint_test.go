package notification

import (
	"encoding/json"
	"strconv"
	"strings"
	"testing"
)

func TestParseConstraintObject(t *testing.T) {
	tests := []struct {
		raw         string
		wantOp      string
		wantOperand string
		errHas      string
	}{
		{raw: `{"gte": 4}`, wantOp: "gte", wantOperand: `4`},
		{raw: ` { "in" : [1, 2] } `, wantOp: "in", wantOperand: `[1, 2]`},
		{raw: `{"between":[1,5]}`, wantOp: "between", wantOperand: `[1,5]`},
		{raw: `{"eq":"North"}`, wantOp: "eq", wantOperand: `"North"`},
		{raw: `{"ge": 4}`, wantOp: "ge", wantOperand: `4`}, // the handler rejects the operator
		{raw: `{"eq": {"x": 1}}`, wantOp: "eq", wantOperand: `{"x": 1}`},
		{raw: `{}`, errHas: "constraint object is empty; it needs exactly one operator key (eq, in, gt, gte, lt, lte, between)"},
		{raw: `{"gte": 1, "lte": 5}`, errHas: `constraint object has 2 keys ("gte", "lte"); it needs exactly one operator key, for a range use {"between": [min, max]}`},
		{raw: `{"eq": 1, "eq": 2}`, errHas: `constraint object has 2 keys ("eq", "eq")`},
		{raw: `{"a": 1, "b": 2, "c": 3}`, errHas: `has 3 keys ("a", "b", "c")`},
		{raw: `[1]`, errHas: `constraint must be a JSON object with one operator, such as {"gte": 4}; got an array`},
		{raw: `4`, errHas: "got 4"},
		{raw: `"gte"`, errHas: `got the string "gte"`},
		{raw: `null`, errHas: "got null"},
		{raw: `true`, errHas: "got the boolean true"},
		{raw: `{`, errHas: "constraint is not valid JSON"},
		{raw: `{"gte": 4} {"lte": 5}`, errHas: "constraint is not valid JSON"},
		{raw: `{"gte": 4}x`, errHas: "constraint is not valid JSON"},
		{raw: ``, errHas: "constraint is not valid JSON"},
	}
	for _, tc := range tests {
		op, operand, err := ParseConstraintObject(json.RawMessage(tc.raw))
		if tc.errHas != "" {
			if err == nil || !strings.Contains(err.Error(), tc.errHas) {
				t.Errorf("ParseConstraintObject(%s) = %q, %s, %v; want error containing %q", tc.raw, op, operand, err, tc.errHas)
			}
			continue
		}
		if err != nil || op != tc.wantOp || string(operand) != tc.wantOperand {
			t.Errorf("ParseConstraintObject(%s) = %q, %s, %v; want %q, %s", tc.raw, op, operand, err, tc.wantOp, tc.wantOperand)
		}
	}
}

// constraintCase is one compiled constraint and the canonical tokens it
// must and must not match, or the error its compilation must give.
type constraintCase struct {
	op, operand string
	match       []string
	noMatch     []string
	errHas      string
}

func runConstraintCases(t *testing.T, name string, c Constrainer, cases []constraintCase) {
	t.Helper()
	for _, tc := range cases {
		got, err := c.Constraint(tc.op, json.RawMessage(tc.operand))
		if tc.errHas != "" {
			if err == nil || !strings.Contains(err.Error(), tc.errHas) {
				t.Errorf("%s.Constraint(%q, %s) error = %v; want one containing %q", name, tc.op, tc.operand, err, tc.errHas)
			}
			continue
		}
		if err != nil {
			t.Errorf("%s.Constraint(%q, %s) failed: %v", name, tc.op, tc.operand, err)
			continue
		}
		for _, v := range tc.match {
			if !got.Match(v) {
				t.Errorf("%s {%q: %s} does not match %q; want a match", name, tc.op, tc.operand, v)
			}
		}
		for _, v := range tc.noMatch {
			if got.Match(v) {
				t.Errorf("%s {%q: %s} matches %q; want no match", name, tc.op, tc.operand, v)
			}
		}
	}
}

func TestIntHandlerConstraint(t *testing.T) {
	unbounded, err := NewIntHandler(nil)
	if err != nil {
		t.Fatal(err)
	}
	runConstraintCases(t, "IntHandler", unbounded, []constraintCase{
		{op: "eq", operand: `5`, match: []string{"5"}, noMatch: []string{"4", "6", "", "*", "five", "5.0", "05x"}},
		{op: "eq", operand: `-9223372036854775808`, match: []string{"-9223372036854775808"}, noMatch: []string{"9223372036854775807"}},
		{op: "eq", operand: `9223372036854775807`, match: []string{"9223372036854775807"}},
		{op: "in", operand: `[1, 3, 5]`, match: []string{"1", "3", "5"}, noMatch: []string{"2", "4", "0"}},
		{op: "in", operand: `[7]`, match: []string{"7"}, noMatch: []string{"8"}},
		{op: "gt", operand: `4`, match: []string{"5", "100"}, noMatch: []string{"4", "3", "-5"}},
		{op: "gte", operand: `4`, match: []string{"4", "5"}, noMatch: []string{"3"}},
		{op: "lt", operand: `4`, match: []string{"3", "-100"}, noMatch: []string{"4", "5"}},
		{op: "lte", operand: `4`, match: []string{"4", "3"}, noMatch: []string{"5"}},
		{op: "between", operand: `[2, 4]`, match: []string{"2", "3", "4"}, noMatch: []string{"1", "5"}},
		{op: "between", operand: `[3, 3]`, match: []string{"3"}, noMatch: []string{"2", "4"}},
		{op: "gte", operand: ` 4 `, match: []string{"4"}},
		{op: "ge", operand: `4`, errHas: `unknown constraint operator "ge" for an IntHandler field; allowed operators: eq, in, gt, gte, lt, lte, between`},
		{op: "EQ", operand: `4`, errHas: `unknown constraint operator "EQ"`},
		{op: "eq", operand: `"5"`, errHas: `operator "eq" expects an integer, got the string "5"`},
		{op: "eq", operand: `4.5`, errHas: `operator "eq" expects an integer, got 4.5, a number with a fraction or exponent`},
		{op: "eq", operand: `4.0`, errHas: `got 4.0, a number with a fraction or exponent`},
		{op: "eq", operand: `1e2`, errHas: `got 1e2, a number with a fraction or exponent`},
		{op: "eq", operand: `-0`, errHas: `got -0, which JSON parsers read as a float; send 0`},
		{op: "eq", operand: `9223372036854775808`, errHas: `got 9223372036854775808, outside the 64-bit signed integer range`},
		{op: "eq", operand: `-9223372036854775809`, errHas: `outside the 64-bit signed integer range`},
		{op: "eq", operand: `true`, errHas: `expects an integer, got the boolean true`},
		{op: "eq", operand: `null`, errHas: `expects an integer, got null`},
		{op: "eq", operand: `[5]`, errHas: `expects an integer, got an array`},
		{op: "gt", operand: `{"x":1}`, errHas: `operator "gt" expects an integer, got an object`},
		{op: "eq", operand: `1e400`, errHas: `operator "eq" expects an integer: number "1e400" is out of range`},
		{op: "eq", operand: ``, errHas: `operand of operator "eq" is not valid JSON`},
		{op: "eq", operand: `5 6`, errHas: `operand of operator "eq" is not valid JSON`},
		{op: "in", operand: `5`, errHas: `operator "in" expects a non-empty array of values, got 5`},
		{op: "in", operand: `[]`, errHas: `operator "in" expects a non-empty array of values, got []`},
		{op: "in", operand: `null`, errHas: `operator "in" expects a non-empty array of values, got null`},
		{op: "in", operand: `[1, 2.5]`, errHas: `operator "in" expects an integer at index 1, got 2.5`},
		{op: "in", operand: `[1, "2"]`, errHas: `operator "in" expects an integer at index 1, got the string "2"`},
		{op: "between", operand: `5`, errHas: `operator "between" expects [min, max], got 5`},
		{op: "between", operand: `[1]`, errHas: `operator "between" expects [min, max] with exactly two values, got 1 values`},
		{op: "between", operand: `[1, 2, 3]`, errHas: `got 3 values`},
		{op: "between", operand: `[6, 2]`, errHas: `operator "between" expects [min, max] with min <= max, got [6, 2]`},
		{op: "between", operand: `[1, 2.5]`, errHas: `operator "between" expects an integer at index 1, got 2.5`},
	})

	ranged, err := NewIntHandler([]string{"1", "7"})
	if err != nil {
		t.Fatal(err)
	}
	runConstraintCases(t, "IntHandler[1,7]", ranged, []constraintCase{
		{op: "gte", operand: `4`, match: []string{"4", "7"}, noMatch: []string{"3"}},
		{op: "between", operand: `[1, 7]`, match: []string{"1", "7"}},
		{op: "gte", operand: `9`, errHas: `operator "gte" operand 9 is outside the field's range [1, 7]`},
		{op: "eq", operand: `0`, errHas: `operand 0 is outside the field's range [1, 7]`},
		{op: "in", operand: `[2, 8]`, errHas: `operator "in" operand 8 is outside the field's range [1, 7]`},
		{op: "between", operand: `[0, 5]`, errHas: `operator "between" operand 0 is outside the field's range [1, 7]`},
		{op: "between", operand: `[6, 2]`, errHas: `min <= max`},
	})
}

func TestFloatHandlerConstraint(t *testing.T) {
	unbounded, err := NewFloatHandler(nil)
	if err != nil {
		t.Fatal(err)
	}
	runConstraintCases(t, "FloatHandler", unbounded, []constraintCase{
		{op: "eq", operand: `2.5`, match: []string{"2.5", "2.50", "+2.5", "25e-1"}, noMatch: []string{"2.5000000000000004", "2", "", "*", "abc"}},
		{op: "eq", operand: `0.1`, match: []string{"0.1"}, noMatch: []string{"0.10000000000000002"}},
		{op: "eq", operand: `5`, match: []string{"5", "5.0"}, noMatch: []string{"5.000001"}},
		{op: "eq", operand: `0`, match: []string{"0", "-0"}},
		{op: "eq", operand: `-0`, match: []string{"0", "-0"}},
		{op: "eq", operand: `18446744073709551615`, match: []string{"18446744073709551616"}},
		{op: "in", operand: `[1, 2.5, -3]`, match: []string{"1", "2.5", "-3"}, noMatch: []string{"2", "3"}},
		{op: "gt", operand: `10.5`, match: []string{"10.6", "11"}, noMatch: []string{"10.5", "10", "NaN", "inf", "-inf"}},
		{op: "gte", operand: `10.5`, match: []string{"10.5"}, noMatch: []string{"10.49"}},
		{op: "lt", operand: `-1`, match: []string{"-1.5"}, noMatch: []string{"-1", "-inf", "NaN"}},
		{op: "lte", operand: `-1`, match: []string{"-1"}, noMatch: []string{"-0.99"}},
		{op: "between", operand: `[10.5, 20.5]`, match: []string{"10.5", "15", "20.5"}, noMatch: []string{"10.4", "22", "inf", "nan"}},
		{op: "eq", operand: `1e300`, match: []string{"1e300"}},
		{op: "ge", operand: `4`, errHas: `unknown constraint operator "ge" for a FloatHandler field; allowed operators: eq, in, gt, gte, lt, lte, between`},
		{op: "eq", operand: `"2.5"`, errHas: `operator "eq" expects a number, got the string "2.5"`},
		{op: "eq", operand: `1e400`, errHas: `operator "eq" expects a finite number: number "1e400" is out of range`},
		{op: "eq", operand: `NaN`, errHas: `operand of operator "eq" is not valid JSON`},
		{op: "gt", operand: `true`, errHas: `operator "gt" expects a number, got the boolean true`},
		{op: "in", operand: `[]`, errHas: `operator "in" expects a non-empty array of values, got []`},
		{op: "in", operand: `[1, null]`, errHas: `operator "in" expects a number at index 1, got null`},
		{op: "between", operand: `[2.5]`, errHas: `operator "between" expects [min, max] with exactly two values, got 1 values`},
		{op: "between", operand: `[20.5, 10.5]`, errHas: `operator "between" expects [min, max] with min <= max, got [20.5, 10.5]`},
	})

	ranged, err := NewFloatHandler([]string{"0.0", "10.0"})
	if err != nil {
		t.Fatal(err)
	}
	runConstraintCases(t, "FloatHandler[0,10]", ranged, []constraintCase{
		{op: "lte", operand: `10`, match: []string{"10", "0"}, noMatch: []string{"10.1"}},
		{op: "gt", operand: `10.5`, errHas: `operator "gt" operand 10.5 is outside the field's range [0, 10]`},
		{op: "in", operand: `[1, -0.5]`, errHas: `operator "in" operand -0.5 is outside the field's range [0, 10]`},
		{op: "between", operand: `[5, 11]`, errHas: `operand 11 is outside the field's range [0, 10]`},
	})
}

func TestEnumHandlerConstraint(t *testing.T) {
	h, err := NewEnumHandler([]string{"low", "High", "critical"})
	if err != nil {
		t.Fatal(err)
	}
	runConstraintCases(t, "EnumHandler", h, []constraintCase{
		{op: "eq", operand: `"high"`, match: []string{"high", "HIGH"}, noMatch: []string{"low", "", "*"}},
		{op: "eq", operand: `"HIGH"`, match: []string{"high"}},
		{op: "in", operand: `["High", "Critical"]`, match: []string{"high", "critical", "CRITICAL"}, noMatch: []string{"low"}},
		{op: "in", operand: `["low"]`, match: []string{"low"}, noMatch: []string{"high"}},
		{op: "gt", operand: `"low"`, errHas: `unknown constraint operator "gt" for an EnumHandler field; allowed operators: eq, in`},
		{op: "between", operand: `["low", "high"]`, errHas: `allowed operators: eq, in`},
		{op: "like", operand: `"low"`, errHas: `unknown constraint operator "like"`},
		{op: "eq", operand: `"urgent"`, errHas: `operator "eq" value "urgent" is not allowed; allowed values (case-insensitive): low, High, critical`},
		{op: "in", operand: `["high", "urgent"]`, errHas: `operator "in" value "urgent" is not allowed`},
		{op: "eq", operand: `5`, errHas: `operator "eq" expects a string, got 5`},
		{op: "in", operand: `["low", 5]`, errHas: `operator "in" expects a string at index 1, got 5`},
		{op: "in", operand: `"low"`, errHas: `operator "in" expects a non-empty array of values, got the string "low"`},
		{op: "in", operand: `[]`, errHas: `got []`},
		{op: "eq", operand: `"\ud800"`, errHas: `operator "eq" expects a string: value "\ud800" is not a valid JSON string: escape \ud800 is a UTF-16 high surrogate`},
	})

	empty, err := NewEnumHandler([]string{})
	if err != nil {
		t.Fatal(err)
	}
	runConstraintCases(t, "EnumHandler[]", empty, []constraintCase{
		{op: "eq", operand: `"x"`, errHas: `operator "eq" value "x" is not allowed; the field's list of allowed values is empty, so no value is accepted`},
	})
}

func FuzzParseConstraintObject(f *testing.F) {
	for _, s := range []string{
		`{"gte": 4}`, `{"in": [1, 2]}`, `{"between": [1, 5]}`, `{"eq": "High"}`, `{"in": ["low", "HIGH"]}`,
		`{"eq": 2.5}`, `{"lt": -0}`, `{"between": [5, 1]}`, `{}`, `{"gte": 1, "lte": 5}`, `[1]`, `{`,
		`{"eq": 9223372036854775808}`, `{"eq": 1e400}`, `{"in": []}`,
	} {
		f.Add([]byte(s))
	}
	intH, _ := NewIntHandler(nil)
	rangedH, _ := NewIntHandler([]string{"-10", "10"})
	floatH, _ := NewFloatHandler(nil)
	enumH, _ := NewEnumHandler([]string{"low", "High", "ΣΑΣ"})
	tokens := []string{"0", "1", "-1", "5", "2.5", "high", "low", "σας", "", "*", "NaN", "inf", "9223372036854775807"}
	f.Fuzz(func(t *testing.T, raw []byte) {
		op, operand, err := ParseConstraintObject(raw)
		if err != nil {
			return
		}
		if _, known := constraintOps[op]; !known {
			if _, err := intH.Constraint(op, operand); err == nil {
				t.Fatalf("unknown operator %q compiled", op)
			}
			return
		}
		for _, c := range []Constrainer{intH, rangedH, floatH, enumH} {
			compiled, err := c.Constraint(op, operand)
			if err != nil {
				continue
			}
			for _, tok := range tokens {
				compiled.Match(tok)
			}
		}
		// An integer eq or between constraint matches its own operands.
		if ic, err := intH.Constraint(op, operand); err == nil && (op == "eq" || op == "between" || op == "in") {
			for _, v := range ic.(*orderedConstraint[int64]).vals {
				if !ic.Match(strconv.FormatInt(v, 10)) {
					t.Fatalf("{%q: %s} does not match its operand %d", op, operand, v)
				}
			}
		}
		if fc, err := floatH.Constraint(op, operand); err == nil && (op == "eq" || op == "between" || op == "in") {
			for _, v := range fc.(*orderedConstraint[float64]).vals {
				if !fc.Match(rustFloatDisplay(v)) {
					t.Fatalf("{%q: %s} does not match its operand %v", op, operand, v)
				}
			}
		}
		if ec, err := enumH.Constraint(op, operand); err == nil {
			for _, v := range ec.(*enumConstraint).vals {
				canon, cerr := enumH.Canonical(v)
				if cerr != nil || !ec.Match(canon) {
					t.Fatalf("{%q: %s} does not match its operand %q (canonical %q, %v)", op, operand, v, canon, cerr)
				}
			}
		}
	})
}
