package jetstream

import (
	"bufio"
	"context"
	"errors"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
)

// lockHelperEnv names the data directory the helper process locks.
const lockHelperEnv = "HERALD_TEST_LOCK_DIR"

// TestDataDirLockHelper is not a test: run by TestDataDirLock as a
// separate process, it locks the data directory named by lockHelperEnv,
// says so on stdout and holds the lock until it is killed.
func TestDataDirLockHelper(t *testing.T) {
	dir := os.Getenv(lockHelperEnv)
	if dir == "" {
		t.Skip("the helper process of TestDataDirLock; runs only when that test starts it")
	}
	if _, err := lockDataDir(dir); err != nil {
		t.Fatal(err)
	}
	os.Stdout.WriteString("locked\n")
	select {} // until killed
}

// TestDataDirLock: one embedded server per data directory. A second
// engine on a directory another holds does not start, and its error
// names the directory and the holder's pid; the lock is released when
// the engine closes, and by the kernel when its holder dies (a lock file
// left by a crash is taken over).
func TestDataDirLock(t *testing.T) {
	o := testOptions(t)
	dir := o.Embedded.DataDir
	first := open(t, o)
	_, err := Open(context.Background(), o)
	want := "data directory " + dir + " is in use by another process (pid " + strconv.Itoa(os.Getpid()) + " holds " + filepath.Join(dir, "herald.lock") + ")"
	var inUse *dirInUseError
	if !errors.As(err, &inUse) || !strings.Contains(err.Error(), want) {
		t.Fatalf("a second engine on %s: %v, want an error containing %q", dir, err, want)
	}
	if err := first.Close(); err != nil {
		t.Fatal(err)
	}
	second := open(t, o) // closed: the directory is free again
	mustPublish(t, second, note("mars", "od"))
	if err := second.Close(); err != nil {
		t.Fatal(err)
	}

	// Another process takes the lock, then dies without releasing it.
	cmd := exec.Command(os.Args[0], "-test.run=^TestDataDirLockHelper$", "-test.count=1")
	cmd.Env = append(os.Environ(), lockHelperEnv+"="+dir)
	out, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = cmd.Process.Kill(); _ = cmd.Wait() })
	if line, err := bufio.NewReader(out).ReadString('\n'); err != nil || line != "locked\n" {
		t.Fatalf("helper process: %q %v", line, err)
	}
	_, err = Open(context.Background(), o)
	want = "(pid " + strconv.Itoa(cmd.Process.Pid) + " holds "
	if err == nil || !strings.Contains(err.Error(), want) {
		t.Fatalf("while another process holds it: %v, want an error containing %q", err, want)
	}
	if err := cmd.Process.Kill(); err != nil { // SIGKILL: no clean-up runs
		t.Fatal(err)
	}
	_ = cmd.Wait()
	if b, _ := os.ReadFile(filepath.Join(dir, "herald.lock")); string(b) != strconv.Itoa(cmd.Process.Pid)+"\n" {
		t.Fatalf("the lock file after the crash holds %q, want the dead process's pid", b)
	}
	third := open(t, o)
	if got := mustPublish(t, third, note("mars", "od")); got != 2 {
		t.Fatalf("after the crash: sequence %d, want 2 (the store kept the first)", got)
	}
	if b, _ := os.ReadFile(filepath.Join(dir, "herald.lock")); string(b) != strconv.Itoa(os.Getpid())+"\n" {
		t.Fatalf("the lock file holds %q, want this process's pid", b)
	}
}
