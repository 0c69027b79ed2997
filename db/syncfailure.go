package db

// syncfailure.go is what the writer does when an fsync fails.
//
// After a failed fsync, Linux may already have dropped the dirty pages it
// could not write: it marks them clean, keeps serving their new contents
// from the page cache until they are evicted, and reports the error once.
// The next fsync on the file then succeeds, although the dropped data never
// reached the disk (PostgreSQL's "fsyncgate", 2018). SQLite does not stop
// after a failed fsync: the failed statement rolls back, the connection is
// usable again at once, and its next checkpoint trusts that the pages an
// earlier checkpoint copied into the main file are durable. A PASSIVE
// checkpoint that a reader holds short advances its backfill mark without
// an fsync of the main file (only a checkpoint that copies the whole log
// syncs it); when the complete checkpoint's fsync fails, the next one
// starts at that mark, succeeds, and the log starts over — the pages the
// partial checkpoint copied are then in neither file. The power-loss
// harness shows it (tests/powerloss, TestFaults_SQLiteAloneLosesRows).
//
// So any failed fsync halts the Store's writes, sticky, until it is
// reopened: no later commit or checkpoint runs (the close skips SQLite's
// own one too). The halt is set before the writer lock is released, so a
// write waiting for the lock never commits after the failure. The reopen's WAL recovery — once no connection is left on
// the file — starts the backfill mark at zero, and Open's checkpoint
// (checkpointAtOpen) copies every frame of the log into the main file
// again, rewriting whatever the kernel dropped, before anything new is
// acknowledged. A commit whose WAL fsync failed is reported
// ErrCommitUnknown: a reopen in the same boot may recover its frames from
// the page cache (that checkpoint then makes them durable), a crash may
// not; a retry with the same idempotency key is exactly-once either way.
//
// A failed write(2) does not halt: SQLite rolls the transaction back and
// the next commit overwrites the frames it left past the log's end, no
// durability claim rests on a write that failed, and Linux reports lost
// writeback through fsync, never through a later write — a dying disk's
// next fsync fails and halts. A full disk (ENOSPC) clears once space is
// freed, and writes simply resume (ErrDiskFull).

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"syscall"

	"github.com/ncruces/go-sqlite3"
	"github.com/ncruces/go-sqlite3/driver"
)

// checkpointAtOpen copies the log into the main file, synced, before the
// Store acknowledges anything. After a failed fsync the log may end in
// frames the page cache still serves but the disk lacks (a commit that
// reported ErrCommitUnknown): recovery at this open takes them as
// committed, and a commit appended after them would sit behind a hole on
// the disk, lost at the next crash (TestFaults, reopened in the same boot).
// Once the main file holds them durably, the next write starts the log
// over. A failed fsync here fails Open; a checkpoint that readers cut
// short is not an error.
func checkpointAtOpen(ctx context.Context, c *sql.Conn) error {
	if err := checkpointPassive(ctx, c); isSyncFailure(err) {
		return fmt.Errorf("checkpoint at open: %w", err)
	}
	return nil
}

// autoCheckpointPages is SQLite's default wal_autocheckpoint, which the
// writer's own WAL hook (watchAutoCheckpoint) keeps.
const autoCheckpointPages = 1000

// isSyncFailure reports a failed fsync of a file or of its directory
// (SQLite's IOERR_FSYNC, IOERR_DIR_FSYNC), whatever the errno.
func isSyncFailure(err error) bool {
	return errors.Is(err, sqlite3.IOERR_FSYNC) || errors.Is(err, sqlite3.IOERR_DIR_FSYNC)
}

// isDiskFull reports a write that found no room. A failed fsync reporting
// ENOSPC is a sync failure, not this.
func isDiskFull(err error) bool {
	return !isSyncFailure(err) && (errors.Is(err, sqlite3.FULL) || errors.Is(err, syscall.ENOSPC))
}

// haltOnSyncFailure halts writes when err is a failed fsync and returns
// the halt error; any other err comes back unchanged.
func (w *writer) haltOnSyncFailure(err error) error {
	if !isSyncFailure(err) {
		return err
	}
	return w.stop(fmt.Errorf("%w: writes are halted until the store is reopened: an fsync failed, and after a failed fsync "+
		"the kernel may have dropped the unsynced data, so no later fsync proves it durable (what was acknowledged "+
		"before is safe in the WAL; check the disk and the kernel log, then reopen): %w", ErrIO, err))
}

// watchAutoCheckpoint replaces SQLite's automatic checkpoint with the same
// one (PASSIVE, once the log holds autoCheckpointPages) that halts writes
// when it fails to sync: SQLite's own ignores every error. The commit that
// ran it is durable (its WAL fsync came first) and is acknowledged.
func (w *writer) watchAutoCheckpoint(c *sql.Conn) {
	_ = c.Raw(func(dc any) error {
		if d, ok := dc.(driver.Conn); ok {
			d.Raw().WALHook(func(db *sqlite3.Conn, schema string, pages int) error {
				if pages < autoCheckpointPages || w.halted() != nil {
					return nil
				}
				if _, _, err := db.WALCheckpoint(schema, sqlite3.CHECKPOINT_PASSIVE); err != nil {
					w.haltOnSyncFailure(err)
				}
				return nil
			})
		}
		return nil
	})
}
