package cli

import (
	"encoding/json"
	"flag"
	"fmt"
	"io"
	"os"
	"strconv"
	"strings"
)

// schemaAnswer is the part of GET /api/v1/schema/{event_type}'s answer
// show reads: the payload schema versions of a typed event type.
type schemaAnswer struct {
	EventType string `json:"event_type"`
	Versions  []struct {
		Fingerprint string  `json:"fingerprint"`
		Codec       string  `json:"codec"`
		Schema      string  `json:"schema"`
		FirstSeq    *uint64 `json:"first_seq"`
		LastSeq     *uint64 `json:"last_seq"`
		Current     bool    `json:"current"`
	} `json:"payload_schema_versions"`
}

// show prints the payload schema versions of an event type from the
// answer of GET /api/v1/schema/{event_type} (FILE or standard input):
// with --versions one line per version, with --id FP the CREATE SCHEMA
// text of that version.
func (r *runner) show(args []string) int {
	var versions bool
	var id string
	_, pos, ok := r.parse("show", args, func(fs *flag.FlagSet, _ *flags) {
		fs.BoolVar(&versions, "versions", false, "list the payload schema versions")
		fs.StringVar(&id, "id", "", "print the schema of the version with this fingerprint")
	})
	if !ok {
		return 2
	}
	if versions == (id != "") || len(pos) > 1 {
		return r.usageErr("show needs exactly one of --versions and --id FINGERPRINT, and at most one FILE")
	}
	var in io.Reader = r.stdin
	name := "standard input"
	if len(pos) == 1 {
		f, err := os.Open(pos[0])
		if err != nil {
			fmt.Fprintf(r.stderr, "herald codec: %v\n", err)
			return 1
		}
		defer f.Close()
		in, name = f, pos[0]
	}
	var a schemaAnswer
	if err := json.NewDecoder(in).Decode(&a); err != nil {
		fmt.Fprintf(r.stderr, "herald codec: %s is not the JSON answer of GET /api/v1/schema/{event_type}: %v\n", name, err)
		return 1
	}
	if a.Versions == nil {
		fmt.Fprintf(r.stderr, "herald codec: %s lists no payload_schema_versions: event type '%s' has no typed payload\n", name, a.EventType)
		return 1
	}
	if versions {
		for _, v := range a.Versions {
			seqs := "no records"
			if v.FirstSeq != nil && v.LastSeq != nil {
				seqs = "records " + strconv.FormatUint(*v.FirstSeq, 10) + ".." + strconv.FormatUint(*v.LastSeq, 10)
			}
			cur := ""
			if v.Current {
				cur = " current"
			}
			fmt.Fprintf(r.stdout, "%s codec=%s %s%s\n", v.Fingerprint, v.Codec, seqs, cur)
		}
		return 0
	}
	var known []string
	for _, v := range a.Versions {
		if v.Fingerprint == id {
			fmt.Fprintln(r.stdout, v.Schema)
			return 0
		}
		known = append(known, v.Fingerprint)
	}
	fmt.Fprintf(r.stderr, "herald codec: event type '%s' has no payload schema version %s (its versions: %s)\n", a.EventType, id, strings.Join(known, ", "))
	return 1
}
