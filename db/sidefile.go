package db

import (
	"errors"
	"io/fs"
	"os"

	"github.com/sessiondb/sessiondb/internal/sidefile"
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

func (e *SideFileError) Error() string { return (*sidefile.NotRegularError)(e).Error() }

func (e *SideFileError) Is(target error) bool { return target == ErrInvalidInput }

// sideFileError gives internal/sidefile's refusal its public type. The
// leaf returns its refusal unwrapped, so replacing it loses nothing.
func sideFileError(err error) error {
	var nr *sidefile.NotRegularError
	if errors.As(err, &nr) {
		return (*SideFileError)(nr)
	}
	return err
}

// openSideFile opens a side file so nothing planted at its path can
// redirect or block it (sidefile.Open).
func openSideFile(path string, flag int, perm fs.FileMode) (*os.File, error) {
	f, err := sidefile.Open(path, flag, perm)
	return f, sideFileError(err)
}

// refuseNonRegular returns a SideFileError when something other than a
// regular file stands at path; an absent path is fine.
func refuseNonRegular(path string) error { return sideFileError(sidefile.RefuseNonRegular(path)) }

// readSideFile reads a whole side file through openSideFile.
func readSideFile(path string) ([]byte, error) {
	b, err := sidefile.Read(path)
	return b, sideFileError(err)
}

// writeSideFile replaces path's content with b through openSideFile and
// syncs it.
func writeSideFile(path string, b []byte) error { return sideFileError(sidefile.Write(path, b)) }

// sideFiles is internal/backup's way to the side files: this package's
// opener, whose refusals are SideFileErrors.
type sideFiles struct{}

func (sideFiles) Open(path string, flag int, perm fs.FileMode) (*os.File, error) {
	return openSideFile(path, flag, perm)
}

func (sideFiles) Read(path string) ([]byte, error) { return readSideFile(path) }

func (sideFiles) Write(path string, b []byte) error { return writeSideFile(path, b) }
