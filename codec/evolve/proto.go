package evolve

import (
	"fmt"

	"google.golang.org/protobuf/reflect/protoreflect"
)

// Proto returns the breaks of one step changing protobuf message old into
// new, judged by field number: a protobuf payload carries each value
// under its field's number, never its name, so a number is a position. A
// field whose name the other message declares under another number was
// renumbered and its values land in another field; a field deleted
// without reserving its number leaves the number to be reused; a number
// whose type changes reads values of another encoding. A rename is free,
// and so is a new number (old readers skip it, new readers read its
// default from old payloads). Fields of message type are judged
// recursively.
func Proto(step string, old, new protoreflect.MessageDescriptor) []Break {
	var out []Break
	protoMessage(&out, step, "", old, new, map[[2]protoreflect.FullName]bool{})
	return out
}

func protoMessage(out *[]Break, step, path string, old, new protoreflect.MessageDescriptor, seen map[[2]protoreflect.FullName]bool) {
	key := [2]protoreflect.FullName{old.FullName(), new.FullName()}
	if seen[key] {
		return
	}
	seen[key] = true
	add := func(d Direction, format string, args ...any) {
		*out = append(*out, Break{step, d, fmt.Sprintf(format, args...)})
	}
	ofs, nfs := old.Fields(), new.Fields()
	for i := 0; i < ofs.Len(); i++ {
		o := ofs.Get(i)
		num := o.Number()
		at := fmt.Sprintf("%sfield %d (%s)", path, num, o.Name())
		n := nfs.ByNumber(num)
		if n == nil {
			if !new.ReservedRanges().Has(num) {
				add(Backward, "%s is deleted without reserving its number: a field that later takes number %d reads the values old payloads hold there (reserve the number, or keep the field)", at, num)
			}
			continue
		}
		if o.Name() != n.Name() && (nfs.ByName(o.Name()) != nil || ofs.ByName(n.Name()) != nil) {
			add(Backward, "%sfield number %d: old payloads hold %s there, which the new message reads as %s (fields renumbered: a number is forever)", path, num, o.Name(), n.Name())
			add(Forward, "%sfield number %d: new payloads hold %s there, which old readers read as %s (fields renumbered)", path, num, n.Name(), o.Name())
		}
		if why := protoReadable(o, n); why != "" {
			add(Backward, "%s: old values %s", at, why)
		}
		if why := protoReadable(n, o); why != "" {
			add(Forward, "%s: new values %s for old readers", at, why)
		}
		if o.Kind() == protoreflect.MessageKind && n.Kind() == protoreflect.MessageKind && o.IsList() == n.IsList() && o.IsMap() == n.IsMap() {
			protoMessage(out, step, at+".", o.Message(), n.Message(), seen)
		}
	}
}

// protoWidens lists the scalar kinds whose values another kind reads
// exactly: the varint integers into wider ones, text into bytes.
var protoWidens = map[[2]protoreflect.Kind]bool{
	{protoreflect.Int32Kind, protoreflect.Int64Kind}:   true,
	{protoreflect.Uint32Kind, protoreflect.Uint64Kind}: true,
	{protoreflect.Uint32Kind, protoreflect.Int64Kind}:  true,
	{protoreflect.Sint32Kind, protoreflect.Sint64Kind}: true,
	{protoreflect.StringKind, protoreflect.BytesKind}:  true,
}

// protoReadable says why values of field w cannot be read as field r, or
// "" when they can (message fields compare their own fields separately).
func protoReadable(w, r protoreflect.FieldDescriptor) string {
	shape := func(f protoreflect.FieldDescriptor) string {
		switch {
		case f.IsMap():
			return "map"
		case f.IsList():
			return "repeated"
		}
		return "singular"
	}
	if sw, sr := shape(w), shape(r); sw != sr {
		return fmt.Sprintf("of a %s field cannot be read as a %s one", sw, sr)
	}
	wk, rk := w.Kind(), r.Kind()
	if wk == rk || protoWidens[[2]protoreflect.Kind{wk, rk}] {
		return ""
	}
	return fmt.Sprintf("of %s cannot be read as %s", wk, rk)
}
