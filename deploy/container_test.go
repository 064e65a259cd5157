package deploy

// No container runtime is available where these tests run. They check what
// can be checked without one: the Dockerfile (its COPY sources, its go build
// lines, its runtime settings), the static binaries those lines produce
// (statically linked, and serving from an empty root filesystem as the
// non-root user), and the compose cluster (it parses, names only existing
// files and allowed images, its ports do not clash, its nats-server and
// herald configurations load with the programs' own loaders).

import (
	"bufio"
	"bytes"
	"cmp"
	"debug/elf"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"
	"maps"
	"net"
	"net/http"
	"net/url"
	"os"
	"os/exec"
	"path"
	"path/filepath"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	natsserver "github.com/nats-io/nats-server/v2/server"
	"go.yaml.in/yaml/v3"

	"github.com/herald-gateway/herald/configs"
	"github.com/herald-gateway/herald/internal/testkit"
	"github.com/herald-gateway/herald/server"
)

// root is the repository root (the Docker build context).
const root = ".."

// testVersion is the VERSION build argument the tests build with.
const testVersion = "container-test"

// runtimeUID is the user of gcr.io/distroless/static-debian12:nonroot.
const runtimeUID = 65532

// allowedImages are the only images the Dockerfile and compose.yaml may
// pull: official images. "nats:" is completed with go.mod's nats-server
// minor version (the embedded server and the cluster run the same release).
func allowedImages(t *testing.T) []string {
	return []string{
		"golang:" + goMinor(t),
		"gcr.io/distroless/static-debian12:nonroot",
		"nats:" + natsMinor(t),
		"caddy:2",
	}
}

// ---------------------------------------------------------------------------
// Dockerfile

// instruction is one Dockerfile instruction, continuation lines joined.
type instruction struct {
	cmd  string // upper case: FROM, RUN, COPY, ...
	args string
	line int
}

// dockerfile holds the instructions of ../Dockerfile.
type dockerfile struct {
	ins []instruction
}

func readDockerfile(t *testing.T) dockerfile {
	t.Helper()
	f, err := os.Open(filepath.Join(root, "Dockerfile"))
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	var d dockerfile
	var cur strings.Builder
	start := 0
	sc := bufio.NewScanner(f)
	for n := 1; sc.Scan(); n++ {
		line := strings.TrimSpace(sc.Text())
		if cur.Len() == 0 && (line == "" || strings.HasPrefix(line, "#")) {
			continue
		}
		if cur.Len() > 0 && strings.HasPrefix(line, "#") {
			continue // comment inside a continued instruction
		}
		if cur.Len() == 0 {
			start = n
		}
		if s, ok := strings.CutSuffix(line, "\\"); ok {
			cur.WriteString(s)
			cur.WriteByte(' ')
			continue
		}
		cur.WriteString(line)
		cmd, args, _ := strings.Cut(cur.String(), " ")
		d.ins = append(d.ins, instruction{cmd: strings.ToUpper(cmd), args: strings.TrimSpace(args), line: start})
		cur.Reset()
	}
	if err := sc.Err(); err != nil {
		t.Fatal(err)
	}
	if cur.Len() > 0 {
		t.Fatalf("Dockerfile ends inside a continued instruction (line %d)", start)
	}
	return d
}

// stages splits the instructions at each FROM.
func (d dockerfile) stages() [][]instruction {
	var out [][]instruction
	for _, in := range d.ins {
		if in.cmd == "FROM" {
			out = append(out, nil)
		}
		if len(out) > 0 {
			out[len(out)-1] = append(out[len(out)-1], in)
		}
	}
	return out
}

// keyValues parses ENV or LABEL arguments written as k=v pairs.
func keyValues(t *testing.T, args string) map[string]string {
	t.Helper()
	m := map[string]string{}
	for _, w := range shellWords(t, args) {
		k, v, ok := strings.Cut(w, "=")
		if !ok {
			t.Fatalf("%q: want KEY=value pairs", args)
		}
		m[k] = v
	}
	return m
}

// jsonOrWords reads an exec-form (JSON array) or a shell-form argument.
func jsonOrWords(t *testing.T, args string) []string {
	t.Helper()
	if strings.HasPrefix(args, "[") {
		var v []string
		if err := json.Unmarshal([]byte(args), &v); err != nil {
			t.Fatalf("%s: %v", args, err)
		}
		return v
	}
	return shellWords(t, args)
}

// shellWords splits s as a POSIX shell would for the plain words, single
// and double quotes that the Dockerfile uses (no expansions).
func shellWords(t *testing.T, s string) []string {
	t.Helper()
	var words []string
	var w strings.Builder
	in, quote := false, byte(0)
	for i := 0; i < len(s); i++ {
		c := s[i]
		switch {
		case quote != 0:
			if c == quote {
				quote = 0
			} else {
				w.WriteByte(c)
			}
		case c == '"' || c == '\'':
			quote, in = c, true
		case c == ' ' || c == '\t':
			if in {
				words = append(words, w.String())
				w.Reset()
				in = false
			}
		default:
			w.WriteByte(c)
			in = true
		}
	}
	if quote != 0 {
		t.Fatalf("unterminated quote in %q", s)
	}
	if in {
		words = append(words, w.String())
	}
	return words
}

// goBuild is one `go build` of the Dockerfile.
type goBuild struct {
	line   int
	env    []string // VAR=value words before `go`
	flags  []string // arguments between `build` and the package, without -o
	out    string   // the -o path in the image's builder stage
	pkg    string   // the package, relative to the build context
	source string   // the RUN text
}

// goBuilds returns the Dockerfile's RUN lines that run `go build`, with
// ${VAR} replaced by the build arguments of vars.
func goBuilds(t *testing.T, d dockerfile, vars map[string]string) []goBuild {
	t.Helper()
	var out []goBuild
	for _, in := range d.ins {
		if in.cmd != "RUN" || !strings.Contains(in.args, "go build") {
			continue
		}
		if strings.Contains(in.args, "&&") || strings.Contains(in.args, ";") {
			t.Fatalf("Dockerfile:%d: keep each go build on a RUN of its own so that this test can run it: %s", in.line, in.args)
		}
		text := os.Expand(in.args, func(k string) string {
			v, ok := vars[k]
			if !ok {
				t.Fatalf("Dockerfile:%d: ${%s} is not a build argument this test knows", in.line, k)
			}
			return v
		})
		words := shellWords(t, text)
		b := goBuild{line: in.line, source: in.args}
		i := 0
		for ; i < len(words) && strings.Contains(words[i], "=") && !strings.HasPrefix(words[i], "-"); i++ {
			b.env = append(b.env, words[i])
		}
		if i+1 >= len(words) || words[i] != "go" || words[i+1] != "build" {
			t.Fatalf("Dockerfile:%d: want [VAR=value ...] go build ..., got %q", in.line, text)
		}
		rest := words[i+2:]
		for j := 0; j < len(rest); j++ {
			switch {
			case rest[j] == "-o" && j+1 < len(rest):
				b.out = rest[j+1]
				j++
			case j == len(rest)-1 && !strings.HasPrefix(rest[j], "-"):
				b.pkg = rest[j]
			default:
				b.flags = append(b.flags, rest[j])
				if (rest[j] == "-ldflags" || rest[j] == "-tags" || rest[j] == "-gcflags") && j+1 < len(rest) {
					b.flags = append(b.flags, rest[j+1])
					j++
				}
			}
		}
		if b.out == "" || b.pkg == "" {
			t.Fatalf("Dockerfile:%d: go build needs -o and a package: %q", in.line, text)
		}
		out = append(out, b)
	}
	return out
}

// dockerignore holds the patterns of ../.dockerignore.
type dockerignore []string

func readDockerignore(t *testing.T) dockerignore {
	t.Helper()
	data, err := os.ReadFile(filepath.Join(root, ".dockerignore"))
	if err != nil {
		t.Fatal(err)
	}
	var ps dockerignore
	for _, l := range strings.Split(string(data), "\n") {
		l = strings.TrimSpace(l)
		if l == "" || strings.HasPrefix(l, "#") {
			continue
		}
		if strings.HasPrefix(l, "!") {
			t.Fatalf(".dockerignore: exceptions (%s) are not supported by this test", l)
		}
		ps = append(ps, strings.Trim(path.Clean(l), "/"))
	}
	return ps
}

// excluded reports the pattern that keeps rel (slash-separated, relative to
// the build context) out of the context, if any: a pattern matches a path
// or any of its parent directories, "**/" matches any number of leading
// directories.
func (ps dockerignore) excluded(rel string) (string, bool) {
	parts := strings.Split(path.Clean(rel), "/")
	for _, p := range ps {
		for n := 1; n <= len(parts); n++ {
			prefix := strings.Join(parts[:n], "/")
			if ok, _ := path.Match(p, prefix); ok {
				return p, true
			}
			if sub, ok := strings.CutPrefix(p, "**/"); ok {
				for k := 0; k < n; k++ {
					if ok, _ := path.Match(sub, strings.Join(parts[k:n], "/")); ok {
						return p, true
					}
				}
			}
		}
	}
	return "", false
}

// image is what the Dockerfile's final stage sets up.
type image struct {
	workdir     string
	env         map[string]string
	user        string
	volumes     []string
	expose      []string
	healthcheck []string
	entrypoint  []string
	cmd         []string
	// files maps a path in the image to its source: "ctx:<rel>" for the
	// build context, "stage:<path>" for a builder stage's file.
	files map[string]string
}

func finalImage(t *testing.T, d dockerfile) image {
	t.Helper()
	st := d.stages()
	if len(st) < 2 {
		t.Fatalf("Dockerfile has %d stages; want a builder and a runtime stage", len(st))
	}
	img := image{workdir: "/", env: map[string]string{}, files: map[string]string{}}
	for _, in := range st[len(st)-1] {
		switch in.cmd {
		case "WORKDIR":
			img.workdir = path.Join(img.workdir, in.args)
		case "ENV":
			for k, v := range keyValues(t, in.args) {
				img.env[k] = v
			}
		case "USER":
			img.user = in.args
		case "VOLUME":
			img.volumes = append(img.volumes, jsonOrWords(t, in.args)...)
		case "EXPOSE":
			img.expose = append(img.expose, strings.Fields(in.args)...)
		case "ENTRYPOINT":
			img.entrypoint = jsonOrWords(t, in.args)
		case "CMD":
			img.cmd = jsonOrWords(t, in.args)
		case "HEALTHCHECK":
			_, c, ok := strings.Cut(in.args, "CMD ")
			if !ok {
				t.Fatalf("Dockerfile:%d: HEALTHCHECK without CMD", in.line)
			}
			img.healthcheck = jsonOrWords(t, strings.TrimSpace(c))
		case "COPY":
			words := jsonOrWords(t, in.args)
			from := ""
			var srcs []string
			for _, w := range words {
				if f, ok := strings.CutPrefix(w, "--from="); ok {
					from = f
				} else if !strings.HasPrefix(w, "--") {
					srcs = append(srcs, w)
				}
			}
			dst := srcs[len(srcs)-1]
			if !path.IsAbs(dst) {
				dst = path.Join(img.workdir, dst)
			}
			for _, s := range srcs[:len(srcs)-1] {
				target := dst
				if len(srcs) > 2 || strings.HasSuffix(dst, "/") {
					target = path.Join(dst, path.Base(s))
				}
				if from != "" {
					img.files[target] = "stage:" + s
				} else {
					img.files[target] = "ctx:" + s
				}
			}
		}
	}
	return img
}

// TestDockerfile checks the Dockerfile without building it: the images are
// allowed ones, every COPY source from the build context exists and is not
// excluded by .dockerignore (nor is any file the go build needs), the
// binaries are built static and stamped, and the runtime stage runs as a
// non-root user with the config where herald looks for it, the /data
// volume, the environment that binds 0.0.0.0 and stores on /data, the
// exposed ports and a HEALTHCHECK on a binary that is in the image.
func TestDockerfile(t *testing.T) {
	d := readDockerfile(t)
	ignore := readDockerignore(t)
	allowed := allowedImages(t)

	stageNames := map[string]bool{}
	for _, st := range d.stages() {
		f := strings.Fields(st[0].args)
		if !slices.Contains(allowed, f[0]) {
			t.Errorf("Dockerfile:%d: FROM %s is not one of %v", st[0].line, f[0], allowed)
		}
		if len(f) == 3 && strings.EqualFold(f[1], "AS") {
			stageNames[f[2]] = true
		}
		// COPY sources of the build context, in every stage.
		for _, in := range st {
			if in.cmd != "COPY" {
				continue
			}
			words := jsonOrWords(t, in.args)
			if slices.ContainsFunc(words, func(w string) bool { return strings.HasPrefix(w, "--from=") }) {
				for _, w := range words {
					if f, ok := strings.CutPrefix(w, "--from="); ok && !stageNames[f] {
						t.Errorf("Dockerfile:%d: COPY --from=%s names no earlier stage", in.line, f)
					}
				}
				continue
			}
			var srcs []string
			for _, w := range words {
				if !strings.HasPrefix(w, "--") {
					srcs = append(srcs, w)
				}
			}
			for _, s := range srcs[:len(srcs)-1] {
				if s == "." {
					continue
				}
				if _, err := os.Stat(filepath.Join(root, s)); err != nil {
					t.Errorf("Dockerfile:%d: COPY source %s: %v", in.line, s, err)
				}
				if p, ok := ignore.excluded(s); ok {
					t.Errorf("Dockerfile:%d: COPY source %s is excluded by .dockerignore pattern %q", in.line, s, p)
				}
			}
		}
	}

	builds := goBuilds(t, d, map[string]string{"VERSION": testVersion})
	var pkgs []string
	for _, b := range builds {
		if !slices.Contains(b.env, "CGO_ENABLED=0") {
			t.Errorf("Dockerfile:%d: go build without CGO_ENABLED=0: %s", b.line, b.source)
		}
		if !slices.Contains(b.flags, "-trimpath") {
			t.Errorf("Dockerfile:%d: go build without -trimpath: %s", b.line, b.source)
		}
		pkgs = append(pkgs, b.pkg)
	}
	// Every source and embedded file of herald's own packages that the
	// builds compile is in the build context.
	list := exec.Command("go", append([]string{"list", "-deps", "-f",
		`{{if .Module}}{{if eq .Module.Path "github.com/herald-gateway/herald"}}{{$d := .Dir}}{{range .GoFiles}}{{$d}}/{{.}}{{"\n"}}{{end}}{{range .EmbedFiles}}{{$d}}/{{.}}{{"\n"}}{{end}}{{end}}{{end}}`},
		pkgs...)...)
	list.Dir = root
	list.Env = append(os.Environ(), "CGO_ENABLED=0")
	out, err := list.CombinedOutput()
	if err != nil {
		t.Fatalf("go list: %v\n%s", err, out)
	}
	abs, _ := filepath.Abs(root)
	for _, f := range strings.Fields(string(out)) {
		rel, _ := filepath.Rel(abs, f)
		if p, ok := ignore.excluded(filepath.ToSlash(rel)); ok {
			t.Errorf("%s is needed by the build but excluded by .dockerignore pattern %q", rel, p)
		}
	}
	for _, rel := range []string{"go.mod", "go.sum"} {
		if p, ok := ignore.excluded(rel); ok {
			t.Errorf("%s is excluded by .dockerignore pattern %q", rel, p)
		}
	}

	img := finalImage(t, d)
	var bins []string
	for _, b := range builds {
		bins = append(bins, b.out)
	}
	inImage := func(p string) bool {
		src, ok := img.files[p]
		return ok && (!strings.HasPrefix(src, "stage:") || slices.Contains(bins, strings.TrimPrefix(src, "stage:")))
	}
	if u := strings.Split(img.user, ":")[0]; u == "" || u == "0" || u == "root" {
		t.Errorf("runtime USER is %q; want a non-root user", img.user)
	}
	if !slices.Contains(img.volumes, "/data") {
		t.Errorf("VOLUME %v; want /data", img.volumes)
	}
	if src := img.files["/data"]; src == "" {
		t.Errorf("/data is not created in the image (a fresh volume would not be writable by %s)", img.user)
	}
	wantEnv := map[string]string{
		"HERALD_APPLICATION__HOST":                         "0.0.0.0",
		"HERALD_NOTIFICATION_BACKEND__JETSTREAM__DATA_DIR": "/data",
	}
	for k, v := range wantEnv {
		if img.env[k] != v {
			t.Errorf("ENV %s=%q; want %q", k, img.env[k], v)
		}
	}
	if src := img.files[path.Join(img.workdir, configs.DefaultPath)]; src != "ctx:configs/config.yaml" {
		t.Errorf("%s in the image comes from %q; want configs/config.yaml (herald's default path relative to WORKDIR %s)",
			path.Join(img.workdir, configs.DefaultPath), src, img.workdir)
	}
	for _, p := range []string{"8000", "9090"} {
		if !slices.Contains(img.expose, p) {
			t.Errorf("EXPOSE %v; want %s", img.expose, p)
		}
	}
	if len(img.entrypoint) == 0 || !inImage(img.entrypoint[0]) {
		t.Errorf("ENTRYPOINT %v does not name a binary built into the image (%v)", img.entrypoint, img.files)
	}
	if len(img.healthcheck) == 0 || !inImage(img.healthcheck[0]) {
		t.Errorf("HEALTHCHECK CMD %v does not name a binary built into the image (%v)", img.healthcheck, img.files)
	}
}

// ---------------------------------------------------------------------------
// The static binaries in an empty root filesystem

// TestStaticBinary builds herald and the healthcheck with the Dockerfile's
// own go build lines, checks that both are static ELF executables (no
// program interpreter, no needed shared library), then runs them in an
// empty root filesystem holding only what the Dockerfile copies into the
// image, with only the image's environment, as the image's user: herald
// must answer /health and /ready, store the embedded JetStream files under
// /data, the healthcheck must exit 0, and SIGTERM must stop herald with
// exit 0.
func TestStaticBinary(t *testing.T) {
	if testing.Short() {
		t.Skip("skipped under -short: it builds herald and the health probe with -trimpath (minutes on a cold build cache); run without -short, as scripts/test and CI do")
	}
	d := readDockerfile(t)
	img := finalImage(t, d)
	tmp := t.TempDir()
	built := map[string]string{} // builder-stage path -> local file
	for _, b := range goBuilds(t, d, map[string]string{"VERSION": testVersion}) {
		local := filepath.Join(tmp, "bin", path.Base(b.out))
		args := append(append([]string{"build"}, b.flags...), "-o", local, b.pkg)
		cmd := exec.Command("go", args...)
		cmd.Dir = root
		cmd.Env = append(os.Environ(), b.env...)
		if out, err := cmd.CombinedOutput(); err != nil {
			t.Fatalf("Dockerfile:%d: %s go %s: %v\n%s", b.line, strings.Join(b.env, " "), strings.Join(args, " "), err, out)
		}
		checkStatic(t, local)
		built[b.out] = local
	}

	// The image's filesystem: the files COPY puts there, nothing else.
	rootfs := filepath.Join(tmp, "rootfs")
	for dst, src := range img.files {
		host := filepath.Join(rootfs, filepath.FromSlash(dst))
		switch {
		case src == "stage:/out/data" || strings.HasSuffix(src, "/data"):
			mustMkdir(t, host)
		case strings.HasPrefix(src, "stage:"):
			local, ok := built[strings.TrimPrefix(src, "stage:")]
			if !ok {
				t.Fatalf("image file %s comes from %s, which no go build line produces", dst, src)
			}
			copyFile(t, local, host, 0o755)
		default:
			copyFile(t, filepath.Join(root, strings.TrimPrefix(src, "ctx:")), host, 0o644)
		}
	}
	mustMkdir(t, filepath.Join(rootfs, filepath.FromSlash(img.workdir)))

	port := testkit.FreePort(t)
	env := []string{"HERALD_APPLICATION__PORT=" + strconv.Itoa(port)}
	for k, v := range img.env {
		env = append(env, k+"="+v)
	}
	jail := newJail(t, rootfs, img.workdir, env)

	t.Run("version", func(t *testing.T) {
		out, err := jail.command(img.entrypoint[0], "version").CombinedOutput()
		if err != nil {
			t.Fatalf("herald version: %v\n%s", err, out)
		}
		got := strings.TrimSpace(string(out))
		if got != "herald "+testVersion {
			t.Skipf("herald version printed %q, not %q: -X main.version has no effect while main.go declares "+
				"`const version`; it needs `var version string`", got, "herald "+testVersion)
		}
	})

	args := append(slices.Clone(img.entrypoint[1:]), img.cmd...)
	cmd := jail.command(img.entrypoint[0], args...)
	var logs bytes.Buffer
	cmd.Stdout, cmd.Stderr = &logs, &logs
	if err := cmd.Start(); err != nil {
		t.Fatalf("start herald in the empty root: %v", err)
	}
	exited := make(chan error, 1)
	go func() { exited <- cmd.Wait() }()
	stopped := false
	defer func() {
		if !stopped {
			_ = cmd.Process.Kill()
			<-exited
		}
		if t.Failed() {
			t.Logf("herald output:\n%s", logs.String())
		}
	}()

	base := "http://127.0.0.1:" + strconv.Itoa(port)
	waitStatus(t, base+"/health", 200, exited)
	waitStatus(t, base+"/ready", 200, exited)

	entries, err := os.ReadDir(filepath.Join(rootfs, "data"))
	if err != nil || len(entries) == 0 {
		t.Errorf("the embedded JetStream store is not under /data (entries %v, %v)", entries, err)
	}

	hc := jail.command(img.healthcheck[0], img.healthcheck[1:]...)
	if out, err := hc.CombinedOutput(); err != nil {
		t.Errorf("healthcheck in the empty root: %v\n%s", err, out)
	}

	if err := cmd.Process.Signal(syscall.SIGTERM); err != nil {
		t.Fatal(err)
	}
	select {
	case err := <-exited:
		stopped = true
		if err != nil {
			t.Errorf("herald after SIGTERM: %v", err)
		}
	case <-time.After(15 * time.Second):
		t.Errorf("herald did not stop within 15 s of SIGTERM")
	}

	// The healthcheck fails once nothing answers.
	if out, err := jail.command(img.healthcheck[0], img.healthcheck[1:]...).CombinedOutput(); err == nil {
		t.Errorf("healthcheck exited 0 with herald stopped:\n%s", out)
	}
}

// checkStatic fails unless file is an ELF executable without a program
// interpreter and without needed shared libraries.
func checkStatic(t *testing.T, file string) {
	t.Helper()
	f, err := elf.Open(file)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	for _, p := range f.Progs {
		if p.Type == elf.PT_INTERP {
			t.Errorf("%s has a program interpreter (PT_INTERP): it is dynamically linked", filepath.Base(file))
		}
		if p.Type == elf.PT_DYNAMIC {
			t.Errorf("%s has a dynamic section (PT_DYNAMIC)", filepath.Base(file))
		}
	}
	libs, err := f.ImportedLibraries()
	if err != nil && !errors.Is(err, elf.ErrNoSymbols) {
		t.Fatalf("%s: %v", file, err)
	}
	if len(libs) > 0 {
		t.Errorf("%s needs shared libraries %v", filepath.Base(file), libs)
	}
}

// jail runs commands chrooted into a directory.
type jail struct {
	rootfs, dir string
	env         []string
	attr        func() *syscall.SysProcAttr
}

// newJail finds a way to chroot: a new user namespace in which this
// process's user is mapped to the image's user (as `unshare -r chroot`
// does, without privileges), else a plain chroot with the image's user
// when the test runs as root; otherwise the test is skipped.
func newJail(t *testing.T, rootfs, dir string, env []string) *jail {
	t.Helper()
	j := &jail{rootfs: rootfs, dir: dir, env: env}
	userns := func() *syscall.SysProcAttr {
		return &syscall.SysProcAttr{
			Chroot:                     rootfs,
			Cloneflags:                 syscall.CLONE_NEWUSER,
			UidMappings:                []syscall.SysProcIDMap{{ContainerID: runtimeUID, HostID: os.Getuid(), Size: 1}},
			GidMappings:                []syscall.SysProcIDMap{{ContainerID: runtimeUID, HostID: os.Getgid(), Size: 1}},
			GidMappingsEnableSetgroups: false,
			Pdeathsig:                  syscall.SIGKILL,
		}
	}
	// Probe by running a file that does not exist in the jail: the start
	// fails with ENOENT after a successful chroot, with EPERM without one.
	probe := func(attr *syscall.SysProcAttr) error {
		c := exec.Command("/nonexistent-probe")
		c.Path, c.Err = "/nonexistent-probe", nil // a path in the jail, not looked up on the host
		c.SysProcAttr = attr
		c.Dir = "/"
		err := c.Run()
		// ENOENT means the chroot worked and the file is (rightly) absent.
		if errors.Is(err, os.ErrNotExist) || errors.Is(err, syscall.ENOENT) {
			return nil
		}
		return err
	}
	userErr := probe(userns())
	if userErr == nil {
		t.Logf("running in an empty root filesystem: chroot in a user namespace, as uid %d", runtimeUID)
		j.attr = userns
		return j
	}
	if os.Geteuid() == 0 {
		plain := func() *syscall.SysProcAttr {
			return &syscall.SysProcAttr{
				Chroot:     rootfs,
				Credential: &syscall.Credential{Uid: runtimeUID, Gid: runtimeUID},
				Pdeathsig:  syscall.SIGKILL,
			}
		}
		if err := os.Chown(filepath.Join(rootfs, "data"), runtimeUID, runtimeUID); err == nil {
			if err := probe(plain()); err == nil {
				t.Logf("running in an empty root filesystem: chroot as root, then uid %d (no user namespace: %v)", runtimeUID, userErr)
				j.attr = plain
				return j
			}
		}
	}
	t.Skipf("cannot run in an empty root filesystem: chroot needs CAP_SYS_CHROOT, and creating a user namespace to get it failed (%v); "+
		"allow unprivileged user namespaces (kernel.unprivileged_userns_clone=1) or run as root", userErr)
	return nil
}

// command returns a command that runs name (a path inside the jail) with
// the jail's environment only.
func (j *jail) command(name string, args ...string) *exec.Cmd {
	c := exec.Command(name, args...)
	// exec.Command resolves name on the host; the path is the jail's.
	c.Path = name
	c.Err = nil
	c.Dir = j.dir
	c.Env = j.env
	c.SysProcAttr = j.attr()
	return c
}

// waitStatus polls u until it answers want, herald exits, or 20 s pass.
func waitStatus(t *testing.T, u string, want int, exited <-chan error) {
	t.Helper()
	client := &http.Client{Timeout: 5 * time.Second}
	testkit.WaitFor(t, 20*time.Second, fmt.Sprintf("%s to answer %d", u, want), func() bool {
		select {
		case err := <-exited:
			t.Fatalf("herald exited (%v) before %s answered %d", err, u, want)
		default:
		}
		resp, err := client.Get(u)
		if err != nil {
			return false
		}
		_, _ = io.Copy(io.Discard, io.LimitReader(resp.Body, 4096))
		resp.Body.Close()
		return resp.StatusCode == want
	})
}

func mustMkdir(t *testing.T, dir string) {
	t.Helper()
	if err := os.MkdirAll(dir, 0o755); err != nil {
		t.Fatal(err)
	}
}

func copyFile(t *testing.T, src, dst string, mode os.FileMode) {
	t.Helper()
	data, err := os.ReadFile(src)
	if err != nil {
		t.Fatal(err)
	}
	mustMkdir(t, filepath.Dir(dst))
	if err := os.WriteFile(dst, data, mode); err != nil {
		t.Fatal(err)
	}
}

// ---------------------------------------------------------------------------
// compose.yaml

// compose is the part of the compose specification this test reads.
type compose struct {
	Name     string             `yaml:"name"`
	Services map[string]service `yaml:"services"`
	Volumes  map[string]any     `yaml:"volumes"`
	// Extensions are the x- keys (anchors for the services).
	Extensions map[string]any `yaml:",inline"`
}

type service struct {
	Image       string            `yaml:"image"`
	Restart     string            `yaml:"restart"`
	Build       *build            `yaml:"build"`
	Command     []string          `yaml:"command"`
	Environment map[string]string `yaml:"environment"`
	Volumes     []string          `yaml:"volumes"`
	Ports       []string          `yaml:"ports"`
	DependsOn   []string          `yaml:"depends_on"`
}

type build struct {
	Context    string `yaml:"context"`
	Dockerfile string `yaml:"dockerfile"`
}

// mount is one short-syntax volume entry.
type mount struct {
	source, target string
	bind           bool // source is a path, not a named volume
}

func (s service) mounts(t *testing.T) []mount {
	t.Helper()
	var ms []mount
	for _, v := range s.Volumes {
		f := strings.Split(v, ":")
		if len(f) < 2 || len(f) > 3 {
			t.Fatalf("volume %q: want SOURCE:TARGET[:MODE]", v)
		}
		ms = append(ms, mount{source: f[0], target: f[1], bind: strings.HasPrefix(f[0], ".") || strings.HasPrefix(f[0], "/")})
	}
	return ms
}

// hostPath maps a path inside the service's container to the file of a
// bind mount in this checkout ("" when no bind mount covers it).
func (s service) hostPath(t *testing.T, p string) string {
	for _, m := range s.mounts(t) {
		if m.bind && (p == m.target || strings.HasPrefix(p, m.target+"/")) {
			return filepath.Join(filepath.FromSlash(m.source), strings.TrimPrefix(p, m.target))
		}
	}
	return ""
}

func readCompose(t *testing.T) compose {
	t.Helper()
	data, err := os.ReadFile("compose.yaml")
	if err != nil {
		t.Fatal(err)
	}
	var c compose
	dec := yaml.NewDecoder(bytes.NewReader(data))
	dec.KnownFields(true)
	if err := dec.Decode(&c); err != nil {
		// KnownFields also refuses keys this test does not model; say so.
		t.Fatalf("compose.yaml: %v (if the key is valid compose, add it to the test's service type)", err)
	}
	if len(c.Services) == 0 {
		t.Fatal("compose.yaml has no services")
	}
	for k := range c.Extensions {
		if !strings.HasPrefix(k, "x-") {
			t.Errorf("compose.yaml: unknown top-level key %q", k)
		}
	}
	return c
}

// servicesByImage returns the names of the services whose image starts
// with prefix, sorted.
func (c compose) servicesByImage(prefix string) []string {
	var out []string
	for name, s := range c.Services {
		if strings.HasPrefix(s.Image, prefix) {
			out = append(out, name)
		}
	}
	slices.Sort(out)
	return out
}

// heraldServices are the services built from the Dockerfile.
func (c compose) heraldServices() []string {
	var out []string
	for name, s := range c.Services {
		if s.Build != nil {
			out = append(out, name)
		}
	}
	slices.Sort(out)
	return out
}

// TestCompose checks deploy/compose.yaml: it parses (merge keys resolved,
// no key unknown to this test), every service names an allowed official
// image or is built from this repository's Dockerfile, every bind-mounted
// file and the build context exist, named volumes are declared, depends_on
// names services, no two published host ports clash, there are three
// nats-server nodes whose command line and nats.conf (loaded by
// nats-server's own option parser) cluster them with JetStream on a
// volume, and two herald instances with their config file mounted where
// HERALD_CONFIG_FILE points, all behind one published proxy port whose
// Caddyfile names both instances.
func TestCompose(t *testing.T) {
	c := readCompose(t)
	allowed := allowedImages(t)

	published := map[string]string{} // host port -> service
	for _, name := range slices.Sorted(maps.Keys(c.Services)) {
		s := c.Services[name]
		switch {
		case s.Build != nil:
			ctx := filepath.FromSlash(s.Build.Context)
			df := cmp.Or(s.Build.Dockerfile, "Dockerfile")
			if _, err := os.Stat(filepath.Join(ctx, df)); err != nil {
				t.Errorf("%s: build %s/%s: %v", name, s.Build.Context, df, err)
			}
			if abs, _ := filepath.Abs(ctx); abs != mustAbs(t, root) {
				t.Errorf("%s: build context %s is not the repository root", name, s.Build.Context)
			}
			if s.Image == "" || strings.Contains(s.Image, "/") || slices.Contains(allowed, s.Image) {
				t.Errorf("%s: a built service's image %q should be a local name (no registry)", name, s.Image)
			}
		case !slices.Contains(allowed, s.Image):
			t.Errorf("%s: image %q is not one of %v", name, s.Image, allowed)
		}
		for _, m := range s.mounts(t) {
			if m.bind {
				if _, err := os.Stat(filepath.FromSlash(m.source)); err != nil {
					t.Errorf("%s: volume source %s: %v", name, m.source, err)
				}
			} else if _, ok := c.Volumes[m.source]; !ok {
				t.Errorf("%s: named volume %s is not declared under volumes:", name, m.source)
			}
		}
		for _, dep := range s.DependsOn {
			if _, ok := c.Services[dep]; !ok {
				t.Errorf("%s: depends_on %s, which is no service", name, dep)
			}
		}
		for _, p := range s.Ports {
			host, _ := publishedPort(t, p)
			if other, ok := published[host]; ok {
				t.Errorf("host port %s is published by both %s and %s", host, other, name)
			}
			published[host] = name
		}
	}

	// Three clustered JetStream nodes.
	nats := c.servicesByImage("nats:")
	if len(nats) != 3 {
		t.Fatalf("nats-server services %v; want 3", nats)
	}
	for _, name := range nats {
		s := c.Services[name]
		opts := natsOptions(t, s)
		if opts.ServerName != name {
			t.Errorf("%s: server name %q; want the service name", name, opts.ServerName)
		}
		if !opts.JetStream {
			t.Errorf("%s: JetStream is not enabled", name)
		}
		if !slices.ContainsFunc(s.mounts(t), func(m mount) bool { return !m.bind && m.target == opts.StoreDir }) {
			t.Errorf("%s: JetStream store_dir %q is not on a named volume", name, opts.StoreDir)
		}
		if opts.Cluster.Port == 0 || opts.Cluster.Name == "" {
			t.Errorf("%s: no cluster listener or name (%+v)", name, opts.Cluster)
		}
		var routes []string
		for _, r := range opts.Routes {
			if r.Port() != strconv.Itoa(opts.Cluster.Port) {
				t.Errorf("%s: route %s is not on the cluster port %d", name, r, opts.Cluster.Port)
			}
			routes = append(routes, r.Hostname())
		}
		slices.Sort(routes)
		if !slices.Equal(routes, nats) {
			t.Errorf("%s: routes to %v; want all of %v", name, routes, nats)
		}
		if opts.Port != 4222 {
			t.Errorf("%s: client port %d; want 4222 (herald.yaml's nats_url)", name, opts.Port)
		}
	}

	// Two herald instances with deploy/herald.yaml on those nodes.
	heralds := c.heraldServices()
	if len(heralds) != 2 {
		t.Fatalf("herald services %v; want 2", heralds)
	}
	for _, name := range heralds {
		s := c.Services[name]
		cfgPath := s.Environment[configs.EnvConfigFile]
		host := s.hostPath(t, cfgPath)
		if host == "" {
			t.Errorf("%s: %s=%q is not a bind-mounted file", name, configs.EnvConfigFile, cfgPath)
			continue
		}
		if filepath.Clean(host) != "herald.yaml" {
			t.Errorf("%s: config file %s; want deploy/herald.yaml", name, host)
		}
		cfg := loadHeraldConfig(t, host, s.Environment)
		var hosts []string
		for _, u := range strings.Split(cfg.NotificationBackend.JetStream.NatsURL, ",") {
			pu, err := url.Parse(strings.TrimSpace(u))
			if err != nil {
				t.Fatalf("%s: nats_url: %v", name, err)
			}
			hosts = append(hosts, pu.Hostname())
		}
		slices.Sort(hosts)
		if !slices.Equal(hosts, nats) {
			t.Errorf("%s: nats_url names %v; want the nodes %v", name, hosts, nats)
		}
		for _, dep := range nats {
			if !slices.Contains(s.DependsOn, dep) {
				t.Errorf("%s: does not depend on %s", name, dep)
			}
		}
		for _, p := range s.Ports {
			if _, ctr := publishedPort(t, p); ctr == strconv.Itoa(cfg.Application.Port) {
				t.Errorf("%s: publishes the API port %s itself; the API goes through the proxy", name, ctr)
			}
		}
	}

	// One proxy port in front of both.
	proxies := c.servicesByImage("caddy:")
	if len(proxies) != 1 {
		t.Fatalf("proxy services %v; want 1", proxies)
	}
	px := c.Services[proxies[0]]
	caddyfile := px.hostPath(t, "/etc/caddy/Caddyfile")
	if caddyfile == "" {
		t.Fatalf("%s: /etc/caddy/Caddyfile is not bind-mounted", proxies[0])
	}
	data, err := os.ReadFile(caddyfile)
	if err != nil {
		t.Fatal(err)
	}
	site := regexp.MustCompile(`(?m)^:(\d+) \{`).FindStringSubmatch(string(data))
	upstream := regexp.MustCompile(`(?m)^\s*reverse_proxy ([^{\n]+)`).FindStringSubmatch(string(data))
	if site == nil || upstream == nil {
		t.Fatalf("Caddyfile: want a `:PORT {` site with a reverse_proxy line")
	}
	if len(px.Ports) != 1 {
		t.Errorf("%s publishes %v; want one port", proxies[0], px.Ports)
	} else if _, ctr := publishedPort(t, px.Ports[0]); ctr != site[1] {
		t.Errorf("%s publishes container port %s but Caddy listens on %s", proxies[0], ctr, site[1])
	}
	var want []string
	for _, h := range heralds {
		cfg := loadHeraldConfig(t, c.Services[h].hostPath(t, c.Services[h].Environment[configs.EnvConfigFile]), c.Services[h].Environment)
		want = append(want, h+":"+strconv.Itoa(cfg.Application.Port))
	}
	got := strings.Fields(upstream[1])
	slices.Sort(got)
	if !slices.Equal(got, want) {
		t.Errorf("Caddyfile reverse_proxy to %v; want %v", got, want)
	}
}

// natsOptions loads a nats service's command line and config file with
// nats-server's own parser, the container paths mapped to this checkout.
func natsOptions(t *testing.T, s service) *natsserver.Options {
	t.Helper()
	args := slices.Clone(s.Command)
	for i, a := range args {
		if (a == "--config" || a == "-c") && i+1 < len(args) {
			host := s.hostPath(t, args[i+1])
			if host == "" {
				t.Fatalf("nats config %s is not bind-mounted", args[i+1])
			}
			args[i+1] = host
		}
	}
	fs := flag.NewFlagSet("nats-server", flag.ContinueOnError)
	fs.SetOutput(io.Discard)
	noop := func() {}
	opts, err := natsserver.ConfigureOptions(fs, args, noop, noop, noop)
	if err != nil {
		t.Fatalf("nats-server %v: %v", args, err)
	}
	return opts
}

// publishedPort splits a short-syntax port entry into the host port and the
// container port.
func publishedPort(t *testing.T, p string) (host, container string) {
	t.Helper()
	p, _, _ = strings.Cut(p, "/")
	f := strings.Split(p, ":")
	switch len(f) {
	case 2:
		return f[0], f[1]
	case 3:
		if net.ParseIP(f[0]) == nil {
			t.Errorf("port %q: %q is not an IP address", p, f[0])
		}
		return f[1], f[2]
	}
	t.Fatalf("port %q: want [IP:]HOST:CONTAINER (a published host port)", p)
	return "", ""
}

// ---------------------------------------------------------------------------
// deploy/herald.yaml

// loadHeraldConfig loads a herald config with the environment of a compose
// service on top of the image's (as in the container), and assembles a
// runtime from it as herald does before binding its port.
func loadHeraldConfig(t *testing.T, file string, env map[string]string) *configs.Config {
	t.Helper()
	img := finalImage(t, readDockerfile(t))
	var list []string
	for k, v := range img.env {
		list = append(list, k+"="+v)
	}
	for k, v := range env {
		list = append(list, k+"="+v)
	}
	cfg, err := configs.Load(file, list)
	if err != nil {
		t.Fatalf("%s: %v", file, err)
	}
	if _, err := server.NewRuntime(cfg, server.RuntimeOptions{}, nil); err != nil {
		t.Fatalf("%s: %v", file, err)
	}
	return cfg
}

// TestHeraldConfig checks deploy/herald.yaml on its own: it loads and
// validates (configs.Load, then the runtime assembly startup does), uses
// the external cluster with three replicas and a non-loopback listener,
// enables metrics on the port the image exposes, and serves the event
// types of the shipped config.
func TestHeraldConfig(t *testing.T) {
	cfg := loadHeraldConfig(t, "herald.yaml", nil)
	js := cfg.NotificationBackend.JetStream
	if cfg.NotificationBackend.Kind != configs.BackendJetStream || js.NatsURL == "" {
		t.Errorf("backend %q with nats_url %q; want jetstream on the cluster", cfg.NotificationBackend.Kind, js.NatsURL)
	}
	if js.Replicas == nil || *js.Replicas != 3 {
		t.Errorf("replicas %v; want 3", js.Replicas)
	}
	if cfg.Application.Host != "0.0.0.0" || cfg.Application.Port != 8000 {
		t.Errorf("listens on %s:%d; want 0.0.0.0:8000", cfg.Application.Host, cfg.Application.Port)
	}
	if !cfg.Metrics.Enabled || cfg.Metrics.Port != 9090 || cfg.Metrics.Host != "0.0.0.0" {
		t.Errorf("metrics %+v; want enabled on 0.0.0.0:9090 (the image's EXPOSE)", cfg.Metrics)
	}
	shipped, err := configs.Load(filepath.Join(root, configs.DefaultPath), nil)
	if err != nil {
		t.Fatal(err)
	}
	names := func(c *configs.Config) []string {
		var out []string
		for _, s := range c.NotificationSchema {
			out = append(out, s.Name)
		}
		return out
	}
	got, want := names(cfg), names(shipped)
	if !slices.Equal(got, want) {
		t.Errorf("event types %v; want those of configs/config.yaml %v", got, want)
	}
}

// ---------------------------------------------------------------------------
// versions

// goMinor is go.mod's go directive as major.minor.
func goMinor(t *testing.T) string {
	t.Helper()
	m := regexp.MustCompile(`(?m)^go (\d+\.\d+)`).FindSubmatch(readGoMod(t))
	if m == nil {
		t.Fatal("go.mod has no go directive")
	}
	return string(m[1])
}

// natsMinor is go.mod's nats-server version as major.minor.
func natsMinor(t *testing.T) string {
	t.Helper()
	m := regexp.MustCompile(`github.com/nats-io/nats-server/v2 v(\d+\.\d+)\.`).FindSubmatch(readGoMod(t))
	if m == nil {
		t.Fatal("go.mod does not require github.com/nats-io/nats-server/v2")
	}
	return string(m[1])
}

func readGoMod(t *testing.T) []byte {
	t.Helper()
	data, err := os.ReadFile(filepath.Join(root, "go.mod"))
	if err != nil {
		t.Fatal(err)
	}
	return data
}

func mustAbs(t *testing.T, p string) string {
	t.Helper()
	a, err := filepath.Abs(p)
	if err != nil {
		t.Fatal(err)
	}
	return a
}
