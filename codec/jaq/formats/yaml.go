package formats

import (
	"bytes"
	"encoding/json"
	"errors"
	"io"
	"math"
	"math/big"
	"regexp"
	"strings"
	"unicode/utf8"

	yaml "go.yaml.in/yaml/v3"

	"github.com/herald-gateway/herald/codec/values"
)

// yamlFormat is JAQ-native YAML: a payload holds one value per document
// of the stream (none for an empty stream, null for an empty document),
// decoded through yaml.Node and resolved the way jaq resolves scalars; a
// value is written as one document in flow style (the spaced JSON text,
// which YAML reads back), and the batch container is one document holding
// a flow sequence.
type yamlFormat struct{}

func (yamlFormat) Append(dst []byte, v any, o KeyOrder) ([]byte, error) {
	w := textWriter{o: o, yaml: true}
	return w.value(dst, v, "", 0)
}

func (yamlFormat) AppendContainer(dst []byte, members []any, o KeyOrder) ([]byte, error) {
	w := textWriter{o: o, yaml: true}
	return w.value(dst, members, "", 0)
}

var yamlLine = regexp.MustCompile(`line (\d+)`)

func yamlErr(err error) *values.Error {
	msg := "malformed YAML"
	if m := yamlLine.FindStringSubmatch(err.Error()); m != nil {
		msg += " at line " + m[1]
	}
	return &values.Error{Code: values.CodeSyntax, Msg: msg, Offset: -1}
}

func (yamlFormat) Read(payload []byte, yield func(any) error) (err error) {
	if !utf8.Valid(payload) {
		return &values.Error{Code: values.CodeInvalidUTF8, Msg: "YAML text is not valid UTF-8", Offset: -1}
	}
	defer func() {
		if r := recover(); r != nil {
			err = &values.Error{Code: values.CodeSyntax, Msg: "malformed YAML", Offset: -1}
		}
	}()
	dec := yaml.NewDecoder(bytes.NewReader(payload))
	for {
		var doc yaml.Node
		if err := dec.Decode(&doc); err != nil {
			if errors.Is(err, io.EOF) {
				return nil
			}
			return yamlErr(err)
		}
		r := &yamlResolver{budget: 16*len(payload) + 1024}
		var v any
		if len(doc.Content) > 0 {
			if v, err = r.node(doc.Content[0], 0); err != nil {
				return err
			}
		}
		if err := yield(v); err != nil {
			return err
		}
	}
}

type yamlResolver struct {
	budget   int                 // values an alias may still expand into
	visiting map[*yaml.Node]bool // aliases being expanded (cycle check)
}

func at(n *yaml.Node) string {
	return " (at line " + itoa(n.Line) + ", column " + itoa(n.Column) + ")"
}

func itoa(n int) string {
	return big.NewInt(int64(n)).String()
}

func (r *yamlResolver) node(n *yaml.Node, depth int) (any, error) {
	if depth > MaxDepth {
		return nil, &values.Error{Code: values.CodeTooDeep, Msg: "nesting too deep" + at(n), Offset: -1}
	}
	if r.budget--; r.budget < 0 {
		return nil, &values.Error{Code: values.CodeSyntax, Msg: "aliases expand into too many values" + at(n), Offset: -1}
	}
	switch n.Kind {
	case yaml.DocumentNode:
		if len(n.Content) == 0 {
			return nil, nil
		}
		return r.node(n.Content[0], depth)
	case yaml.AliasNode:
		if r.visiting == nil {
			r.visiting = map[*yaml.Node]bool{}
		}
		if r.visiting[n.Alias] || n.Alias == nil {
			return nil, &values.Error{Code: values.CodeSyntax, Msg: "an alias refers to a value that contains it" + at(n), Offset: -1}
		}
		r.visiting[n.Alias] = true
		v, err := r.node(n.Alias, depth+1)
		delete(r.visiting, n.Alias)
		return v, err
	case yaml.SequenceNode:
		xs := make([]any, 0, len(n.Content))
		for _, c := range n.Content {
			v, err := r.node(c, depth+1)
			if err != nil {
				return nil, err
			}
			xs = append(xs, v)
		}
		return xs, nil
	case yaml.MappingNode:
		m := make(map[string]any, len(n.Content)/2)
		for i := 0; i+1 < len(n.Content); i += 2 {
			kn := n.Content[i]
			for kn.Kind == yaml.AliasNode && kn.Alias != nil {
				kn = kn.Alias
			}
			if kn.Kind != yaml.ScalarNode {
				return nil, &values.Error{Code: values.CodeTypeMismatch, Msg: "a mapping key is not a string" + at(n.Content[i]), Offset: -1}
			}
			k, err := scalar(kn)
			if err != nil {
				return nil, err
			}
			ks, ok := k.(string)
			if !ok {
				return nil, &values.Error{Code: values.CodeTypeMismatch, Msg: "a mapping key is not a string" + at(kn), Offset: -1}
			}
			if _, dup := m[ks]; dup {
				return nil, &values.Error{Code: values.CodeDuplicateField, Msg: "a mapping holds the same key twice" + at(kn), Offset: -1}
			}
			v, err := r.node(n.Content[i+1], depth+1)
			if err != nil {
				return nil, err
			}
			m[ks] = v
		}
		return m, nil
	case yaml.ScalarNode:
		return scalar(n)
	}
	return nil, &values.Error{Code: values.CodeSyntax, Msg: "malformed YAML" + at(n), Offset: -1}
}

var (
	yamlInt   = regexp.MustCompile(`^[-+]?[0-9]+$`)
	yamlHex   = regexp.MustCompile(`^0x[0-9a-fA-F]+$`)
	yamlOct   = regexp.MustCompile(`^0o[0-7]+$`)
	yamlBin   = regexp.MustCompile(`^0b[01]+$`)
	yamlFloat = regexp.MustCompile(`^[-+]?(\.[0-9]+|[0-9]+(\.[0-9]*)?)([eE][-+]?[0-9]+)?$`)
	yamlInf   = regexp.MustCompile(`^[-+]?\.(inf|Inf|INF)$`)
	yamlNaN   = regexp.MustCompile(`^\.(nan|NaN|NAN)$`)
)

// scalar resolves a scalar node the way jaq does: quoted scalars are
// strings; a plain scalar is null, a boolean, NaN or an infinity, an
// integer, a float, or else a string, in that order; an explicit tag must
// agree with the scalar. !!binary reads as its base64 text (gojq has no
// byte strings), so a BYTES field can take it.
func scalar(n *yaml.Node) (any, error) {
	s := n.Value
	quoted := n.Style&(yaml.DoubleQuotedStyle|yaml.SingleQuotedStyle|yaml.LiteralStyle|yaml.FoldedStyle) != 0
	tagged := n.Style&yaml.TaggedStyle != 0
	if !tagged {
		if quoted {
			return s, nil
		}
		if v, ok := resolveNull(s); ok {
			return v, nil
		}
		if v, ok := resolveBool(s); ok {
			return v, nil
		}
		if v, ok := resolveNumber(s); ok {
			return v, nil
		}
		return s, nil
	}
	contradicts := func(what string) error {
		return &values.Error{Code: values.CodeTypeMismatch, Msg: "a scalar tagged " + what + " does not hold one" + at(n), Offset: -1}
	}
	switch n.Tag {
	case "!!str":
		return s, nil
	case "!!null":
		if _, ok := resolveNull(s); ok {
			return nil, nil
		}
		return nil, contradicts("!!null")
	case "!!bool":
		if v, ok := resolveBool(s); ok {
			return v, nil
		}
		return nil, contradicts("!!bool")
	case "!!int":
		if v, ok := resolveNumber(s); ok {
			if _, isInt := v.(json.Number); isInt && !strings.ContainsAny(string(v.(json.Number)), ".eE") {
				return v, nil
			}
		}
		return nil, contradicts("!!int")
	case "!!float":
		if v, ok := resolveNumber(s); ok {
			return v, nil
		}
		return nil, contradicts("!!float")
	case "!!binary":
		b := strings.Map(func(r rune) rune {
			if r == ' ' || r == '\t' || r == '\n' || r == '\r' {
				return -1
			}
			return r
		}, s)
		if _, ok := values.DecodeBase64(nil, []byte(b)); !ok {
			return nil, &values.Error{Code: values.CodeInvalidBase64, Msg: "a !!binary scalar is not padded base64" + at(n), Offset: -1}
		}
		return b, nil
	}
	return nil, &values.Error{Code: values.CodeTypeMismatch, Msg: "unknown scalar tag" + at(n), Offset: -1}
}

func resolveNull(s string) (any, bool) {
	switch s {
	case "", "~", "null", "Null", "NULL":
		return nil, true
	}
	return nil, false
}

func resolveBool(s string) (any, bool) {
	switch s {
	case "true", "True", "TRUE":
		return true, true
	case "false", "False", "FALSE":
		return false, true
	}
	return nil, false
}

// resolveNumber resolves YAML 1.2 core integers (decimal, 0x, 0o, 0b,
// any size) and floats; numbers become json.Number holding JSON text.
func resolveNumber(s string) (any, bool) {
	switch {
	case yamlNaN.MatchString(s):
		return math.NaN(), true
	case yamlInf.MatchString(s):
		if s[0] == '-' {
			return math.Inf(-1), true
		}
		return math.Inf(1), true
	case yamlInt.MatchString(s):
		neg := s[0] == '-'
		d := strings.TrimLeft(strings.TrimLeft(s, "+-"), "0")
		if d == "" {
			d = "0"
		}
		if neg {
			d = "-" + d
		}
		return json.Number(d), true
	case yamlHex.MatchString(s), yamlOct.MatchString(s), yamlBin.MatchString(s):
		base := map[byte]int{'x': 16, 'o': 8, 'b': 2}[s[1]]
		b, ok := new(big.Int).SetString(s[2:], base)
		if !ok {
			return nil, false
		}
		return json.Number(b.String()), true
	case yamlFloat.MatchString(s):
		neg := s[0] == '-'
		t := strings.TrimLeft(s, "+-")
		mant, exp := t, ""
		if i := strings.IndexAny(t, "eE"); i >= 0 {
			mant, exp = t[:i], t[i:]
		}
		ip, fp, _ := strings.Cut(mant, ".")
		ip = strings.TrimLeft(ip, "0")
		if ip == "" {
			ip = "0"
		}
		if fp == "" && strings.Contains(mant, ".") {
			fp = "0"
		}
		var b strings.Builder
		if neg {
			b.WriteByte('-')
		}
		b.WriteString(ip)
		if fp != "" {
			b.WriteByte('.')
			b.WriteString(fp)
		}
		b.WriteString(exp)
		return json.Number(b.String()), true
	}
	return nil, false
}
