package cli

import (
	"bytes"
	"errors"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"github.com/creack/pty"
)

// buildHerald builds the herald command into a temporary directory.
func buildHerald(t *testing.T) string {
	t.Helper()
	if testing.Short() {
		t.Skip("-short: builds the herald binary (about 20 s without a build cache)")
	}
	bin := filepath.Join(t.TempDir(), "herald")
	cmd := exec.Command("go", "build", "-o", bin, ".")
	cmd.Dir = filepath.Join("..", "..")
	if out, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("go build: %v\n%s", err, out)
	}
	return bin
}

// exitCode is a finished command's exit status.
func exitCode(t *testing.T, err error) int {
	t.Helper()
	var ee *exec.ExitError
	switch {
	case err == nil:
		return 0
	case errors.As(err, &ee):
		return ee.ExitCode()
	}
	t.Fatalf("run: %v", err)
	return -1
}

// TestBuiltBinary runs the client commands through the built binary:
// the replay's progress bar on a pseudo-terminal and none when stderr
// is piped, with the same exact stdout; and each exit code.
func TestBuiltBinary(t *testing.T) {
	bin := buildHerald(t)
	onBoth(t, func(t *testing.T, kind string) {
		// Pages of 2 with 300 ms between them: the replay lasts long
		// enough for the bar to be redrawn while it runs.
		h := startHerald(t, kind, testConfig, "HERALD_WATCH_ENDPOINT__REPLAY_BATCH_DELAY_MS=300")
		for i := 1; i <= 5; i++ {
			notifyHTTP(t, h.url, marsAt(i, "enfo"))
		}
		evs := replayHTTP(t, h.url, `{"event_type":"mars","identifier":{"class":"od"},"from_id":"0"}`)
		var want strings.Builder
		for i, ce := range evs {
			want.WriteString(marsLine(i+1, timeOf(t, ce), i+1, "enfo") + "\n")
		}
		args := []string{"replay", "mars", "class=od", "--from", "0", "--to-id", "mars@5", "--url", h.url}

		t.Run("piped", func(t *testing.T) {
			cmd := exec.Command(bin, args...)
			var out, errOut bytes.Buffer
			cmd.Stdout, cmd.Stderr = &out, &errOut
			if code := exitCode(t, cmd.Run()); code != 0 || out.String() != want.String() || errOut.String() != "" {
				t.Fatalf("exit %d\nstdout:\n%s\nwant:\n%s\nstderr %q", code, out.String(), want.String(), errOut.String())
			}
		})

		t.Run("terminal", func(t *testing.T) {
			ptmx, tty, err := pty.Open()
			if err != nil {
				t.Fatalf("open a pseudo-terminal: %v", err)
			}
			defer ptmx.Close()
			cmd := exec.Command(bin, args...)
			var out bytes.Buffer
			cmd.Stdout, cmd.Stderr = &out, tty
			if err := cmd.Start(); err != nil {
				t.Fatal(err)
			}
			tty.Close()
			screen := make(chan string, 1)
			go func() {
				b, _ := io.ReadAll(ptmx) // ends with EIO once the child has closed the terminal
				screen <- string(b)
			}()
			code := exitCode(t, cmd.Wait())
			text := <-screen
			if code != 0 || out.String() != want.String() {
				t.Fatalf("exit %d\nstdout:\n%s\nwant:\n%s", code, out.String(), want.String())
			}
			// The terminal shows only frames of the bar, each redrawn in
			// place, the last one complete and ended by a newline (CRLF
			// through the terminal).
			frames := strings.Split(text, "\r\x1b[K")
			if frames[0] != "" || len(frames) < 3 {
				t.Fatalf("the terminal shows %q", text)
			}
			frame := regexp.MustCompile(`^replay \[(=*>? *)\] +(\d+)%  (\d+) events?  ([\d.]+|-)/s  (ETA (\S+)|done in \d+\.\ds)$`)
			running := 0
			for _, f := range frames[1 : len(frames)-1] {
				m := frame.FindStringSubmatch(f)
				if m == nil || len(m[1]) != progressBarWidth || m[6] == "" {
					t.Fatalf("frame %q of %q", f, text)
				}
				if m[3] != "0" && m[6] != "-" {
					running++ // events so far, a rate and the time left
				}
			}
			if running == 0 {
				t.Fatalf("no frame shows the replay under way: %q", text)
			}
			last := frames[len(frames)-1]
			if !regexp.MustCompile(`^replay \[={24}\] 100%  5 events  [\d.]+/s  done in \d+\.\ds\r\n$`).MatchString(last) {
				t.Fatalf("final frame %q", last)
			}
		})
	})

	t.Run("exit codes", func(t *testing.T) {
		h := startHerald(t, "in_memory", testConfig)
		down := closedURL(t)
		for _, c := range []struct {
			args   []string
			code   int
			stdout string
			stderr string
		}{
			{[]string{"notify", "alert", "region=asia", "level=1", "--payload", `{"x":1}`, "--url", h.url}, 0, "alert@1\n", ""},
			{[]string{"notify", "alert", "region=asia", "level=1", "--url", h.url}, 1, "", "herald notify: the server refused: 400 Bad Request INVALID_NOTIFICATION_REQUEST: payload is required for event type 'alert'\n"},
			{[]string{"replay", "alert", "--url", h.url}, 2, "", "herald replay: replay needs a start: --from SEQ (0 is the beginning) or --from-date DATE\nRun 'herald replay --help' for usage.\n"},
			{[]string{"schema", "--url", down}, 3, "", "herald schema: cannot connect to " + down + "/api/v1/schema: dial tcp " + strings.TrimPrefix(down, "http://") + ": connect: connection refused\n"},
		} {
			cmd := exec.Command(bin, c.args...)
			cmd.Env = append(os.Environ(), "HERALD_TOKEN=")
			var out, errOut bytes.Buffer
			cmd.Stdout, cmd.Stderr = &out, &errOut
			if code := exitCode(t, cmd.Run()); code != c.code || out.String() != c.stdout || errOut.String() != c.stderr {
				t.Errorf("%q: exit %d stdout %q stderr %q; want %d %q %q", c.args, code, out.String(), errOut.String(), c.code, c.stdout, c.stderr)
			}
		}
	})
}
