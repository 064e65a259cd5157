package main

// TestDocsShellBlocks runs the shell blocks of README.md and of the
// guides in docs/ as a reader would type them, against a running herald, and checks their
// output. A guide marks its blocks with the fence's info string:
//
//	```sh                 run; it must exit 0
//	```sh {background}    run in a terminal of its own (stdin held open)
//	                      while the next blocks run; stopped at the end
//	```sh {server}        a background block that starts herald: the next
//	                      block runs once http://127.0.0.1:8000/ready is 200
//	```output             the output (stdout and stderr) of the sh block
//	                      just above; "…" in a line matches any text, a
//	                      line that is only "…" any number of lines
//	```output {ready=N}   after a background block: its first N lines must
//	                      have appeared before the next block runs
//
// A background block's output must be complete by the end of the guide.
// Every other fence (```shell, ```yaml, ```text, …) is only shown.
//
// Each guide runs in a network namespace of its own (unshare -rn), so
// that herald listens on port 8000 as the guides say, whatever else runs
// on the machine, and on a data directory of its own: the one difference
// from a reader's terminal is HERALD_NOTIFICATION_BACKEND__JETSTREAM__DATA_DIR,
// set to a fresh directory, as a fresh clone has no ./data. Blocks run
// from the repository root with bash; variables a block sets (exported or
// not) and its working directory carry over to the next block, as in one
// terminal.

import (
	"bytes"
	"errors"
	"fmt"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"syscall"
	"testing"
	"time"
	"unsafe"

	"github.com/herald-gateway/herald/internal/testkit"
)

// docsGuideEnv names, in the re-executed test binary, the guide it runs
// inside the network namespace.
const docsGuideEnv = "HERALD_DOCS_TEST_GUIDE"

// fence is one fenced code block of a guide.
type fence struct {
	lang  string            // the first word of the info string
	attrs map[string]string // {background}, {ready=2}: key → value ("" for a flag)
	body  string
	line  int // the line of the opening fence
}

// fenceAttrs matches the {…} part of an info string.
var fenceAttrs = regexp.MustCompile(`\{([^}]*)\}`)

// parseFences returns the top-level fenced code blocks of a Markdown file.
func parseFences(text string) []fence {
	var out []fence
	lines := strings.Split(text, "\n")
	for i := 0; i < len(lines); i++ {
		l := lines[i]
		if !strings.HasPrefix(l, "```") {
			continue
		}
		info := strings.TrimSpace(strings.TrimPrefix(l, "```"))
		f := fence{line: i + 1, attrs: map[string]string{}}
		f.lang, _, _ = strings.Cut(info, " ")
		f.lang = strings.TrimSpace(f.lang)
		if m := fenceAttrs.FindStringSubmatch(info); m != nil {
			for _, a := range strings.Fields(m[1]) {
				k, v, _ := strings.Cut(a, "=")
				f.attrs[k] = v
			}
		}
		var body []string
		for i++; i < len(lines) && lines[i] != "```"; i++ {
			body = append(body, lines[i])
		}
		f.body = strings.Join(body, "\n") + "\n"
		out = append(out, f)
	}
	return out
}

// step is one sh block with the output block after it, if any.
type step struct {
	fence
	want  *fence
	ready int // lines of want to wait for after a background block
}

// steps pairs each sh block of a guide with its output block.
func steps(t *testing.T, fences []fence) []step {
	var out []step
	for i, f := range fences {
		switch f.lang {
		case "sh":
			out = append(out, step{fence: f})
		case "output":
			if i == 0 || fences[i-1].lang != "sh" {
				t.Fatalf("line %d: an output block must follow a sh block", f.line)
			}
			s := &out[len(out)-1]
			s.want = &fences[i]
			if r, ok := f.attrs["ready"]; ok {
				if _, err := fmt.Sscan(r, &s.ready); err != nil {
					t.Fatalf("line %d: ready=%q: %v", f.line, r, err)
				}
			}
		}
	}
	return out
}

// outputPattern compiles an output block: "…" matches any text within a
// line, a line that is only "…" any number of whole lines.
func outputPattern(want string) *regexp.Regexp {
	var b strings.Builder
	b.WriteString(`^`)
	for _, l := range strings.Split(strings.TrimSuffix(want, "\n"), "\n") {
		if l == "…" {
			b.WriteString(`(?:[^\n]*\n)*`)
			continue
		}
		parts := strings.Split(l, "…")
		for i, p := range parts {
			if i > 0 {
				b.WriteString(`[^\n]*`)
			}
			b.WriteString(regexp.QuoteMeta(p))
		}
		b.WriteString(`\n`)
	}
	b.WriteString(`$`)
	return regexp.MustCompile(b.String())
}

// matchOutput reports whether got matches the output block want. Blank
// lines at the end of either do not count.
func matchOutput(want, got string) bool {
	want = strings.TrimRight(want, "\n") + "\n"
	if got = strings.TrimRight(got, "\n"); got != "" {
		got += "\n"
	}
	return outputPattern(want).MatchString(got)
}

// firstLines is the first n lines of s, each with its newline.
func firstLines(s string, n int) string {
	lines := strings.SplitAfter(s, "\n")
	if len(lines) < n {
		n = len(lines)
	}
	return strings.Join(lines[:n], "")
}

// waitUntil polls cond until it holds or the deadline passes.
func waitUntil(t *testing.T, what string, timeout time.Duration, cond func() bool, detail func() string) {
	t.Helper()
	deadline := time.Now().Add(timeout)
	for !cond() {
		if time.Now().After(deadline) {
			t.Fatalf("%s: not within %s\n%s", what, timeout, detail())
		}
		time.Sleep(20 * time.Millisecond)
	}
}

// docGuides lists the guides whose shell blocks the test runs: README.md
// and docs/*.md.
func docGuides(t *testing.T) map[string][]step {
	files, err := filepath.Glob("docs/*.md")
	if err != nil || len(files) == 0 {
		t.Fatalf("no guides in docs/: %v", err)
	}
	files = append(files, "README.md")
	out := map[string][]step{}
	for _, f := range files {
		text, err := os.ReadFile(f)
		if err != nil {
			t.Fatal(err)
		}
		if s := steps(t, parseFences(string(text))); len(s) > 0 {
			out[filepath.Base(f)] = s
		}
	}
	return out
}

func TestDocsShellBlocks(t *testing.T) {
	guides := docGuides(t)
	for _, g := range []string{"getting-started.md", "README.md"} {
		if _, ok := guides[g]; !ok {
			t.Fatalf("%s has no sh blocks", g)
		}
	}
	names := make([]string, 0, len(guides))
	for n := range guides {
		names = append(names, n)
	}
	slices.Sort(names)
	inside := os.Getenv(docsGuideEnv)
	if inside == "" {
		// The guides after getting started find herald on the PATH where
		// it put it; build it once for all of them.
		build := exec.Command("go", "build", "-o", "bin/herald", ".")
		if out, err := build.CombinedOutput(); err != nil {
			t.Fatalf("go build -o bin/herald .: %v\n%s", err, out)
		}
	}
	for _, name := range names {
		t.Run(name, func(t *testing.T) {
			if inside == "" {
				runInNamespace(t, name)
				return
			}
			if inside != name {
				// Not reached through runInNamespace's -run pattern; a
				// direct run with the variable set runs one guide only.
				t.Skipf("%s=%s: this process runs only the guide %s, in the namespace runInNamespace made for it; unset %s to run every guide", docsGuideEnv, inside, inside, docsGuideEnv)
			}
			runGuide(t, guides[name])
		})
	}
}

// runInNamespace runs this test again for one guide in a new user and
// network namespace.
func runInNamespace(t *testing.T, guide string) {
	exe, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	pattern := "^TestDocsShellBlocks$/^" + regexp.QuoteMeta(guide) + "$"
	cmd := exec.Command("unshare", "--user", "--map-root-user", "--net", exe, "-test.run", pattern, "-test.v", "-test.count=1")
	cmd.Env = append(os.Environ(), docsGuideEnv+"="+guide)
	out, err := cmd.CombinedOutput()
	if err != nil {
		t.Fatalf("%s as written: %v\n%s", guide, err, out)
	}
	if !bytes.Contains(out, []byte("--- PASS: TestDocsShellBlocks/"+guide)) {
		t.Fatalf("%s did not run:\n%s", guide, out)
	}
}

// loopbackUp sets the loopback interface of this network namespace up.
func loopbackUp(t *testing.T) {
	fd, err := syscall.Socket(syscall.AF_INET, syscall.SOCK_DGRAM, 0)
	if err != nil {
		t.Fatal(err)
	}
	defer syscall.Close(fd)
	var ifr struct {
		name  [syscall.IFNAMSIZ]byte
		flags uint16
		_     [24]byte
	}
	copy(ifr.name[:], "lo")
	if _, _, e := syscall.Syscall(syscall.SYS_IOCTL, uintptr(fd), syscall.SIOCGIFFLAGS, uintptr(unsafe.Pointer(&ifr))); e != 0 {
		t.Fatalf("SIOCGIFFLAGS lo: %v", e)
	}
	ifr.flags |= syscall.IFF_UP
	if _, _, e := syscall.Syscall(syscall.SYS_IOCTL, uintptr(fd), syscall.SIOCSIFFLAGS, uintptr(unsafe.Pointer(&ifr))); e != 0 {
		t.Fatalf("SIOCSIFFLAGS lo: %v", e)
	}
}

// background is a block running in a terminal of its own.
type background struct {
	step
	cmd    *exec.Cmd
	out    *testkit.Buffer
	exited chan struct{} // closed when the block has exited
}

// runGuide runs the steps of one guide in order.
func runGuide(t *testing.T, guide []step) {
	loopbackUp(t)
	root, err := os.Getwd()
	if err != nil {
		t.Fatal(err)
	}
	tmp := t.TempDir()
	// The reader's environment, without herald's settings.
	var env []string
	for _, kv := range os.Environ() {
		k, _, _ := strings.Cut(kv, "=")
		ku := strings.ToUpper(k)
		if strings.HasPrefix(ku, "HERALD_") || strings.HasPrefix(ku, "AVISOSERVER_") || k == "RUST_LOG" || k == "NATS_TOKEN" || k == "GOFLAGS" {
			continue
		}
		if k == "PATH" {
			kv = "PATH=" + filepath.Join(root, "bin") + string(os.PathListSeparator) + strings.TrimPrefix(kv, "PATH=")
		}
		env = append(env, kv)
	}
	env = append(env, "HERALD_NOTIFICATION_BACKEND__JETSTREAM__DATA_DIR="+filepath.Join(tmp, "data"))
	dir := root
	var bgs []*background
	t.Cleanup(func() {
		for _, b := range bgs {
			_ = syscall.Kill(-b.cmd.Process.Pid, syscall.SIGTERM)
			select {
			case <-b.exited:
			case <-time.After(40 * time.Second):
				_ = syscall.Kill(-b.cmd.Process.Pid, syscall.SIGKILL)
				<-b.exited
			}
		}
	})
	state := filepath.Join(tmp, "state")
	for i, s := range guide {
		where := fmt.Sprintf("block %d (line %d)", i+1, s.line)
		if hasFlag(s.attrs, "background") || hasFlag(s.attrs, "server") {
			b := &background{step: s, out: &testkit.Buffer{}, exited: make(chan struct{})}
			b.cmd = exec.Command("bash", "-c", s.body)
			b.cmd.Dir, b.cmd.Env = dir, env
			b.cmd.Stdout, b.cmd.Stderr = b.out, b.out
			b.cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
			if _, err := b.cmd.StdinPipe(); err != nil { // held open: a terminal's keyboard
				t.Fatal(err)
			}
			if err := b.cmd.Start(); err != nil {
				t.Fatalf("%s: %v", where, err)
			}
			bgs = append(bgs, b)
			go func() { _ = b.cmd.Wait(); close(b.exited) }()
			gone := func() bool {
				select {
				case <-b.exited:
					return true
				default:
					return false
				}
			}
			if hasFlag(s.attrs, "server") {
				waitUntil(t, where+": herald ready on port 8000", 90*time.Second, func() bool {
					if gone() {
						t.Fatalf("%s: herald exited:\n%s", where, b.out.String())
					}
					resp, err := http.Get("http://127.0.0.1:8000/ready")
					if err != nil {
						return false
					}
					resp.Body.Close()
					return resp.StatusCode == http.StatusOK
				}, b.out.String)
			}
			if s.want != nil && s.ready > 0 {
				want := firstLines(s.want.body, s.ready)
				waitUntil(t, where+": the first output", 30*time.Second, func() bool {
					return matchOutput(want, firstLines(b.out.String(), s.ready))
				}, func() string { return "want\n" + want + "got\n" + b.out.String() })
			}
			continue
		}
		script := "set -euo pipefail\nset -a\n" + s.body + "\n" +
			"declare -px > " + shellQuote(state) + ".vars\npwd > " + shellQuote(state) + ".pwd\n"
		if i > 0 {
			if _, err := os.Stat(state + ".vars"); err == nil {
				script = "source " + shellQuote(state) + ".vars 2>/dev/null || true\n" + script
			}
		}
		cmd := exec.Command("bash", "-c", script)
		cmd.Dir, cmd.Env = dir, env
		var out bytes.Buffer
		cmd.Stdout, cmd.Stderr = &out, &out
		err := cmd.Run()
		var exit *exec.ExitError
		if err != nil && !errors.As(err, &exit) {
			t.Fatalf("%s: %v", where, err)
		}
		if err != nil {
			t.Fatalf("%s exited %d:\n%s\noutput:\n%s", where, exit.ExitCode(), s.body, out.String())
		}
		if s.want != nil && !matchOutput(s.want.body, out.String()) {
			t.Fatalf("%s:\n%s\nwant output:\n%s\ngot:\n%s", where, s.body, s.want.body, out.String())
		}
		if p, err := os.ReadFile(state + ".pwd"); err == nil {
			dir = strings.TrimSpace(string(p))
		}
	}
	for _, b := range bgs {
		if b.want == nil {
			continue
		}
		waitUntil(t, fmt.Sprintf("background block (line %d): its output", b.line), 30*time.Second, func() bool {
			return matchOutput(b.want.body, b.out.String())
		}, func() string { return "want\n" + b.want.body + "got\n" + b.out.String() })
	}
}

// hasFlag reports whether a fence's attributes hold the flag.
func hasFlag(attrs map[string]string, flag string) bool {
	_, ok := attrs[flag]
	return ok
}

// shellQuote quotes s for bash.
func shellQuote(s string) string { return "'" + strings.ReplaceAll(s, "'", `'\''`) + "'" }

// TestOutputPattern checks the matching of output blocks.
func TestOutputPattern(t *testing.T) {
	for _, c := range []struct {
		want, got string
		ok        bool
	}{
		{"a\n", "a\n", true},
		{"a\n", "a", true},
		{"a\n", "ab\n", false},
		{"a\n\n", "a\n", true},
		{"a\n", "a\n\n", true},
		{"a…c\n", "abbbc\n", true},
		{"a…c\n", "ab\nc\n", false},
		{"x\n…\nz\n", "x\nz\n", true},
		{"x\n…\nz\n", "x\n1\n2\nz\n", true},
		{"x\n…\nz\n", "x\n1\n2\n", false},
		{"a.b\n", "axb\n", false},
	} {
		if got := matchOutput(c.want, c.got); got != c.ok {
			t.Errorf("matchOutput(%q, %q) = %v", c.want, c.got, got)
		}
	}
}

// mdLink matches an inline Markdown link or image: [text](target).
var mdLink = regexp.MustCompile(`\]\(([^)\s]+)\)`)

// headingSlugs are the anchors of a Markdown file's headings, as GitHub
// and the docs page make them.
func headingSlugs(text string) map[string]bool {
	out := map[string]bool{}
	inFence := false
	for _, l := range strings.Split(text, "\n") {
		if strings.HasPrefix(l, "```") {
			inFence = !inFence
			continue
		}
		if inFence || !strings.HasPrefix(l, "#") {
			continue
		}
		out[slug(strings.TrimLeft(l, "# "))] = true
	}
	return out
}

// slug is a heading's anchor: lower case, spaces to hyphens, everything
// but letters, digits, hyphens and underscores dropped.
func slug(heading string) string {
	var b strings.Builder
	for _, r := range strings.ToLower(strings.TrimSpace(heading)) {
		switch {
		case r == ' ':
			b.WriteByte('-')
		case r == '-' || r == '_' || r >= 'a' && r <= 'z' || r >= '0' && r <= '9':
			b.WriteRune(r)
		}
	}
	return b.String()
}

// withoutCode is Markdown text without its fenced blocks and code spans.
func withoutCode(text string) string {
	var b strings.Builder
	inFence := false
	for _, l := range strings.Split(text, "\n") {
		if strings.HasPrefix(strings.TrimSpace(l), "```") {
			inFence = !inFence
			continue
		}
		if !inFence {
			b.WriteString(regexp.MustCompile("`[^`]*`").ReplaceAllString(l, ""))
			b.WriteByte('\n')
		}
	}
	return b.String()
}

// TestDocsLinks checks every link of README.md and the guides: a relative
// link names a file of the repository (never one outside it), and an
// anchor a heading of its file. The index links every guide.
func TestDocsLinks(t *testing.T) {
	root, err := filepath.Abs(".")
	if err != nil {
		t.Fatal(err)
	}
	files, _ := filepath.Glob("docs/*.md")
	files = append(files, "README.md")
	for _, f := range files {
		text, err := os.ReadFile(f)
		if err != nil {
			t.Fatal(err)
		}
		if strings.Contains(string(text), "shared/") || strings.Contains(string(text), "§") {
			t.Errorf("%s cites a document outside the repository (shared/ or §)", f)
		}
		for _, m := range mdLink.FindAllStringSubmatch(withoutCode(string(text)), -1) {
			target := m[1]
			if strings.HasPrefix(target, "http://") || strings.HasPrefix(target, "https://") || strings.HasPrefix(target, "mailto:") {
				continue
			}
			path, anchor, _ := strings.Cut(target, "#")
			file := f
			if path != "" {
				file = filepath.Join(filepath.Dir(f), path)
				abs, _ := filepath.Abs(file)
				if rel, err := filepath.Rel(root, abs); err != nil || strings.HasPrefix(rel, "..") {
					t.Errorf("%s: link %s leaves the repository", f, target)
					continue
				}
				if _, err := os.Stat(file); err != nil {
					t.Errorf("%s: link %s: %v", f, target, err)
					continue
				}
			}
			if anchor != "" {
				body, err := os.ReadFile(file)
				if err != nil {
					t.Errorf("%s: link %s: %v", f, target, err)
					continue
				}
				if !headingSlugs(string(body))[anchor] {
					t.Errorf("%s: link %s: no heading #%s in %s", f, target, anchor, file)
				}
			}
		}
	}
	index, err := os.ReadFile("docs/README.md")
	if err != nil {
		t.Fatal(err)
	}
	for _, f := range files {
		if name := filepath.Base(f); filepath.Dir(f) == "docs" && name != "README.md" && !strings.Contains(string(index), "]("+name+")") {
			t.Errorf("docs/README.md does not link %s", name)
		}
	}
}
