package db

import (
	"database/sql"
	"errors"
	"fmt"
	"path/filepath"
	"syscall"

	"github.com/ncruces/go-sqlite3"

	"github.com/sessiondb/sessiondb/internal/fsx"
)

// diskFullSlack is the free space under which an I/O error is taken for a
// full disk: a write that failed with this little room left failed for
// want of room. SQLite writes pages of at most 64 KiB and the WAL index
// grows by 32 KiB, so 1 MiB is well above what a failed write leaves.
const diskFullSlack = 1 << 20

// resourceCause names the cause of err when the database's surroundings,
// not the file, are to blame: a full disk or an exhausted descriptor
// table. The driver loses the errno of a failed write (os.File.WriteAt
// wraps ENOSPC in a *fs.PathError, which the VFS does not unwrap, so
// SQLite reports a generic SQLITE_IOERR instead of SQLITE_FULL), and an
// open that fails inside SQLite reports CANTOPEN with no errno at all — so
// an I/O or open error is checked against the filesystem's free space and
// the process's open files. Errors it does not recognise are returned as
// they are; an error that already names a cause keeps it.
func resourceCause(path string, err error) error {
	if err == nil || errors.Is(err, ErrDiskFull) || errors.Is(err, ErrTooManyOpenFiles) || errors.Is(err, ErrIO) {
		return err // the cause is named already (a halted store says reopen, not free space)
	}
	if !errors.Is(err, sqlite3.IOERR) && !errors.Is(err, sqlite3.CANTOPEN) && !errors.Is(err, sqlite3.FULL) &&
		!errors.Is(err, sql.ErrConnDone) {
		return mapDriverError(err)
	}
	dir := filepath.Dir(path)
	// A read-only filesystem (squashfs, an ISO) reports no free space at
	// all: that is not a full disk.
	readOnlyMedium := errors.Is(fsx.Writable(dir), syscall.EROFS)
	if free, ok := fsx.FreeSpace(dir); ok && free < diskFullSlack && !readOnlyMedium {
		return fmt.Errorf("%w (%s has %d bytes free; free some space and retry): %w",
			ErrDiskFull, dir, free, err)
	}
	if errors.Is(err, sqlite3.CANTOPEN) && fsx.DescriptorsExhausted() {
		return fmt.Errorf("%w (this process is at its open-file limit, ulimit -n; raise it or close files): %w",
			ErrTooManyOpenFiles, err)
	}
	return mapDriverError(err)
}
