package db

// What SQLite's errors say about damage — to the file itself or only to a
// full-text index. (A torn file is moved aside before SQLite opens it by
// internal/forensics.QuarantineTorn.)

import (
	"errors"

	"github.com/ncruces/go-sqlite3"
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
