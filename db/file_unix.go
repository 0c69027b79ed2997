//go:build unix

package db

import (
	"os"
	"syscall"
)

// createExclusive creates a new file 0600, refusing to follow a symlink
// planted at the path.
func createExclusive(path string) (*os.File, error) {
	return os.OpenFile(path, os.O_RDWR|os.O_CREATE|os.O_EXCL|syscall.O_NOFOLLOW|syscall.O_CLOEXEC, 0o600)
}

// writable reports an error when this user cannot create files in dir
// (SQLite must create the -wal and -shm files next to the database).
func writable(dir string) error {
	if err := syscall.Access(dir, 0x2|0x1); err != nil { // W_OK|X_OK
		return &os.PathError{Op: "access", Path: dir, Err: err}
	}
	return nil
}

// linkCount returns the number of hard links to path (0 when it cannot be
// read).
func linkCount(path string) uint64 {
	var st syscall.Stat_t
	if syscall.Stat(path, &st) != nil {
		return 0
	}
	return uint64(st.Nlink)
}
