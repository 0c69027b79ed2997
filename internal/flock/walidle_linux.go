package flock

import (
	"errors"
	"io/fs"
	"os"
	"syscall"

	"golang.org/x/sys/unix"
)

// walDMSByte is the shared-memory byte every connection to a WAL database
// holds a read lock on while it is open (SQLite's "dead man's switch",
// UNIX_SHM_DMS; the driver's VFS keeps the same protocol).
const walDMSByte = 128

// HoldWALIdle reports whether no connection, in any process, has the
// database open in WAL mode, and keeps it so until release: it takes a
// write lock on the shared memory's dead-man's-switch byte, which every
// open connection holds a read lock on, so an opener that comes meanwhile
// waits (SQLite reports it busy). The lock is an open-file-description
// lock, so closing its descriptor drops no other lock of this process.
// Without a -shm file no connection has the database open.
func HoldWALIdle(path string) (release func(), idle bool, err error) {
	f, err := os.OpenFile(path+"-shm", os.O_RDWR|syscall.O_NOFOLLOW|syscall.O_NONBLOCK|syscall.O_CLOEXEC, 0)
	switch {
	case errors.Is(err, fs.ErrNotExist):
		return func() {}, true, nil
	case err != nil:
		return nil, false, nil // not ours to lock: leave the check to SQLite
	}
	if fi, err := f.Stat(); err != nil || !fi.Mode().IsRegular() {
		f.Close()
		return nil, false, nil
	}
	lk := unix.Flock_t{Type: unix.F_WRLCK, Whence: 0, Start: walDMSByte, Len: 1}
	if err := unix.FcntlFlock(f.Fd(), unix.F_OFD_SETLK, &lk); err != nil {
		f.Close()
		return nil, false, nil // held: a live connection owns the WAL
	}
	return func() {
		lk.Type = unix.F_UNLCK
		_ = unix.FcntlFlock(f.Fd(), unix.F_OFD_SETLK, &lk)
		f.Close()
	}, true, nil
}
