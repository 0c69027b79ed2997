package db

import (
	"context"
	"fmt"
	"os"
	"strconv"

	"github.com/sessiondb/sessiondb/db/internal/forensics"
)

// Every WAL sessiondb writes holds page 1, stamped with the file's
// application_id, so that forensics.ForeignWAL can tell another file's
// WAL by it (internal/forensics/walforeign.go). The frames SQLite would
// replay are those since the WAL last started over (one generation, named
// by its salts), so it is enough that each generation holds one stamp of
// ours: a commit stamps only when this writer has not stamped the
// generation it appends to, or when the commit may start a new one.
//
// SQLite starts the WAL over (or writes its first frames) only in a write
// transaction whose read began with every frame of the WAL copied back
// into the main file (the wal-index's mxFrame equal to the checkpoint's
// nBackfill; https://www.sqlite.org/walformat.html §2). Once the
// transaction holds the write lock, mxFrame and the salts cannot change
// and nBackfill can only grow to meet mxFrame, so reading them then and
// finding mxFrame ahead proves the read began ahead too: this commit
// appends to the generation whose salts it read. Unknown or unreadable,
// the commit stamps. That saves one page of the WAL — a seventh of a
// serial append's frames — and a PRAGMA on nearly every commit.

// stampWAL makes the transaction write page 1 with the file's
// application_id when the generation it commits to may lack our stamp
// (stampDue). Hand-written: sqlc cannot express PRAGMA; appID is our
// integer. A file not yet stamped (appID 0, during Open) is left alone.
//
// +checklocks:w.mu
func (w *writer) stampWAL(ctx context.Context) error {
	w.id.pendingSalts = ""
	if w.id.appID == 0 {
		return nil
	}
	due, salts := w.stampDue()
	if !due {
		return nil
	}
	if _, err := w.tx.ExecContext(ctx, "PRAGMA application_id = "+strconv.FormatInt(w.id.appID, 10)); err != nil {
		return fmt.Errorf("stamp the commit: %w", err)
	}
	w.id.pendingSalts = salts
	return nil
}

// stampCommitted records, after a COMMIT succeeded, the generation its
// stamp (if it carried one) went into.
//
// +checklocks:w.mu
func (w *writer) stampCommitted() {
	if w.id.pendingSalts != "" {
		w.id.stampedSalts = w.id.pendingSalts
		w.id.pendingSalts = ""
	}
}

// stampDue reports whether the transaction in progress on the writer,
// which holds the write lock, must stamp page 1, and the salts of the
// generation it commits to ("" when unknown or when it may start a new
// one). It reads the wal-index from the -shm file (forensics.AppendingTo),
// which the driver's own VFS maps into SQLite's memory where
// forensics.SHMFileBacked says so; on any other VFS (one an Options.VFS
// names) or build it answers true, as it does to any doubt.
//
// +checklocks:w.mu
func (w *writer) stampDue() (bool, string) {
	if !w.wal || !forensics.SHMFileBacked || w.vfs != "" {
		return true, ""
	}
	if w.id.shm == nil {
		if w.id.shmTried {
			return true, ""
		}
		w.id.shmTried = true
		f, err := os.Open(w.path + "-shm")
		if err != nil {
			return true, ""
		}
		w.id.shm = f
	}
	salts, ok := forensics.AppendingTo(w.id.shm)
	if !ok {
		return true, "" // unknown, or it may start a new generation
	}
	return salts != w.id.stampedSalts, salts
}
