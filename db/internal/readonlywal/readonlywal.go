// Package readonlywal registers the VFS a read-only Store reads through
// (VFS): the driver's own, except that a -wal this user may not write is
// opened for reading. Package db's read-only opens name it; no
// connection is opened here.
package readonlywal

import (
	"errors"
	"io/fs"

	"github.com/ncruces/go-sqlite3/vfs"
)

// VFS names the VFS a read-only Store reads through: the driver's own,
// except that a -wal this user may not write is opened for reading.
//
// SQLite's C VFS does this itself (unixOpen retries O_RDONLY when O_RDWR
// is refused, and the WAL is then read-only); the driver's VFS does not,
// and its open fails with "unable to open database file". A 0400 store
// meets it at its second read: the first one's connection makes a -wal,
// which takes the database's mode (modeof, as SQLite gives it), 0400, so
// from then on every read command of the file's own owner failed
// (issue 38). Only a WAL is retried: a main file opened read-write that
// cannot be written is the read-only store's own choice (mode=ro), and a
// -shm this user cannot write is what package db's readOnlyKind's immutable reader is
// for.
const VFS = "sessiondb-readonly-wal"

func init() { vfs.Register(VFS, readOnlyWAL{vfs.Find("").(vfs.VFSFilename)}) }

// readOnlyWAL wraps the driver's VFS; see VFS.
type readOnlyWAL struct{ vfs.VFSFilename }

func (v readOnlyWAL) OpenFilename(name *vfs.Filename, flags vfs.OpenFlag) (vfs.File, vfs.OpenFlag, error) {
	f, out, err := v.VFSFilename.OpenFilename(name, flags)
	if err != nil && flags&vfs.OPEN_WAL != 0 && flags&vfs.OPEN_READWRITE != 0 && errors.Is(err, fs.ErrPermission) {
		// The flags handed back tell SQLite the WAL is read-only.
		ro := flags&^(vfs.OPEN_READWRITE|vfs.OPEN_CREATE) | vfs.OPEN_READONLY
		return v.VFSFilename.OpenFilename(name, ro)
	}
	return f, out, err
}
