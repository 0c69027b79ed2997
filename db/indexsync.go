package db

import (
	"context"
	"fmt"
)

// The indexer's transactions commit without an fsync of their own.
//
// What they write is derived: they index the rows past the mark (and the
// queued edits and deletes) and move the mark, atomically. If a power cut
// loses such a commit, the mark is back where it was, Search still finds
// the rows (it reads the messages past the mark), and the indexer indexes
// them again — nothing acknowledged is lost. SQLite guarantees that a WAL commit made with synchronous=NORMAL
// is atomic and never corrupts the file; it only may not survive a power
// cut until the next fsync of the WAL, which the next append's commit
// (synchronous=FULL) does for every frame before its own. So at serial
// appends, where each slice's fsync was one more wait on the disk for
// the appends queued behind it, the indexer no longer pays for a
// durability it does not need.
//
// Only a batch made of the indexer's requests alone is relaxed: an append
// that joined a slice's wait for another process's lock (runAlone) makes
// its batch FULL. Only in WAL mode: with a rollback journal, NORMAL can
// corrupt the file on a power cut. SQLite refuses to change the level
// inside a transaction, and applies it when the PRAGMA is prepared, so it
// runs on the connection before BEGIN (begin), never through the
// statement cache.

// syncLevel sets the connection's synchronous level for a batch about to
// begin: NORMAL when every request is the indexer's (and the database is
// in WAL mode), FULL otherwise (and for no batch at all).
//
// +checklocks:w.mu
func (w *writer) syncLevel(batch []*request) error {
	relax := w.wal && len(batch) > 0
	for _, r := range batch {
		relax = relax && r.indexing
	}
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

// restoreSync puts the connection back to synchronous=FULL after an
// indexer transaction, so that what runs on it next outside a batch
// (maintenance, Close) commits with its fsync. If that fails, the level
// stays marked relaxed: every batch with a caller's write sets FULL again
// before its BEGIN, and so does an exclusive operation, or they fail.
//
// +checklocks:w.mu
func (w *writer) restoreSync() {
	if !w.relaxedSync || w.conn == nil {
		return
	}
	if err := w.syncLevel(nil); err != nil {
		w.log.Warn("sessiondb: could not restore synchronous=FULL after indexing; the next write sets it", "path", w.path, "err", err)
	}
}
