package bind

import (
	"fmt"
	"strings"

	"github.com/herald-gateway/herald/codec/types"
)

// The SYSLOG field contract (docs/codecs.md): the fields a target schema
// may declare, each with its exact type and optionality.
var syslogContract = []struct {
	name     string
	kind     types.Kind
	optional bool
}{
	{"facility", types.U8, false},
	{"severity", types.U8, false},
	{"timestamp", types.Datetime, true},
	{"hostname", types.String, true},
	{"app_name", types.String, true},
	{"proc_id", types.String, true},
	{"msg_id", types.String, true},
	{"structured_data", types.String, true},
	{"message", types.String, false},
}

// Syslog field identifiers, indexes into SyslogPlan.Index.
const (
	SyslogFacility = iota
	SyslogSeverity
	SyslogTimestamp
	SyslogHostname
	SyslogAppName
	SyslogProcID
	SyslogMsgID
	SyslogStructuredData
	SyslogMessage
	syslogFields
)

// SyslogPlan maps the SYSLOG contract fields onto the internal schema.
type SyslogPlan struct {
	// Index holds, per contract field (SyslogFacility…SyslogMessage), the
	// internal field index, or -1 when the schema leaves it out.
	Index [syslogFields]int
	// EncodeMissing lists the fields encoding needs that the schema lacks
	// (facility, severity, message); empty when the codec can encode.
	EncodeMissing []string
}

// SyslogContract describes the SYSLOG field contract, one line per field.
func SyslogContract() string {
	var b strings.Builder
	for i, f := range syslogContract {
		if i > 0 {
			b.WriteString(", ")
		}
		b.WriteString(f.name + " " + f.kind.String())
		if f.optional {
			b.WriteString(" OPTIONAL")
		}
	}
	return b.String()
}

func bindSyslog(c *types.Codec, s *types.Schema) (*SyslogPlan, error) {
	if len(c.RFC3339) > 0 {
		return nil, &Error{Codec: c.Name, Field: c.RFC3339[0], Rule: "a SYSLOG codec takes no field encoding rules"}
	}
	p := &SyslogPlan{}
	for i := range p.Index {
		p.Index[i] = -1
	}
	for i, f := range s.Fields {
		found := false
		for j, cf := range syslogContract {
			if cf.name != f.Name {
				continue
			}
			found = true
			want := cf.kind.String()
			if cf.optional {
				want += " OPTIONAL"
			}
			if f.Type.Kind != cf.kind || f.Optional != cf.optional {
				return nil, &Error{Codec: c.Name, Field: f.Name, WireType: "SYSLOG " + want, Internal: fieldDesc(f.Type.String(), f.Optional),
					Rule: fmt.Sprintf("the SYSLOG contract requires %s %s", types.Quote(f.Name), want)}
			}
			p.Index[j] = i
		}
		if !found {
			return nil, &Error{Codec: c.Name, Field: f.Name, Internal: fieldDesc(f.Type.String(), f.Optional),
				Rule: "the SYSLOG contract has no such field; a SYSLOG target schema declares a subset of: " + SyslogContract()}
		}
	}
	for _, j := range []int{SyslogFacility, SyslogSeverity, SyslogMessage} {
		if p.Index[j] < 0 {
			p.EncodeMissing = append(p.EncodeMissing, syslogContract[j].name)
		}
	}
	return p, nil
}
