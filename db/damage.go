package db

// What SQLite's errors say about damage — to the file itself or only to a
// full-text index — and the torn file moved aside before SQLite opens it.

import (
	"errors"
	"fmt"
	"log/slog"
	"os"

	"github.com/ncruces/go-sqlite3"

	"github.com/sessiondb/sessiondb/internal/fsx"
)

// isStructuralDamage reports damage to the database itself.
func isStructuralDamage(err error) bool {
	return (errors.Is(err, sqlite3.CORRUPT) && !isFTSDamage(err)) || errors.Is(err, sqlite3.NOTADB)
}

// isFTSDamage reports damage confined to a full-text index.
func isFTSDamage(err error) bool { return errors.Is(err, sqlite3.CORRUPT_VTAB) }

// isIndexFailure reports an error of an index slice that says the full-text
// index itself is damaged. Its statements only read messages and the queue
// and only write the indexes, so anything but a lock, an I/O or resource
// error, an interrupt or damage to the file proper — a constraint clash in
// the index's own tables when its structure record was lost, say — is the
// index's: the writes go through with indexing off (the data is fine) and
// the next open rebuilds it, rather than every append failing.
func isIndexFailure(err error) bool {
	var code sqlite3.ErrorCode // SQLite's own error, whichever form the driver gave it
	if !errors.As(err, &code) {
		return false
	}
	for _, transient := range []error{sqlite3.BUSY, sqlite3.LOCKED, sqlite3.IOERR, sqlite3.FULL,
		sqlite3.NOMEM, sqlite3.INTERRUPT, sqlite3.CANTOPEN, sqlite3.READONLY} {
		if errors.Is(err, transient) {
			return false
		}
	}
	return isFTSDamage(err) || !isStructuralDamage(err)
}

// quarantineTorn moves a torn database aside before SQLite opens it: a
// file whose header is all zero bytes, or a zero-length file whose WAL
// holds data. A plain zero-length file is a database never initialised
// (prepareFile makes one) and is initialised in place. The caller holds
// the migration lock, so no other opener is initialising the file.
func quarantineTorn(path string, log *slog.Logger) error {
	state, why, err := readHeader(path)
	if err != nil {
		return err
	}
	kind := ""
	switch {
	case state == headerZeroed:
		kind = "zeroed"
	case state == headerEmpty:
		if fi, err := os.Stat(path + "-wal"); err == nil && fi.Size() > 0 {
			kind, why = "emptied", "empty main file beside a non-empty WAL"
		}
	}
	if kind == "" {
		return nil
	}
	owner, known := fsx.FileOwner(path)
	dst, err := moveAside(path, kind)
	if err != nil {
		return err
	}
	log.Error("sessiondb: the database file was damaged ("+why+") and has been moved aside; a fresh database is created in its place",
		"path", path, "moved_to", dst)
	f, err := fsx.CreateExclusive(path)
	if err != nil {
		return fmt.Errorf("create a fresh %s: %w", path, err)
	}
	if known { // the fresh file keeps the mode the torn one had
		fsx.GiveTo(f, owner)
	}
	return f.Close()
}
