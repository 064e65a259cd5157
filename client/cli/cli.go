// Package cli is herald's command-line client: the subcommands `herald
// notify`, `watch`, `replay`, `schema` and `session`, which talk to a
// running herald through its public API (package github.com/herald-gateway/herald/client). It
// parses the arguments, prints what the server answers and maps the
// outcome to an exit code:
//
//	0  done
//	1  the server refused (its message is printed)
//	2  usage error (the bad argument is named)
//	3  the server cannot be reached
//
// It knows nothing of the server's internals, and main only dispatches
// to Main.
package cli

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"strings"
	"time"

	"golang.org/x/term"

	"github.com/herald-gateway/herald/client"
)

// Exit codes.
const (
	ExitOK       = 0
	ExitRefused  = 1
	ExitUsage    = 2
	ExitNoServer = 3
	// ExitInterrupted is a replay stopped by SIGINT or SIGTERM before
	// its end (128 + SIGINT, as shells report it).
	ExitInterrupted = 130
)

// DefaultURL is the server a command talks to without --url: herald's
// default listen address.
const DefaultURL = "http://127.0.0.1:8000"

// Commands lists the subcommands Main serves.
var Commands = []string{"notify", "watch", "replay", "schema", "session"}

// IsCommand reports whether name is one of Commands.
func IsCommand(name string) bool {
	for _, c := range Commands {
		if c == name {
			return true
		}
	}
	return false
}

// Usage is the summary of the client commands, for herald's help.
const Usage = `  herald notify EVENT_TYPE KEY=VALUE... [--payload JSON | --payload-file FILE | --raw FILE --content-type TYPE]
                                   publish a notification; prints its id
  herald watch EVENT_TYPE [FILTER...] [--from SEQ | --from-date DATE] [--where PREDICATE] [--output text|json]
                                   print notifications as they arrive, resuming by itself after a disconnect
  herald replay EVENT_TYPE [FILTER...] (--from SEQ | --from-date DATE) [--to-id SEQ | --to-date DATE] [--where ...]
                                   print history, with a progress bar when stderr is a terminal
  herald schema [EVENT_TYPE]       print the event types' schemas
  herald session                   an interactive WebSocket session (CREATE SUBSCRIPTION ..., DESCRIBE EVENT TYPE ...)
                                   Client flags, before or after the command: --url URL (or $HERALD_URL, default
                                   ` + DefaultURL + `), --token TOKEN (or $HERALD_TOKEN), --insecure (self-signed
                                   test servers only); herald COMMAND --help for each`

const filterHelp = `Filters: key=value, key>=v, key<v (also > and <=), key=a,b (one of),
key=lo..hi (between, inclusive). Comparisons and ranges apply to IntHandler
and FloatHandler fields, lists to those and EnumHandler fields; any other
field takes its value literally.
`

// usageError is a bad command line.
type usageError struct{ msg string }

func (e *usageError) Error() string { return e.msg }

func usagef(format string, args ...any) error {
	return &usageError{fmt.Sprintf(format, args...)}
}

// streams holds a command's streams and environment.
type streams struct {
	stdin          io.Reader
	stdout, stderr io.Writer
	env            []string
	now            func() time.Time
}

// ValueFlags are the client flags that take a value, for a caller that
// moves flags given before the command name after it.
var ValueFlags = []string{"url", "token"}

// getenv looks a variable up in the environment Main was given.
func (s *streams) getenv(name string) string {
	v := ""
	for _, kv := range s.env {
		if k, val, ok := strings.Cut(kv, "="); ok && k == name {
			v = val
		}
	}
	return v
}

// Main runs one client command (cmd is one of Commands) with its
// arguments and returns the exit code. env is the process environment
// ($HERALD_URL, $HERALD_TOKEN); ctx ends the command (a watch or session then exits
// 0, a replay 130).
func Main(ctx context.Context, cmd string, args, env []string, stdin io.Reader, stdout, stderr io.Writer) int {
	s := &streams{stdin: stdin, stdout: stdout, stderr: stderr, env: env, now: time.Now}
	var err error
	switch cmd {
	case "notify":
		err = s.notify(ctx, args)
	case "watch":
		err = s.stream(ctx, client.Watch, args)
	case "replay":
		err = s.stream(ctx, client.Replay, args)
	case "schema":
		err = s.schema(ctx, args)
	case "session":
		err = s.session(ctx, args)
	default:
		err = usagef("unknown client command %q (the client commands are %s)", cmd, strings.Join(Commands, ", "))
	}
	return s.exit(cmd, err)
}

// errHelp is returned for --help: the usage was printed, exit 0.
var errHelp = errors.New("help")

// errSilent ends a command with exit code 1 after it printed its reasons.
var errSilent = errors.New("refused")

// exit prints err and maps it to the exit code.
func (s *streams) exit(cmd string, err error) int {
	var ue *usageError
	var ae *client.APIError
	var ce *client.ConnectError
	var arg *ArgError
	switch {
	case err == nil, errors.Is(err, errHelp):
		return ExitOK
	case err == errUsagePrinted:
		return ExitUsage
	case errors.As(err, &arg):
		fmt.Fprintf(s.stderr, "herald %s: %s\nRun 'herald %s --help' for usage.\n", cmd, arg.Error(), cmd)
		return ExitUsage
	case errors.Is(err, errInterrupted):
		return ExitInterrupted
	case errors.Is(err, errSilent):
		return ExitRefused
	case errors.As(err, &ue):
		fmt.Fprintf(s.stderr, "herald %s: %s\nRun 'herald %s --help' for usage.\n", cmd, ue.msg, cmd)
		return ExitUsage
	case errors.As(err, &ae):
		fmt.Fprintf(s.stderr, "herald %s: the server refused: %s\n", cmd, ae.Error())
		return ExitRefused
	case errors.As(err, &ce):
		fmt.Fprintf(s.stderr, "herald %s: %v\n", cmd, err)
		return ExitNoServer
	}
	fmt.Fprintf(s.stderr, "herald %s: %v\n", cmd, err)
	return ExitRefused
}

// errInterrupted is a replay ended by the context before its end.
var errInterrupted = errors.New("interrupted")

// clientFlags are the flags every client command takes.
type clientFlags struct {
	url      string
	token    string
	insecure bool
}

// newFlags makes a command's flag set with the client flags; usage is
// the command's help text, printed for --help and after a bad flag.
func (s *streams) newFlags(name, usage string) (*flag.FlagSet, *clientFlags) {
	fs := flag.NewFlagSet("herald "+name, flag.ContinueOnError)
	fs.SetOutput(s.stderr)
	cf := &clientFlags{}
	fs.StringVar(&cf.url, "url", "", "herald's base `URL` (default $HERALD_URL, else "+DefaultURL+")")
	fs.StringVar(&cf.token, "token", "", "bearer `TOKEN` for authentication (default $HERALD_TOKEN)")
	fs.BoolVar(&cf.insecure, "insecure", false, "do not verify the server's TLS certificate (self-signed test servers only)")
	fs.Usage = func() {
		fmt.Fprint(s.stderr, usage)
		fmt.Fprintln(s.stderr, "\nFlags:")
		fs.PrintDefaults()
	}
	return fs, cf
}

// parse parses flags and positional arguments in any order (flags may
// follow the event type and filters). It returns the positional
// arguments.
func parse(fs *flag.FlagSet, args []string) ([]string, error) {
	var pos []string
	for {
		if err := fs.Parse(args); err != nil {
			if errors.Is(err, flag.ErrHelp) {
				return nil, errHelp
			}
			// The flag package has printed the problem and the usage.
			return nil, errUsagePrinted
		}
		rest := fs.Args()
		if len(rest) == 0 {
			return pos, nil
		}
		if len(args) > 0 && len(rest) < len(args) && args[len(args)-len(rest)-1] == "--" {
			return append(pos, rest...), nil // everything after -- is positional
		}
		pos = append(pos, rest[0])
		args = rest[1:]
	}
}

// errUsagePrinted is a flag error the flag package has already printed.
var errUsagePrinted = &usageError{"bad flag"}

// client builds the API client from the client flags.
func (s *streams) client(cf *clientFlags) (*client.Client, error) {
	token := cf.token
	if token == "" {
		token = s.getenv("HERALD_TOKEN")
	}
	url := cf.url
	if url == "" {
		url = s.getenv("HERALD_URL")
	}
	if url == "" {
		url = DefaultURL
	}
	c, err := client.New(url, client.Options{Token: token, Insecure: cf.insecure})
	if err != nil {
		return nil, usagef("--url: %v", err)
	}
	return c, nil
}

// isTerminal reports whether w is a terminal.
func isTerminal(w any) bool {
	f, ok := w.(*os.File)
	return ok && term.IsTerminal(int(f.Fd()))
}
