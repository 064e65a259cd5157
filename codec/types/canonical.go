package types

import (
	"crypto/sha256"
	"fmt"
	"strconv"
	"strings"
	"unicode/utf16"
)

// Quote renders a name as it stands bare in a statement: plain words
// ([A-Za-z_][A-Za-z0-9_]*) as they are, anything else between backticks
// with a backtick inside doubled.
func Quote(name string) string {
	if IsAvroName(name) {
		return name
	}
	return "`" + strings.ReplaceAll(name, "`", "``") + "`"
}

// CreateSchema renders the canonical CREATE SCHEMA statement of s, the text
// SHOW CREATE SCHEMA prints. It parses back to the same schema.
func CreateSchema(s *Schema) string {
	var b strings.Builder
	b.WriteString("CREATE SCHEMA ")
	b.WriteString(Quote(s.Name))
	b.WriteString(" (\n")
	for i, f := range s.Fields {
		b.WriteString("  ")
		b.WriteString(Quote(f.Name))
		b.WriteByte(' ')
		b.WriteString(f.Type.String())
		if f.Optional {
			b.WriteString(" OPTIONAL")
		}
		if f.Sensitive {
			b.WriteString(" SENSITIVE")
		}
		if i < len(s.Fields)-1 {
			b.WriteByte(',')
		}
		b.WriteByte('\n')
	}
	b.WriteString(");")
	return b.String()
}

// CreateWire renders the canonical CREATE WIRE … SCHEMA statement of w.
func CreateWire(w *WireSchema) string {
	var b strings.Builder
	fmt.Fprintf(&b, "CREATE WIRE %s SCHEMA %s MODE %s (\n", w.Format, Quote(w.Name), w.Mode)
	for i, f := range w.Fields {
		b.WriteString("  ")
		b.WriteString(Quote(f.Name))
		b.WriteByte(' ')
		b.WriteString(f.Type.String())
		if f.Optional {
			b.WriteString(" OPTIONAL")
		}
		if i < len(w.Fields)-1 {
			b.WriteByte(',')
		}
		b.WriteByte('\n')
	}
	b.WriteString(");")
	return b.String()
}

// CreateCodec renders the canonical CREATE CODEC statement of c.
func CreateCodec(c *Codec) string {
	var b strings.Builder
	b.WriteString("CREATE CODEC ")
	b.WriteString(Quote(c.Name))
	if c.Jaq != nil {
		writeJaqCodec(&b, c)
		return b.String()
	}
	if c.Format == SYSLOG {
		b.WriteString("\n  FROM SYSLOG")
	} else {
		fmt.Fprintf(&b, "\n  FROM WIRE %s SCHEMA %s", c.Format, Quote(c.Wire))
	}
	b.WriteString("\n  TO SCHEMA ")
	b.WriteString(Quote(c.Schema))
	for _, f := range c.RFC3339 {
		b.WriteString("\n  ENCODE ")
		b.WriteString(Quote(f))
		b.WriteString(" AS RFC3339")
	}
	b.WriteByte(';')
	return b.String()
}

func writeJaqCodec(b *strings.Builder, c *Codec) {
	b.WriteString("\n  FROM ")
	b.WriteString(c.Format.String())
	if p := c.Proto; p != nil {
		b.WriteString("\n  USING RESOURCE ")
		b.WriteString(Quote(p.Resource))
		b.WriteString(" VERSION ")
		if p.Version == 0 {
			b.WriteString("LATEST")
		} else {
			b.WriteString(strconv.Itoa(p.Version))
		}
		b.WriteString("\n  CONFIG {")
		for i, e := range p.Config {
			if i > 0 {
				b.WriteString(", ")
			}
			b.WriteString(QuoteString(e.Key))
			b.WriteString(" = ")
			if e.List {
				b.WriteByte('[')
				for j, v := range e.Values {
					if j > 0 {
						b.WriteString(", ")
					}
					b.WriteString(QuoteString(v))
				}
				b.WriteByte(']')
			} else if len(e.Values) > 0 {
				b.WriteString(QuoteString(e.Values[0]))
			}
		}
		b.WriteString("}\n  MESSAGE ")
		b.WriteString(QuoteString(p.Message))
		if p.BatchMessage != "" {
			b.WriteString("\n  BATCH MESSAGE ")
			b.WriteString(QuoteString(p.BatchMessage))
		}
	}
	b.WriteString("\n  TO SCHEMA ")
	b.WriteString(Quote(c.Schema))
	b.WriteString("\n  WITH JAQ TRANSFORMATIONS")
	for d, prog := range c.Jaq.Programs {
		if !prog.Set {
			continue
		}
		b.WriteString("\n    ")
		b.WriteString(Direction(d).String())
		b.WriteByte(' ')
		b.WriteString(QuoteProgram(prog.Text))
	}
	b.WriteByte(';')
}

// QuoteString renders s as a statement string literal: between single
// quotes, a quote inside doubled.
func QuoteString(s string) string {
	return "'" + strings.ReplaceAll(s, "'", "''") + "'"
}

// QuoteProgram renders a JAQ program as a statement literal: single-quoted
// when it holds no quote, otherwise dollar-quoted ($jaq$ … $jaq$, with a
// numbered tag when the program holds $jaq$ itself).
func QuoteProgram(s string) string {
	if !strings.Contains(s, "'") {
		return QuoteString(s)
	}
	// the closing tag is the first occurrence after the opening one, also
	// where the program's end and the tag overlap
	tag := "$jaq$"
	for i := 1; strings.Index(s+tag, tag) != len(s); i++ {
		tag = "$jaq" + strconv.Itoa(i) + "$"
	}
	return tag + s + tag
}

// Signature joins the canonical form of an entity with the canonical
// forms of the entities it references, in the order given, each starting
// on a line of its own: the text an entity's fingerprint is computed
// over. The schema-evolution rule it implements: a schema id covers "its
// canonical form, followed by the canonical form of every other entity it
// references by name", so "a change to Address changes the id of a User
// that references it". An entity that references nothing has its own
// canonical form as its signature, so its ids are those of that text.
func Signature(own string, refs ...string) string {
	if len(refs) == 0 {
		return own
	}
	n := len(own)
	for _, r := range refs {
		n += 1 + len(r)
	}
	var b strings.Builder
	b.Grow(n)
	b.WriteString(own)
	for _, r := range refs {
		b.WriteByte('\n')
		b.WriteString(r)
	}
	return b.String()
}

// Fingerprint identifies the canonical form of an entity.
type Fingerprint struct {
	// Canonical is the text the fingerprint is computed over: the
	// entity's signature (see Signature). For an internal or wire schema
	// it is the SHOW CREATE text; for a codec, its SHOW CREATE text
	// followed by the canonical forms of the entities it references.
	Canonical string
	// ID64 is the first 64 bits of SHA-256 of Canonical, as 16 lower-case
	// hex digits. Persisted schema-bound state is keyed by it.
	ID64 string
	// ID32 is the protoarray-style 32-bit FNV-1a id of Canonical, as 8
	// lower-case hex digits; for handshakes, not for registries.
	ID32 string
}

// FingerprintOf returns the fingerprint of a canonical text (a
// signature).
func FingerprintOf(canonical string) Fingerprint {
	return Fingerprint{Canonical: canonical, ID64: SHA256x64(canonical), ID32: FNV1a32(canonical)}
}

// FNV1a32 returns protoarray's 32-bit schema id of s: FNV-1a (offset
// 0x811c9dc5, prime 0x01000193) over the UTF-16 code units of s, as
// JavaScript's charCodeAt yields them, in 8 lower-case hex digits. For
// ASCII text it equals FNV-1a over the UTF-8 bytes.
func FNV1a32(s string) string {
	h := uint32(0x811c9dc5)
	for _, r := range s {
		if r >= 0x10000 {
			a, b := utf16.EncodeRune(r)
			h = (h ^ uint32(a)) * 0x01000193
			h = (h ^ uint32(b)) * 0x01000193
			continue
		}
		h = (h ^ uint32(r)) * 0x01000193
	}
	return fmt.Sprintf("%08x", h)
}

// SHA256x64 returns the first 16 hex digits of SHA-256 of s: protoarray's
// documented custom-fingerprint example.
func SHA256x64(s string) string {
	sum := sha256.Sum256([]byte(s))
	return fmt.Sprintf("%x", sum[:8])
}
