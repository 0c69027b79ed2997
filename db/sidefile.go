package db

import (
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
)

// SideFileError refuses a file sessiondb keeps beside the database (a lock
// file, the repair ledger or its temporary file, a backup) because
// something other than a regular file stands at its path: a symbolic link
// planted there would redirect the write to its target, and a FIFO would
// block the open or the read forever while a lock is held. Nothing is
// written. It matches ErrInvalidInput.
type SideFileError struct {
	Path string
	What string // "a symbolic link", "a named pipe (FIFO)", ...
}

func (e *SideFileError) Error() string {
	return fmt.Sprintf("%s is %s, not a regular file; sessiondb opens only regular files there, since a link could redirect the write and a pipe could block it (remove it if you did not put it there)", e.Path, e.What)
}

func (e *SideFileError) Is(target error) bool { return target == ErrInvalidInput }

// describeNonRegular names what a non-regular file mode is.
func describeNonRegular(m fs.FileMode) string {
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

// refuseNonRegular returns a SideFileError when something other than a
// regular file stands at path; an absent path is fine.
func refuseNonRegular(path string) error {
	fi, err := os.Lstat(path)
	if errors.Is(err, fs.ErrNotExist) {
		return nil
	}
	if err != nil {
		return err
	}
	if !fi.Mode().IsRegular() {
		return &SideFileError{Path: path, What: describeNonRegular(fi.Mode())}
	}
	return nil
}

// readSideFile reads a whole side file through openSideFile.
func readSideFile(path string) ([]byte, error) {
	f, err := openSideFile(path, os.O_RDONLY, 0)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	return io.ReadAll(f)
}

// writeSideFile replaces path's content with b through openSideFile and
// syncs it.
func writeSideFile(path string, b []byte) error {
	f, err := openSideFile(path, os.O_WRONLY|os.O_CREATE|os.O_TRUNC, 0o600)
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
