package catalog

import (
	"fmt"
	"strings"

	"github.com/herald-gateway/herald/codec/ddl"
	"github.com/herald-gateway/herald/codec/evolve"
	"github.com/herald-gateway/herald/codec/types"
)

// ChangeKind says how an entity differs between two catalogs.
type ChangeKind uint8

// Change kinds.
const (
	Unchanged ChangeKind = iota
	Added
	Removed
	Changed
)

// Change is the difference of one entity between two catalogs.
type Change struct {
	Key  Key
	Kind ChangeKind
	// Old and New are the fingerprints (zero when absent).
	Old, New types.Fingerprint
	// Verdicts holds, for a changed schema, the compatibility per wire
	// format (JSON, CBOR, AVRO for an internal schema; its own format for
	// a wire schema), comparing the two definitions as a whole.
	Verdicts []evolve.Verdict
	// Via says, for a changed codec, which parts of its canonical form
	// changed: "its definition" for its own SHOW CREATE text, and each
	// referenced entity (e.g. "SCHEMA notification") whose canonical form
	// changed or that it now references.
	Via []string
}

// Diff compares two catalogs entity by entity, in the order of Keys (old
// entities first, then those only in new).
func Diff(old, new *Catalog) []Change {
	var out []Change
	seen := map[Key]bool{}
	for _, k := range append(old.Keys(), new.Keys()...) {
		if seen[k] {
			continue
		}
		seen[k] = true
		ch := Change{Key: k}
		of, inOld := old.Fingerprint(k)
		nf, inNew := new.Fingerprint(k)
		ch.Old, ch.New = of, nf
		switch {
		case !inNew:
			ch.Kind = Removed
		case !inOld:
			ch.Kind = Added
		case of.ID64 == nf.ID64:
			ch.Kind = Unchanged
		default:
			ch.Kind = Changed
			step := "the new definition"
			switch k.Kind {
			case ddl.KindSchema:
				o, _ := old.Schema(k.Name)
				n, _ := new.Schema(k.Name)
				for _, f := range []types.Format{types.JSON, types.CBOR, types.AVRO} {
					ch.Verdicts = append(ch.Verdicts, evolve.Verdict{Entity: k.String(), Format: f, Breaks: evolve.Schema(step, o, n, f)})
				}
			case ddl.KindWire:
				o, _ := old.Wire(k.Format, k.Name)
				n, _ := new.Wire(k.Format, k.Name)
				breaks := evolve.Wire(step, o, n)
				ch.Verdicts = []evolve.Verdict{{Entity: k.String(), Format: k.Format, Breaks: breaks}}
			case ddl.KindCodec:
				ch.Via = via(old, new, k)
				if v, ok := protoVerdict(old, new, k); ok {
					ch.Verdicts = []evolve.Verdict{v}
				}
			}
		}
		out = append(out, ch)
	}
	return out
}

// protoVerdict judges a protobuf codec whose descriptors changed, by field
// number: its MESSAGE, and its BATCH MESSAGE when both definitions
// declare one. ok is false unless both definitions are protobuf codecs.
func protoVerdict(old, new *Catalog, k Key) (evolve.Verdict, bool) {
	o, okOld := old.ProtoSchema(k.Name)
	n, okNew := new.ProtoSchema(k.Name)
	if !okOld || !okNew {
		return evolve.Verdict{}, false
	}
	v := evolve.Verdict{Entity: k.String(), Format: types.PROTOBUF, Breaks: evolve.Proto("MESSAGE "+string(n.Message.FullName()), o.Message, n.Message)}
	if o.Batch != nil && n.Batch != nil {
		v.Breaks = append(v.Breaks, evolve.Proto("BATCH MESSAGE "+string(n.Batch.FullName()), o.Batch, n.Batch)...)
	}
	return v, true
}

// via lists the parts of a codec's canonical form that differ between two
// catalogs: its own definition, then the referenced entities.
func via(old, new *Catalog, k Key) []string {
	op, _ := old.parts(k)
	np, _ := new.parts(k)
	before := make(map[string]string, len(op))
	for _, p := range op {
		before[p.ref] = p.text
	}
	var out []string
	for _, p := range np {
		if t, ok := before[p.ref]; ok && t == p.text {
			continue
		}
		if p.ref == "" {
			out = append(out, "its definition")
		} else {
			out = append(out, p.ref)
		}
	}
	return out
}

// String explains a change: one line, then what changed in a codec's
// canonical form, then each verdict.
func (c Change) String() string {
	var b strings.Builder
	switch c.Kind {
	case Unchanged:
		fmt.Fprintf(&b, "%s: unchanged (%s)\n", c.Key, c.New.ID64)
	case Added:
		fmt.Fprintf(&b, "%s: added (%s)\n", c.Key, c.New.ID64)
	case Removed:
		fmt.Fprintf(&b, "%s: removed (was %s)\n", c.Key, c.Old.ID64)
	case Changed:
		fmt.Fprintf(&b, "%s: changed (%s -> %s)\n", c.Key, c.Old.ID64, c.New.ID64)
		if len(c.Via) > 0 {
			fmt.Fprintf(&b, "  changed in its canonical form: %s\n", strings.Join(c.Via, ", "))
		}
		for _, v := range c.Verdicts {
			for _, line := range strings.SplitAfter(strings.TrimSuffix(v.String(), "\n"), "\n") {
				b.WriteString("  " + line)
			}
			b.WriteByte('\n')
		}
	}
	return b.String()
}
