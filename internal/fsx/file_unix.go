//go:build unix

package fsx

import (
	"os"
	"syscall"
)

// CreateExclusive creates a new file 0600, refusing to follow a symlink
// planted at the path.
func CreateExclusive(path string) (*os.File, error) {
	return os.OpenFile(path, os.O_RDWR|os.O_CREATE|os.O_EXCL|syscall.O_NOFOLLOW|syscall.O_CLOEXEC, 0o600)
}

// Writable reports an error when this user cannot create files in dir
// (SQLite must create the -wal and -shm files next to the database).
func Writable(dir string) error {
	if err := syscall.Access(dir, 0x2|0x1); err != nil { // W_OK|X_OK
		return &os.PathError{Op: "access", Path: dir, Err: err}
	}
	return nil
}

// LinkCount returns the number of hard links to path (0 when it cannot be
// read).
func LinkCount(path string) uint64 {
	var st syscall.Stat_t
	if syscall.Stat(path, &st) != nil {
		return 0
	}
	return uint64(st.Nlink)
}

// Owner is a file's user and group, and its permission bits: what a side
// file made for it is given.
type Owner struct {
	uid, gid int
	perm     os.FileMode
}

// BelongsToAnotherUser reports a file of another user opened by this one
// (not root, who can give what it creates to the owner).
func (o Owner) BelongsToAnotherUser() bool { return os.Geteuid() != 0 && o.uid != os.Geteuid() }

// SideFilePerm is the mode of a side file of a database with this owner:
// the database's own permission bits, with read and write for the owner
// always (a 0400 store's -shm must still be writable by its owner, or
// SQLite cannot read the store through it).
func (o Owner) SideFilePerm() os.FileMode { return o.perm | 0o600 }

// FileOwner returns who owns path (false when it cannot be read).
func FileOwner(path string) (Owner, bool) {
	var st syscall.Stat_t
	if syscall.Stat(path, &st) != nil {
		return Owner{}, false
	}
	return Owner{int(st.Uid), int(st.Gid), os.FileMode(st.Mode) & os.ModePerm}, true
}

// GiveTo gives a side file sessiondb just created (0600) the database
// file's permission bits (SideFilePerm) and, when this process is root and the database
// belongs to someone else, its owner (as SQLite itself does for its
// journals): a group-shared store's side files are group-readable like
// it, a 0600 store's stay 0600, and root never leaves behind sidecars the
// owner cannot open.
func GiveTo(f *os.File, o Owner) {
	_ = f.Chmod(o.SideFilePerm()) // exactly: the umask may have taken more
	if os.Geteuid() == 0 && o.uid != 0 {
		_ = f.Chown(o.uid, o.gid)
	}
}

// ForeignOwner reports the owner of path when it is not this process's
// user (root included): every -wal and -shm this process created beside
// it would be its own, 0600, and lock the owner out of their own file.
func ForeignOwner(path string) (uid int, foreign bool) {
	o, ok := FileOwner(path)
	if !ok || o.uid == os.Geteuid() {
		return 0, false
	}
	return o.uid, true
}
