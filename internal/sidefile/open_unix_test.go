//go:build unix

package sidefile

import (
	"errors"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"
)

// within runs fn and fails the test if it has not returned after limit: a
// side file that blocks must fail the test, not hang it.
func within(t *testing.T, limit time.Duration, fn func() error) error {
	t.Helper()
	done := make(chan error, 1)
	go func() { done <- fn() }()
	select {
	case err := <-done:
		return err
	case <-time.After(limit):
		t.Fatalf("still blocked after %v", limit)
		return nil
	}
}

// Every kind of non-regular file is refused by Open, and a
// regular one opens in blocking mode.
func TestOpen_RefusesNonRegular(t *testing.T) {
	dir := t.TempDir()
	regular := filepath.Join(dir, "regular")
	os.WriteFile(regular, []byte("x"), 0o600)
	fifo := filepath.Join(dir, "fifo")
	syscall.Mkfifo(fifo, 0o600)
	link := filepath.Join(dir, "link")
	os.Symlink(regular, link)
	dangling := filepath.Join(dir, "dangling")
	os.Symlink(filepath.Join(dir, "absent"), dangling)
	for _, c := range []struct {
		path string
		flag int
		what string
	}{
		{link, os.O_RDONLY, "symbolic link"},
		{dangling, os.O_WRONLY | os.O_CREATE, "symbolic link"},
		{fifo, os.O_RDONLY, "named pipe"},
		{fifo, os.O_WRONLY, "named pipe"},
		{"/dev/null", os.O_WRONLY, "device"},
		{dir, os.O_RDONLY, "directory"},
	} {
		err := within(t, 10*time.Second, func() error {
			f, err := Open(c.path, c.flag, 0o600)
			if err == nil {
				f.Close()
			}
			return err
		})
		var nr *NotRegularError
		if !errors.As(err, &nr) || nr.Path != c.path || !strings.Contains(err.Error(), c.what) {
			t.Errorf("Open(%s) = %v, want a NotRegularError naming %q", c.path, err, c.what)
		}
	}
	if _, err := os.Stat(filepath.Join(dir, "absent")); !errors.Is(err, os.ErrNotExist) {
		t.Errorf("a dangling symlink's target was created")
	}
	f, err := Open(regular, os.O_RDWR, 0)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	// Through SyscallConn: f.Fd() would itself switch the file to blocking.
	rc, err := f.SyscallConn()
	if err != nil {
		t.Fatal(err)
	}
	var flags uintptr
	var errno syscall.Errno
	rc.Control(func(fd uintptr) { flags, _, errno = syscall.Syscall(syscall.SYS_FCNTL, fd, syscall.F_GETFL, 0) })
	if errno != 0 || flags&syscall.O_NONBLOCK != 0 {
		t.Errorf("regular side file left non-blocking: flags %#x, %v", flags, errno)
	}
}
