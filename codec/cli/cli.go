// Package cli is the `herald codec` command line: check definitions,
// decode and encode single payloads through a codec, print fingerprints
// and the compatibility verdict between two definition files, and show
// the payload schema versions of an event type. main wires
// `herald codec …` to Main.
//
// It must not hold state between calls or touch anything but the files
// named on its command line and the streams it is given.
package cli

import (
	"bufio"
	"bytes"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"strings"
	"time"

	"github.com/herald-gateway/herald/codec"
	"github.com/herald-gateway/herald/codec/catalog"
	"github.com/herald-gateway/herald/codec/ddl"
	"github.com/herald-gateway/herald/codec/resource"
	"github.com/herald-gateway/herald/codec/types"
	"github.com/herald-gateway/herald/codec/values"
	wjson "github.com/herald-gateway/herald/codec/wire/json"
	"github.com/herald-gateway/herald/codec/workers"
)

// Usage is the text `herald codec --help` prints.
const Usage = `Usage: herald codec COMMAND [FLAGS] [ARGS]

Try codec definitions and payloads from the command line.

Commands:
  check [--verdicts] [--resource R]... DEFS
        Parse and validate a definitions file (statements separated by ';')
        and print SHOW CREATE of every entity; with --verdicts, then the
        compatibility verdict of every ALTER, per wire format, with each
        breaking step. On error print DEFS:LINE:COL: message and exit 1.
  decode --defs DEFS --codec NAME [--reveal] [--resource R]... [FILE]
        Decode one payload (FILE or standard input) and print each row as
        one JSON object per line (a JAQ-native or protobuf payload may
        unfold into several rows): fields in internal schema order, integers
        exact, floats shortest with "NaN", "Infinity", "-Infinity", bytes as
        padded base64, datetimes as RFC 3339 UTC, optional nulls as null,
        SENSITIVE values as "***" unless --reveal. On a decode error print
        error[CODE]: message and exit 1.
  encode --defs DEFS --codec NAME [--batch] [--resource R]... [FILE]
        Read rows in that same form (one JSON object per line, FILE or
        standard input) and write the payload bytes to standard output: one
        payload per row (text payloads, JSON, YAML, TOML, XML and SYSLOG,
        end with a newline), or with --batch the format's batch container
        (or ON EMITTING BATCH's output).
  fingerprint --defs DEFS NAME
        Print the fingerprints of every entity named NAME: the first 64 bits
        of SHA-256 of its canonical form and its 32-bit FNV-1a id. The
        canonical form of a schema is its SHOW CREATE text; a codec's is its
        SHOW CREATE text followed by the canonical forms of the wire schema
        (or resource version) and the internal schema it references, so a
        change to any of them changes the codec's fingerprint.
  diff OLD_DEFS NEW_DEFS
        Compare two definitions files entity by entity and print the
        compatibility verdict of every changed schema per wire format, and
        for a changed codec the parts of its canonical form that changed
        (and, for a protobuf codec, the verdict on its messages). Exit 1
        when a change breaks compatibility.
  show --versions [FILE]
  show --id FINGERPRINT [FILE]
        Read the answer of GET /api/v1/schema/{event_type} (FILE or standard
        input, e.g. curl -s HOST/api/v1/schema/TYPE | herald codec show
        --versions) and print the event type's payload schema versions, the
        registry of past schemas: one line each with its fingerprint, codec,
        the sequences written under it and whether it is current; or, with
        --id, the CREATE SCHEMA text of one version.

Each verdict names the rule that decided it: by field name for JSON and
CBOR (payloads carry names: reordering is free, renaming is not), by
position for AVRO (a raw datum carries no names: a position is forever, so
inserting, reordering or deleting a field breaks, renaming is free), by
field number for protobuf (a number is forever: renumbering or deleting a
field without reserving its number breaks, renaming is free). The
elements of a fixed ARRAY axis are positional in every format.

--resource NAME=DIR or NAME@VERSION=DIR (repeatable) loads the files under
DIR as version 1 (or VERSION) of resource NAME, for protobuf codecs
(CREATE CODEC … FROM PROTOBUF USING RESOURCE NAME VERSION n|LATEST …).

Exit status: 0 on success, 1 on an error in the input, 2 on a usage error.
`

// Main runs `herald codec` with args (not including "codec") and returns
// the exit status.
func Main(args []string, stdin io.Reader, stdout, stderr io.Writer) int {
	if len(args) == 0 {
		fmt.Fprint(stderr, Usage)
		return 2
	}
	r := &runner{stdin: stdin, stdout: stdout, stderr: stderr}
	switch args[0] {
	case "-h", "-help", "--help", "help":
		fmt.Fprint(stdout, Usage)
		return 0
	case "check":
		return r.check(args[1:])
	case "decode":
		return r.decode(args[1:])
	case "encode":
		return r.encode(args[1:])
	case "fingerprint":
		return r.fingerprint(args[1:])
	case "diff":
		return r.diff(args[1:])
	case "show":
		return r.show(args[1:])
	}
	fmt.Fprintf(stderr, "herald codec: unknown command %q (expected check, decode, encode, fingerprint, diff or show; see --help)\n", args[0])
	return 2
}

type runner struct {
	stdin          io.Reader
	stdout, stderr io.Writer
	res            *resource.Set
}

type flags struct {
	defs, codec             string
	reveal, batch, verdicts bool
	resources               resourceFlag
}

// resourceFlag collects --resource NAME[@N]=DIR values.
type resourceFlag []string

func (r *resourceFlag) String() string { return strings.Join(*r, ",") }

func (r *resourceFlag) Set(v string) error {
	if _, _, _, err := resource.ParseSpec(v); err != nil {
		return err
	}
	*r = append(*r, v)
	return nil
}

// loadResources reads the --resource directories into the runner's set.
func (r *runner) loadResources(f *flags) bool {
	r.res = resource.NewSet()
	for _, spec := range f.resources {
		name, version, dir, _ := resource.ParseSpec(spec)
		files, err := resource.LoadDir(dir)
		if err == nil {
			err = r.res.Add(name, version, files)
		}
		if err != nil {
			fmt.Fprintf(r.stderr, "herald codec: --resource %s: %v\n", spec, err)
			return false
		}
	}
	return true
}

// parse reads flags anywhere among the positional arguments.
func (r *runner) parse(cmd string, args []string, want func(*flag.FlagSet, *flags)) (*flags, []string, bool) {
	fs := flag.NewFlagSet("herald codec "+cmd, flag.ContinueOnError)
	fs.SetOutput(r.stderr)
	f := &flags{}
	want(fs, f)
	fs.Var(&f.resources, "resource", "NAME=DIR or NAME@VERSION=DIR: a resource for protobuf codecs (repeatable)")
	var pos []string
	for {
		if err := fs.Parse(args); err != nil {
			if errors.Is(err, flag.ErrHelp) {
				return nil, nil, false
			}
			return nil, nil, false
		}
		if fs.NArg() == 0 {
			return f, pos, r.loadResources(f)
		}
		pos = append(pos, fs.Arg(0))
		args = fs.Args()[1:]
	}
}

func (r *runner) usageErr(format string, args ...any) int {
	fmt.Fprintf(r.stderr, "herald codec: "+format+" (see --help)\n", args...)
	return 2
}

// load executes a definitions file; errors are printed as FILE:LINE:COL.
func (r *runner) load(path string) (*catalog.Catalog, bool) {
	cat, _, ok := r.loadResults(path)
	return cat, ok
}

func (r *runner) loadResults(path string) (*catalog.Catalog, []catalog.Result, bool) {
	src, err := os.ReadFile(path)
	if err != nil {
		fmt.Fprintf(r.stderr, "herald codec: reading definitions: %v\n", err)
		return nil, nil, false
	}
	cat := catalog.NewWithResources(r.res)
	results, err := cat.Exec(string(src))
	if err != nil {
		var de *ddl.Error
		if errors.As(err, &de) {
			fmt.Fprintf(r.stderr, "%s:%d:%d: %s\n", path, de.Pos.Line, de.Pos.Col, de.Msg)
		} else {
			fmt.Fprintf(r.stderr, "%s: %v\n", path, err)
		}
		return nil, nil, false
	}
	return cat, results, true
}

func (r *runner) check(args []string) int {
	f, pos, ok := r.parse("check", args, func(fs *flag.FlagSet, f *flags) {
		fs.BoolVar(&f.verdicts, "verdicts", false, "print the compatibility verdict of every ALTER")
	})
	if !ok {
		return 2
	}
	if len(pos) != 1 {
		return r.usageErr("check takes exactly one definitions file")
	}
	cat, results, ok := r.loadResults(pos[0])
	if !ok {
		return 1
	}
	for i, k := range cat.Keys() {
		text, _ := cat.ShowCreate(k)
		if i > 0 {
			fmt.Fprintln(r.stdout)
		}
		fmt.Fprintln(r.stdout, text)
	}
	if f.verdicts {
		for _, res := range results {
			if len(res.Verdicts) == 0 {
				continue
			}
			fmt.Fprintf(r.stdout, "\n-- verdict of the ALTER at %s:%s\n", pos[0], res.Stmt.At())
			for _, v := range res.Verdicts {
				fmt.Fprint(r.stdout, v.String())
			}
		}
	}
	return 0
}

func (r *runner) codecFlags(fs *flag.FlagSet, f *flags) {
	fs.StringVar(&f.defs, "defs", "", "definitions file")
	fs.StringVar(&f.codec, "codec", "", "codec name")
}

func (r *runner) compile(cmd string, f *flags) (*codec.Codec, int) {
	if f.defs == "" || f.codec == "" {
		return nil, r.usageErr("%s needs --defs and --codec", cmd)
	}
	cat, ok := r.load(f.defs)
	if !ok {
		return nil, 1
	}
	c, err := codec.Compile(cat, f.codec, codec.Options{Workers: workers.New(workers.Config{Workers: 1, Timeout: 10 * time.Second})})
	if err != nil {
		fmt.Fprintf(r.stderr, "herald codec: %v\n", err)
		return nil, 1
	}
	return c, 0
}

func (r *runner) input(pos []string) ([]byte, bool) {
	var (
		b   []byte
		err error
	)
	if len(pos) == 1 {
		b, err = os.ReadFile(pos[0])
	} else {
		b, err = io.ReadAll(r.stdin)
	}
	if err != nil {
		fmt.Fprintf(r.stderr, "herald codec: reading input: %v\n", err)
		return nil, false
	}
	return b, true
}

func (r *runner) codeErr(prefix string, err error) int {
	code := values.CodeOf(err)
	if code == "" {
		code = "ERROR"
	}
	fmt.Fprintf(r.stderr, "error[%s]: %s%v\n", code, prefix, err)
	return 1
}

func (r *runner) decode(args []string) int {
	f, pos, ok := r.parse("decode", args, func(fs *flag.FlagSet, f *flags) {
		r.codecFlags(fs, f)
		fs.BoolVar(&f.reveal, "reveal", false, "print SENSITIVE values")
	})
	if !ok {
		return 2
	}
	if len(pos) > 1 {
		return r.usageErr("decode takes at most one payload file")
	}
	c, st := r.compile("decode", f)
	if c == nil {
		return st
	}
	if c.DecodeErr != nil {
		return r.codeErr("", c.DecodeErr)
	}
	payload, ok := r.input(pos)
	if !ok {
		return 1
	}
	b := c.NewBuilder(nil)
	defer b.Release()
	if _, err := c.NewDecoder().Decode(payload, b); err != nil {
		return r.codeErr("", err)
	}
	rec, err := b.NewRecordBatch()
	if err != nil {
		return r.codeErr("", err)
	}
	defer rec.Release()
	enc := wjson.NewRowViewEncoder(c.Schema, f.reveal)
	var out []byte
	for i := 0; i < int(rec.NumRows()); i++ {
		if out, err = enc.AppendRow(out, rec, i); err != nil {
			return r.codeErr("", err)
		}
		out = append(out, '\n')
	}
	_, _ = r.stdout.Write(out)
	return 0
}

func (r *runner) encode(args []string) int {
	f, pos, ok := r.parse("encode", args, func(fs *flag.FlagSet, f *flags) {
		r.codecFlags(fs, f)
		fs.BoolVar(&f.batch, "batch", false, "write the format's batch container")
	})
	if !ok {
		return 2
	}
	if len(pos) > 1 {
		return r.usageErr("encode takes at most one rows file")
	}
	c, st := r.compile("encode", f)
	if c == nil {
		return st
	}
	if c.EncodeErr != nil {
		return r.codeErr("", c.EncodeErr)
	}
	in, ok := r.input(pos)
	if !ok {
		return 1
	}
	b := c.NewBuilder(nil)
	defer b.Release()
	dec := wjson.NewRowViewDecoder(c.Schema)
	sc := bufio.NewScanner(bytes.NewReader(in))
	sc.Buffer(nil, len(in)+1)
	line := 0
	for sc.Scan() {
		line++
		if len(bytes.TrimSpace(sc.Bytes())) == 0 {
			continue
		}
		if _, err := dec.Decode(sc.Bytes(), b); err != nil {
			return r.codeErr(fmt.Sprintf("line %d: ", line), err)
		}
	}
	rec, err := b.NewRecordBatch()
	if err != nil {
		return r.codeErr("", err)
	}
	defer rec.Release()
	text := c.Format != types.CBOR && c.Format != types.AVRO && c.Format != types.PROTOBUF
	var out []byte
	idx := make([]int, rec.NumRows())
	for i := range idx {
		idx[i] = i
	}
	if f.batch {
		for len(idx) > 0 {
			var n int
			if out, n, err = c.Batch.AppendBatch(out, rec, idx); err != nil {
				return r.codeErr("", err)
			}
			idx = idx[n:]
			if text {
				out = newline(out)
			}
		}
	} else {
		for _, i := range idx {
			if out, err = c.Encoder.AppendRow(out, rec, i); err != nil {
				if c.Plan.Codec.IsJaq() {
					return r.codeErr("", err) // names its row itself
				}
				return r.codeErr(fmt.Sprintf("row %d: ", i+1), err)
			}
			if text {
				out = newline(out)
			}
		}
	}
	_, _ = r.stdout.Write(out)
	return 0
}

// newline ends a text payload with one newline.
func newline(b []byte) []byte {
	if len(b) > 0 && b[len(b)-1] == '\n' {
		return b
	}
	return append(b, '\n')
}

func (r *runner) fingerprint(args []string) int {
	f, pos, ok := r.parse("fingerprint", args, func(fs *flag.FlagSet, f *flags) {
		fs.StringVar(&f.defs, "defs", "", "definitions file")
	})
	if !ok {
		return 2
	}
	if f.defs == "" || len(pos) != 1 {
		return r.usageErr("fingerprint needs --defs and one entity name")
	}
	cat, ok := r.load(f.defs)
	if !ok {
		return 1
	}
	found := false
	for _, k := range cat.Keys() {
		if k.Name != pos[0] {
			continue
		}
		found = true
		fp, _ := cat.Fingerprint(k)
		fmt.Fprintf(r.stdout, "%s sha256/64=%s fnv1a32=%s\n", k, fp.ID64, fp.ID32)
	}
	if !found {
		fmt.Fprintf(r.stderr, "herald codec: %s defines no entity named %s\n", f.defs, types.Quote(pos[0]))
		return 1
	}
	return 0
}

func (r *runner) diff(args []string) int {
	_, pos, ok := r.parse("diff", args, func(*flag.FlagSet, *flags) {})
	if !ok {
		return 2
	}
	if len(pos) != 2 {
		return r.usageErr("diff takes two definitions files")
	}
	old, ok := r.load(pos[0])
	if !ok {
		return 1
	}
	cur, ok := r.load(pos[1])
	if !ok {
		return 1
	}
	breaking := false
	var b strings.Builder
	for _, ch := range catalog.Diff(old, cur) {
		b.WriteString(ch.String())
		for _, v := range ch.Verdicts {
			if !v.Backward() || !v.Forward() {
				breaking = true
			}
		}
	}
	fmt.Fprint(r.stdout, b.String())
	if breaking {
		return 1
	}
	return 0
}
