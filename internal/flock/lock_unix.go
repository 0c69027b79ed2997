//go:build unix

package flock

import (
	"errors"
	"os"
	"syscall"

	"github.com/sessiondb/sessiondb/internal/sidefile"
)

// tryLock takes a non-blocking flock. flock locks belong to the open
// file description, so two Stores in one process exclude each other too.
func tryLock(path string) (*os.File, bool, error) {
	f, err := sidefile.Open(path, os.O_RDWR|os.O_CREATE, 0o600)
	if err != nil {
		return nil, false, err
	}
	err = syscall.Flock(int(f.Fd()), syscall.LOCK_EX|syscall.LOCK_NB)
	if errors.Is(err, syscall.EWOULDBLOCK) || errors.Is(err, syscall.EINTR) {
		f.Close()
		return nil, false, nil
	}
	if err != nil {
		f.Close()
		return nil, false, err
	}
	return f, true, nil
}

func unlock(f *os.File) { _ = syscall.Flock(int(f.Fd()), syscall.LOCK_UN) }
