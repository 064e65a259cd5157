// Package browsertest drives a real headless Chromium (Debian's chromium
// package) through github.com/chromedp/chromedp for the tests of herald's
// browser pages: the docs page (here) and the browser console (package
// console). Open starts a browser for one test and returns its tab, which
// records every request the page makes and every script error, so that a
// test can assert that a page loads nothing from elsewhere and runs
// cleanly.
//
// When no Chromium is found the test fails with the install command (CI
// installs it: .ci/run). It is skipped instead only under -short, or when
// HERALD_SKIP_BROWSER_TESTS says why.
package browsertest

import (
	"context"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/chromedp/cdproto/network"
	"github.com/chromedp/cdproto/runtime"
	"github.com/chromedp/chromedp"
)

// Environment variables the package reads.
const (
	// EnvChromium names the Chromium binary (default: chromium,
	// chromium-browser, google-chrome or google-chrome-stable on PATH).
	EnvChromium = "HERALD_CHROMIUM"
	// EnvSkip, when not empty, skips the browser tests; its value says
	// why and is printed with the skip.
	EnvSkip = "HERALD_SKIP_BROWSER_TESTS"
)

// Timeout bounds one test's use of the browser, start included.
const Timeout = 90 * time.Second

// names are the Chromium binaries looked for on PATH, in order.
var names = []string{"chromium", "chromium-browser", "google-chrome", "google-chrome-stable"}

// Chromium returns the path of the Chromium binary: $HERALD_CHROMIUM when
// set, else the first of chromium, chromium-browser, google-chrome and
// google-chrome-stable found on PATH.
func Chromium() (string, error) {
	if p := os.Getenv(EnvChromium); p != "" {
		if _, err := exec.LookPath(p); err != nil {
			return "", fmt.Errorf("%s=%s: %w", EnvChromium, p, err)
		}
		return p, nil
	}
	for _, n := range names {
		if p, err := exec.LookPath(n); err == nil {
			return p, nil
		}
	}
	return "", errors.New("no Chromium on PATH (looked for " + strings.Join(names, ", ") + ")")
}

// Tab is one browser tab of a test.
type Tab struct {
	// Ctx runs chromedp actions in the tab; it ends with the test or
	// after Timeout.
	Ctx context.Context

	mu       sync.Mutex
	requests []string
	problems []string
}

// Open starts a headless Chromium for t and returns its one tab. The
// browser is closed when t ends. Without a Chromium, t fails (or is
// skipped under -short or with HERALD_SKIP_BROWSER_TESTS set).
func Open(t testing.TB) *Tab {
	t.Helper()
	if why := os.Getenv(EnvSkip); why != "" {
		t.Skipf("%s is set: %s", EnvSkip, why)
	}
	path, err := Chromium()
	if err != nil {
		if testing.Short() {
			t.Skipf("skipped under -short: %v; install Debian's chromium (apt-get install -y chromium) to run it, as .ci/run does", err)
		}
		t.Fatalf("%v: install Debian's chromium (sudo apt-get install -y chromium; .ci/run installs it) or set %s to a Chromium binary; "+
			"to skip the browser tests, run with -short or set %s to the reason", err, EnvChromium, EnvSkip)
	}
	opts := append(chromedp.DefaultExecAllocatorOptions[:],
		chromedp.ExecPath(path),
		chromedp.UserDataDir(filepath.Join(t.TempDir(), "profile")),
		chromedp.WindowSize(1200, 900),
		// No network but loopback is reachable here; do not even try.
		chromedp.Flag("no-proxy-server", true),
		chromedp.Flag("disable-gpu", true),
	)
	if os.Geteuid() == 0 {
		// Chromium refuses to start its sandbox as root.
		opts = append(opts, chromedp.NoSandbox)
	}
	base, cancelTimeout := context.WithTimeout(context.Background(), Timeout)
	allocCtx, cancelAlloc := chromedp.NewExecAllocator(base, opts...)
	tab := &Tab{}
	ctx, cancelTab := chromedp.NewContext(allocCtx, chromedp.WithLogf(t.Logf), chromedp.WithListener(tab.listen))
	tab.Ctx = ctx
	t.Cleanup(func() {
		cancelTab()
		cancelAlloc()
		cancelTimeout()
	})
	start := time.Now()
	if _, err := chromedp.Call(ctx, network.Enable, network.EnableParams{}); err != nil {
		t.Fatalf("start %s: %v", path, err)
	}
	t.Logf("%s started in %v", path, time.Since(start).Round(time.Millisecond))
	return tab
}

// listen records the tab's requests and script errors. It runs in the
// tab's event loop, so it only appends under the lock.
func (b *Tab) listen(ev any) {
	switch e := ev.(type) {
	case *network.EventRequestWillBeSent:
		b.mu.Lock()
		b.requests = append(b.requests, e.Request.Method+" "+e.Request.URL)
		b.mu.Unlock()
	case *runtime.EventExceptionThrown:
		text := e.ExceptionDetails.Text
		if ex := e.ExceptionDetails.Exception; ex != nil && ex.Description != "" {
			text += " " + ex.Description
		}
		b.problem("exception: " + text)
	case *runtime.EventConsoleAPICalled:
		if e.Type == runtime.ConsoleAPICalledTypeError || e.Type == runtime.ConsoleAPICalledTypeAssert {
			var args []string
			for _, a := range e.Args {
				if a.Description != "" {
					args = append(args, a.Description)
				} else {
					args = append(args, string(a.Value))
				}
			}
			b.problem("console." + string(e.Type) + ": " + strings.Join(args, " "))
		}
	}
}

func (b *Tab) problem(p string) {
	b.mu.Lock()
	b.problems = append(b.problems, p)
	b.mu.Unlock()
}

// Requests returns "METHOD URL" of every request the tab made so far.
func (b *Tab) Requests() []string {
	b.mu.Lock()
	defer b.mu.Unlock()
	return append([]string(nil), b.requests...)
}

// Problems returns the uncaught script exceptions and console errors
// seen so far.
func (b *Tab) Problems() []string {
	b.mu.Lock()
	defer b.mu.Unlock()
	return append([]string(nil), b.problems...)
}

// Do runs chromedp actions that return nothing in the tab and fails t on
// an error, naming what was being done.
func (b *Tab) Do(t testing.TB, what string, actions ...chromedp.Action[chromedp.Void]) {
	t.Helper()
	if err := chromedp.Do(b.Ctx, actions...); err != nil {
		t.Fatalf("%s: %v", what, err)
	}
}

// Run runs one chromedp action in the tab and returns its value; it fails
// t on an error, naming what was being done.
func Run[T any](t testing.TB, b *Tab, what string, action chromedp.Action[T]) T {
	t.Helper()
	v, err := chromedp.Run(b.Ctx, action)
	if err != nil {
		t.Fatalf("%s: %v", what, err)
	}
	return v
}

// Screenshot saves a PNG of the element sel matches (a CSS selector), or
// of the viewport when sel is "", as build/screenshots/NAME.png under the
// module root, for a person to look at, and returns its path.
func (b *Tab) Screenshot(t testing.TB, name, sel string) string {
	t.Helper()
	shot := chromedp.CaptureScreenshot()
	if sel != "" {
		shot = chromedp.Screenshot(chromedp.CSS(sel))
	}
	png := Run(t, b, "screenshot "+name, shot)
	dir, err := screenshotDir()
	if err != nil {
		t.Fatalf("screenshot %s: %v", name, err)
	}
	path := filepath.Join(dir, name+".png")
	if err := os.WriteFile(path, png, 0o644); err != nil {
		t.Fatalf("screenshot %s: %v", name, err)
	}
	return path
}

// screenshotDir is build/screenshots under the module root (the
// directory holding go.mod above the working directory), created.
func screenshotDir() (string, error) {
	dir, err := os.Getwd()
	if err != nil {
		return "", err
	}
	for {
		if _, err := os.Stat(filepath.Join(dir, "go.mod")); err == nil {
			break
		}
		parent := filepath.Dir(dir)
		if parent == dir {
			return "", errors.New("no go.mod above the working directory")
		}
		dir = parent
	}
	out := filepath.Join(dir, "build", "screenshots")
	return out, os.MkdirAll(out, 0o755)
}
