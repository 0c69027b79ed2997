// Package sidefile opens the files sessiondb keeps beside a database (lock
// files, the repair ledger and its temporary file, backups) so that
// nothing planted at their paths can redirect or block the open: a
// symbolic link there would redirect a write to its target, and a FIFO
// would block the open or the read forever while a lock is held. The
// database and its -wal/-shm are opened by SQLite, not here.
package sidefile

import (
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
)

// NotRegularError refuses a side file because something other than a
// regular file stands at its path. Nothing is written. The db package
// gives it its public name, SideFileError, and its sentinel.
type NotRegularError struct {
	Path string
	What string // "a symbolic link", "a named pipe (FIFO)", ...
}

func (e *NotRegularError) Error() string {
	return fmt.Sprintf("%s is %s, not a regular file; sessiondb opens only regular files there, since a link could redirect the write and a pipe could block it (remove it if you did not put it there)", e.Path, e.What)
}

// describe names what a non-regular file mode is.
func describe(m fs.FileMode) string {
	switch {
	case m&fs.ModeSymlink != 0:
		return "a symbolic link"
	case m&fs.ModeNamedPipe != 0:
		return "a named pipe (FIFO)"
	case m&fs.ModeSocket != 0:
		return "a socket"
	case m&fs.ModeDevice != 0:
		return "a device"
	case m.IsDir():
		return "a directory"
	}
	return "not a regular file"
}

// RefuseNonRegular returns a NotRegularError when something other than a
// regular file stands at path; an absent path is fine.
func RefuseNonRegular(path string) error {
	fi, err := os.Lstat(path)
	if errors.Is(err, fs.ErrNotExist) {
		return nil
	}
	if err != nil {
		return err
	}
	if !fi.Mode().IsRegular() {
		return &NotRegularError{Path: path, What: describe(fi.Mode())}
	}
	return nil
}

// Read reads a whole side file through Open.
func Read(path string) ([]byte, error) {
	f, err := Open(path, os.O_RDONLY, 0)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	return io.ReadAll(f)
}

// Write replaces path's content with b through Open and syncs it.
func Write(path string, b []byte) error {
	f, err := Open(path, os.O_WRONLY|os.O_CREATE|os.O_TRUNC, 0o600)
	if err != nil {
		return err
	}
	if _, err := f.Write(b); err != nil {
		f.Close()
		return err
	}
	if err := f.Sync(); err != nil {
		f.Close()
		return err
	}
	return f.Close()
}
