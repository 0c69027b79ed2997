//go:build windows

package flock

import (
	"errors"
	"os"
	"syscall"

	"github.com/sessiondb/sessiondb/internal/sidefile"
)

// errSharingViolation is ERROR_SHARING_VIOLATION (not exported by syscall).
const errSharingViolation = syscall.Errno(32)

// tryLock opens the lock file with no sharing: a second opener gets
// ERROR_SHARING_VIOLATION until the holder closes it (or dies).
func tryLock(path string) (*os.File, bool, error) {
	if err := sidefile.RefuseNonRegular(path); err != nil {
		return nil, false, err
	}
	p, err := syscall.UTF16PtrFromString(path)
	if err != nil {
		return nil, false, err
	}
	h, err := syscall.CreateFile(p, syscall.GENERIC_READ|syscall.GENERIC_WRITE, 0, nil,
		syscall.OPEN_ALWAYS, syscall.FILE_ATTRIBUTE_NORMAL, 0)
	if errors.Is(err, errSharingViolation) {
		return nil, false, nil
	}
	if err != nil {
		return nil, false, err
	}
	return os.NewFile(uintptr(h), path), true, nil
}

func unlock(*os.File) {} // closing the handle releases it
