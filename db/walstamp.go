package db

import (
	"context"
	"encoding/binary"
	"fmt"
	"os"
	"strconv"
)

// Every WAL sessiondb writes holds page 1, stamped with the file's
// application_id, so that foreignWAL can tell another file's WAL by it
// (walforeign.go). The frames SQLite would replay are those since the WAL
// last started over, so it is enough that the first commit after each
// start writes page 1: a commit that cannot start the WAL over need not.
//
// SQLite starts the WAL over (or writes its first frames) only in a write
// transaction whose read began with every frame of the WAL copied back
// into the main file (the wal-index's mxFrame equal to the checkpoint's
// nBackfill; https://www.sqlite.org/walformat.html §2). Once the
// transaction holds the write lock, mxFrame cannot change and nBackfill
// can only grow to meet it, so reading both then and finding mxFrame
// ahead proves the read began ahead too: this commit appends to the WAL
// it found, whose first commit holds page 1. Equal, unknown or unreadable,
// the commit stamps. That saves one page of the WAL — a seventh of a
// serial append's frames — and a PRAGMA on every other commit.

// stampWAL makes the transaction write page 1 with the file's
// application_id when the commit may start the WAL over (walMayRestart).
// Hand-written: sqlc cannot express PRAGMA; appID is our integer. A file
// not yet stamped (appID 0, during Open) is left alone.
//
// +checklocks:w.mu
func (w *writer) stampWAL(ctx context.Context) error {
	if w.id.appID == 0 || !w.walMayRestart() {
		return nil
	}
	if _, err := w.tx.ExecContext(ctx, "PRAGMA application_id = "+strconv.FormatInt(w.id.appID, 10)); err != nil {
		return fmt.Errorf("stamp the commit: %w", err)
	}
	return nil
}

// The wal-index header (walformat.html §2.1): two copies of a 48-byte
// header, then the checkpoint information, whose first field is
// nBackfill; all in the machine's byte order.
const (
	walIndexHeaderBytes = 48
	walIndexMxFrame     = 16
	walIndexIsInit      = 12
	walIndexNBackfill   = 2 * walIndexHeaderBytes
)

// walMayRestart reports whether the transaction in progress on the
// writer, which holds the write lock, may start the WAL over. It reads
// the wal-index from the -shm file, which the driver's own VFS maps into
// SQLite's memory where shmFileBacked says so; on any other VFS (one an
// Options.VFS names) or build it answers true, as it does to any doubt.
//
// +checklocks:w.mu
func (w *writer) walMayRestart() bool {
	if !w.wal || !shmFileBacked || w.vfs != "" {
		return true
	}
	if w.id.shm == nil {
		if w.id.shmTried {
			return true
		}
		w.id.shmTried = true
		f, err := os.Open(w.path + "-shm")
		if err != nil {
			return true
		}
		w.id.shm = f
	}
	var b [walIndexNBackfill + 4]byte
	if _, err := w.id.shm.ReadAt(b[:], 0); err != nil {
		return true
	}
	first, second := b[:walIndexHeaderBytes], b[walIndexHeaderBytes:2*walIndexHeaderBytes]
	if first[walIndexIsInit] == 0 || string(first) != string(second) {
		return true
	}
	ne := binary.NativeEndian
	return ne.Uint32(first[walIndexMxFrame:]) <= ne.Uint32(b[walIndexNBackfill:])
}
