package db

import (
	"context"
	"database/sql"
	"errors"
)

// exclusive runs fn on the writer connection outside any transaction, with
// no write in flight and none starting until it returns: for maintenance
// that cannot run inside a transaction (VACUUM). The file's identity is
// checked first, as for every write, and a lock error comes back as a
// LockedError (ErrLocked).
func (w *writer) exclusive(ctx context.Context, fn func(ctx context.Context, c *sql.Conn) error) error {
	w.mu.Lock()
	defer w.unlock()
	if err := w.closedOrHalted(); err != nil {
		return err
	}
	if err := w.id.checkFile(ctx, w.path, w.conn); err != nil {
		if errors.Is(err, ErrReplaced) {
			return w.stop(err)
		}
		return err
	}
	if err := w.syncLevel(nil); err != nil { // FULL, whatever the indexer left
		return err
	}
	err := fn(ctx, w.conn)
	w.haltOnSyncFailure(err) // VACUUM and its checkpoints sync too
	if isLockError(err) {
		// Another connection held the write lock past the writer's busy
		// wait: the same typed error as a write whose patience ran out.
		err = w.lockedError(busyTimeout[kindWriter], err)
	}
	return err
}
