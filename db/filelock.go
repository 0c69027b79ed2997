package db

import (
	"context"
	"fmt"

	"github.com/sessiondb/sessiondb/internal/flock"
	"github.com/sessiondb/sessiondb/internal/fsx"
)

// acquireFileLock waits for the cross-process lock at path, a side file of
// the database at main, until ctx is done (flock.Acquire); something other
// than a regular file at path is refused with a SideFileError. The lock
// file gets the database's mode and owner, as its -wal and -shm do
// (fsx.GiveTo), so it is never more open than the database.
//
// The lock file stays beside the database after the lock is released, and
// is never removed: a process waiting for the lock holds a descriptor of
// that file, and if the file were unlinked it would take the lock on the
// removed file while a third process created and locked a new one — two
// migrations at once, which goose cannot survive on SQLite. (Re-checking
// the path after locking would close that race among new versions, but
// not against an older sessiondb still running.) Open takes it only once
// inspectPath found a store, an empty file or nothing at main, so no lock
// file is left beside a file that is not a store.
func acquireFileLock(ctx context.Context, path, main string) (*flock.Lock, error) {
	l, err := flock.Acquire(ctx, path)
	if err != nil {
		return nil, fmt.Errorf("lock %s: %w", path, sideFileError(err))
	}
	if owner, ok := fsx.FileOwner(main); ok && !owner.BelongsToAnotherUser() {
		fsx.GiveTo(l.File(), owner)
	}
	return l, nil
}
