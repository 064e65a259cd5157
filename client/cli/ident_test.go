package cli

import (
	"encoding/json"
	"strconv"
	"strings"
	"testing"
)

// testFields are the identifier handlers the argument tests type by.
var testFields = map[string]string{
	"class": "EnumHandler", "step": "IntHandler", "temp": "FloatHandler", "date": "DateHandler",
	"stream": "StringHandler", "polygon": "PolygonHandler", "point_cloud": "PointCloudHandler",
}

func TestIdentifierArguments(t *testing.T) {
	cases := []struct {
		arg    string
		notify bool
		schema bool // type by testFields (else no schema)
		want   string
	}{
		{"class=od", false, true, `"od"`},
		{"class=OD,rd", false, true, `{"in":["OD","rd"]}`},
		{"step=12", false, true, `"12"`},
		{"step=007", false, true, `"007"`},
		{"step=99999999999999999999", false, true, `"99999999999999999999"`}, // the server says what is wrong with it
		{"step>=6", false, true, `{"gte":6}`},
		{"step>6", false, true, `{"gt":6}`},
		{"step<=+12", false, true, `{"lte":12}`},
		{"step<-3", false, true, `{"lt":-3}`},
		{"step=1,2,3", false, true, `{"in":[1,2,3]}`},
		{"step=6..12", false, true, `{"between":[6,12]}`},
		{"step=-5..-5", false, true, `{"between":[-5,-5]}`},
		{"temp=1.5..2.25", false, true, `{"between":[1.5,2.25]}`},
		{"temp>=-0.5", false, true, `{"gte":-0.5}`},
		{"temp<1e3", false, true, `{"lt":1000}`},
		{"temp=0.1,0.2", false, true, `{"in":[0.1,0.2]}`},
		{"temp=2.5", false, true, `"2.5"`},
		{"date=2025-07-01", false, true, `"2025-07-01"`},
		{"stream=a,b..c", false, true, `"a,b..c"`},
		{"stream=", false, true, `""`},
		{"polygon=(52.5,13.4,52.6,13.5,52.5,13.6,52.5,13.4)", false, true, `"(52.5,13.4,52.6,13.5,52.5,13.6,52.5,13.4)"`},
		{"point=52.5,13.5", false, true, `"52.5,13.5"`},
		{"x=a=b", false, false, `"a=b"`},
		{"step=1,2", false, false, `{"in":[1,2]}`},
		{"class=od,rd", false, false, `{"in":["od","rd"]}`},
		{"step=1..3", false, false, `{"between":[1,3]}`},
		{"date=2025-07-01..2025-07-06", false, false, `"2025-07-01..2025-07-06"`},
		{"step>=4.5", false, false, `{"gte":4.5}`},
		// notify: the text, or a spatial JSON array.
		{"class=od", true, true, `"od"`},
		{"step=12", true, true, `"12"`},
		{"stream=a,b", true, true, `"a,b"`},
		{"point_cloud=[[1,2],[3,4]]", true, true, `[[1,2],[3,4]]`},
		{"polygon=[[1,2],[3,4],[5,6],[1,2]]", true, true, `[[1,2],[3,4],[5,6],[1,2]]`},
		{"polygon=(1,2,3,4,5,6,1,2)", true, true, `"(1,2,3,4,5,6,1,2)"`},
	}
	for _, c := range cases {
		fields := testFields
		if !c.schema {
			fields = nil
		}
		got, err := identifier([]string{c.arg}, fields, c.notify)
		if err != nil {
			t.Errorf("%s (notify %v): %v", c.arg, c.notify, err)
			continue
		}
		a, _ := ParseArg(c.arg)
		if string(got[a.Key]) != c.want {
			t.Errorf("%s (notify %v): %s, want %s", c.arg, c.notify, got[a.Key], c.want)
		}
	}
}

func TestIdentifierArgumentErrors(t *testing.T) {
	cases := []struct {
		args   []string
		notify bool
		schema bool
		want   string
	}{
		{[]string{"class"}, false, true, `identifier argument "class": no operator: write key=value, key>=v, key<v (also > and <=), key=a,b (one of) or key=lo..hi (between)`},
		{[]string{"=od"}, false, true, `identifier argument "=od": the key before "=" is empty: write key=value, key>=v, key<v (also > and <=), key=a,b (one of) or key=lo..hi (between)`},
		{[]string{"stream=\xff"}, false, true, `identifier argument "stream=\xff": not valid UTF-8`},
		{[]string{"step>="}, false, true, `identifier argument "step>=": no value after >=`},
		{[]string{"step==6"}, false, true, `identifier argument "step==6": the value starts with "=": write a single operator (=, >, >=, < or <=)`},
		{[]string{"step=>6"}, false, true, `identifier argument "step=>6": the value starts with ">": write a single operator (=, >, >=, < or <=)`},
		{[]string{" step=6"}, false, true, `identifier argument " step=6": the key " step" has leading or trailing spaces`},
		{[]string{"clas=od"}, false, true, `identifier argument "clas=od": the event type has no identifier "clas"; its identifiers are class, date, point_cloud, polygon, step, stream, temp`},
		{[]string{"step>=6", "step<=12"}, false, true, `identifier argument "step<=12": step is already given by "step>=6": one argument per key (a range is step=lo..hi)`},
		{[]string{"class>=od"}, false, true, `identifier argument "class>=od": >= compares numbers, and class is an EnumHandler field: use class=value`},
		{[]string{"date<2025-07-01"}, false, true, `identifier argument "date<2025-07-01": < compares numbers, and date is a DateHandler field: use date=value`},
		{[]string{"class=od..rd"}, false, true, `identifier argument "class=od..rd": lo..hi (between) needs a number field, and class is an EnumHandler field: list the values, class=a,b`},
		{[]string{"step>=4.5"}, false, true, `identifier argument "step>=4.5": "4.5" is not an integer, and step is an IntHandler field`},
		{[]string{"step=1,x"}, false, true, `identifier argument "step=1,x": "x" is not an integer, and step is an IntHandler field`},
		{[]string{"step>99999999999999999999"}, false, true, `identifier argument "step>99999999999999999999": "99999999999999999999" is outside the 64-bit integer range, and step is an IntHandler field`},
		{[]string{"step=12..6"}, false, true, `identifier argument "step=12..6": in lo..hi the low end 12 is above the high end 6`},
		{[]string{"step=6.."}, false, true, `identifier argument "step=6..": "" is not an integer, and step is an IntHandler field`},
		{[]string{"class=od,,rd"}, false, true, `identifier argument "class=od,,rd": item 2 of the list a,b,... is empty`},
		{[]string{"temp>nan"}, false, true, `identifier argument "temp>nan": "nan" is not a finite number, which a FloatHandler field compares with`},
		{[]string{"temp>0x10"}, false, true, `identifier argument "temp>0x10": "0x10" is not a finite number, which a FloatHandler field compares with`},
		{[]string{"temp=1..1e999"}, false, true, `identifier argument "temp=1..1e999": "1e999" is not a finite number, which a FloatHandler field compares with`},
		{[]string{"x>abc"}, false, false, `identifier argument "x>abc": "abc" is not a finite number, which a field compares with`},
		{[]string{"step>=6"}, true, true, `identifier argument "step>=6": notify takes key=value: >= filters, on watch and replay`},
		{[]string{"point_cloud=[[1,2]"}, true, true, `identifier argument "point_cloud=[[1,2]": the value starts with [ but is not valid JSON: write [[lat,lon],...]`},
	}
	for _, c := range cases {
		fields := testFields
		if !c.schema {
			fields = nil
		}
		_, err := identifier(c.args, fields, c.notify)
		got := ""
		if err != nil {
			got = err.Error()
		}
		if got != c.want {
			t.Errorf("%q (notify %v):\n got %s\nwant %s", c.args, c.notify, got, c.want)
		}
	}
}

// FuzzIdentifierArg: any argument either parses into key, operator and
// value that render back to the argument, or is refused with an error
// naming it; every value it produces, on every kind of field, for watch
// and for notify, is valid JSON: a string equal to the value, or a
// constraint object with exactly one known operator.
func FuzzIdentifierArg(f *testing.F) {
	for _, s := range []string{
		"class=od", "step>=6", "step<12", "step>6", "step<=6", "class=od,rd", "step=6..12", "temp=-1.5..2e3",
		"polygon=(1,2,3,4,5,6,1,2)", "point_cloud=[[1,2],[3,4]]", "point=52.5,13.5", "=x", "x", "x==1", "x=>1",
		"x=", "x>", "a=b=c", "step=1,,2", "step=..", "step=1...2", "k=\xff", "k=日本", "step=+0..-0", "temp>1e999",
	} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		a, err := ParseArg(s)
		if err != nil {
			if !strings.HasPrefix(err.Error(), "identifier argument "+strconv.Quote(s)+": ") {
				t.Fatalf("error %q does not name the argument", err)
			}
			return
		}
		if a.String() != s || a.Key == "" || strings.ContainsAny(a.Key, "=<>") {
			t.Fatalf("%q parsed as %+v", s, a)
		}
		for _, handler := range []string{"", "IntHandler", "FloatHandler", "EnumHandler", "DateHandler", "PolygonHandler", "PointCloudHandler", "StringHandler"} {
			var fields map[string]string
			if handler != "" {
				fields = map[string]string{a.Key: handler}
			}
			for _, notify := range []bool{false, true} {
				got, err := identifier([]string{s}, fields, notify)
				if err != nil {
					if !strings.HasPrefix(err.Error(), "identifier argument "+strconv.Quote(s)+": ") {
						t.Fatalf("%s %v: error %q does not name the argument", handler, notify, err)
					}
					continue
				}
				v := got[a.Key]
				if !json.Valid(v) {
					t.Fatalf("%s %v: %q gives invalid JSON %s", handler, notify, s, v)
				}
				var str string
				if json.Unmarshal(v, &str) == nil {
					if str != a.Value {
						t.Fatalf("%s %v: %q gives the string %q, not its value", handler, notify, s, str)
					}
					continue
				}
				var obj map[string]json.RawMessage
				if json.Unmarshal(v, &obj) == nil {
					if notify || len(obj) != 1 {
						t.Fatalf("%s %v: %q gives the object %s", handler, notify, s, v)
					}
					for op := range obj {
						if !strings.Contains(" eq in gt gte lt lte between ", " "+op+" ") {
							t.Fatalf("%q gives operator %q", s, op)
						}
					}
					continue
				}
				if !notify || handler != "PolygonHandler" && handler != "PointCloudHandler" {
					t.Fatalf("%s %v: %q gives %s", handler, notify, s, v)
				}
			}
		}
	})
}
