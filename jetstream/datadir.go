package jetstream

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
)

// lockFileName is the lock file the embedded server's data directory
// holds while a herald uses it: two nats-servers writing one file store
// would corrupt it, and nats-server does not guard against that itself.
const lockFileName = "herald.lock"

// dirInUseError: another process (another herald) holds the data
// directory's lock.
type dirInUseError struct {
	dir, path string
	holder    string // "pid N", or "pid unknown"
}

// Error names the directory, the holder and what to do.
func (e *dirInUseError) Error() string {
	return "data directory " + e.dir + " is in use by another process (" + e.holder + " holds " + e.path +
		"): run one herald per data directory, or give this one its own notification_backend.jetstream.data_dir"
}

// lockDataDir takes an exclusive lock on dir (flock on lockFileName,
// which it creates) and writes the process id into the file, for the
// message another herald gets. The kernel releases the lock when the
// file is closed or the process ends, however it ends, so a lock file
// left by a crash is stale and taken over. The file itself is never
// removed: removing it while another process waits on it would let two
// processes lock two different files.
func lockDataDir(dir string) (*os.File, error) {
	path := filepath.Join(dir, lockFileName)
	f, err := os.OpenFile(path, os.O_RDWR|os.O_CREATE, 0o640)
	if err != nil {
		return nil, fmt.Errorf("data directory %s: lock file: %w", dir, err)
	}
	if err := syscall.Flock(int(f.Fd()), syscall.LOCK_EX|syscall.LOCK_NB); err != nil {
		holder := readHolder(f)
		_ = f.Close()
		if errors.Is(err, syscall.EWOULDBLOCK) {
			return nil, &dirInUseError{dir: dir, path: path, holder: holder}
		}
		return nil, fmt.Errorf("data directory %s: locking %s: %w", dir, path, err)
	}
	pid := []byte(strconv.Itoa(os.Getpid()) + "\n")
	err = f.Truncate(0)
	if err == nil {
		_, err = f.WriteAt(pid, 0)
	}
	if err != nil {
		_ = f.Close()
		return nil, fmt.Errorf("data directory %s: writing %s: %w", dir, path, err)
	}
	return f, nil
}

// readHolder names the process holding a lock file: its pid as written
// there ("pid unknown" while the holder has not written it yet).
func readHolder(f *os.File) string {
	b := make([]byte, 32)
	n, _ := f.ReadAt(b, 0)
	pid, err := strconv.Atoi(strings.TrimSpace(string(b[:n])))
	if err != nil || pid <= 0 {
		return "pid unknown"
	}
	return "pid " + strconv.Itoa(pid)
}
