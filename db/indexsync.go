package db

import (
	"context"
	"fmt"
)

// The writer commits with synchronous=NORMAL in WAL mode, and FULL
// otherwise.
//
// NORMAL appends a commit's frames to the WAL without an fsync; SQLite
// guarantees such a commit is atomic and never corrupts the file, and it
// still syncs the WAL before each checkpoint and the main file after it.
// What NORMAL leaves out, the durability of the last commits, comes back
// where it is needed: a caller's write is acknowledged only after an
// fsync of the WAL made after its COMMIT (logsync.go). The indexer's
// transactions need none: what they write is derived — they index the
// rows past the mark and move the mark, atomically — so a power cut that
// takes one back leaves the rows past the mark, which Search reads and the
// indexer indexes again. The next caller's fsync makes them durable too.
//
// With a rollback journal (WAL refused) NORMAL can corrupt the file on a
// power cut: there every batch is FULL, and acknowledged at COMMIT.
// Exclusive operations (VACUUM) run FULL as well. SQLite refuses to change
// the level inside a transaction, and applies it when the PRAGMA is
// prepared, so it runs on the connection before BEGIN (begin), never
// through the statement cache.

// syncLevel sets the connection's synchronous level for a batch about to
// begin: NORMAL for any batch when the log's fsync acknowledges writes,
// FULL otherwise (and for no batch at all, before an exclusive operation).
//
// +checklocks:w.mu
func (w *writer) syncLevel(batch []*request) error {
	relax := w.wal && w.sy != nil && len(batch) > 0
	if relax == w.relaxedSync {
		return nil
	}
	level := "FULL"
	if relax {
		level = "NORMAL"
	}
	// Hand-written: sqlc cannot express PRAGMA.
	if _, err := w.conn.ExecContext(context.Background(), "PRAGMA synchronous = "+level); err != nil {
		return fmt.Errorf("set synchronous=%s: %w", level, err)
	}
	w.relaxedSync = relax
	return nil
}
