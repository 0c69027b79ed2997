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

// owner is a file's user and group.
type owner struct{ uid, gid int }

// belongsToAnotherUser reports a file of another user opened by this one
// (not root, who can give what it creates to the owner).
func (o owner) belongsToAnotherUser() bool { return os.Geteuid() != 0 && o.uid != os.Geteuid() }

// fileOwner returns who owns path (false when it cannot be read).
func fileOwner(path string) (owner, bool) {
	var st syscall.Stat_t
	if syscall.Stat(path, &st) != nil {
		return owner{}, false
	}
	return owner{int(st.Uid), int(st.Gid)}, true
}

// giveTo makes a file sessiondb just created 0600 and, when this process
// is root and the database belongs to someone else, theirs (as SQLite
// itself does for its journals): root must not leave behind sidecars the
// owner cannot open.
func giveTo(f *os.File, o owner) {
	_ = f.Chmod(0o600) // the umask may have taken more than group and other
	if os.Geteuid() == 0 && o.uid != 0 {
		_ = f.Chown(o.uid, o.gid)
	}
}

// refuseForeignOwner refuses to write a database another user owns:
// every -wal and -shm this process created would be its own, 0600, and
// lock the owner out of their own file. Root is held to it too.
func refuseForeignOwner(path string) error {
	o, ok := fileOwner(path)
	if !ok || o.uid == os.Geteuid() {
		return nil
	}
	return &ForeignOwnerError{Path: path, Owner: o.uid, User: os.Geteuid()}
}
