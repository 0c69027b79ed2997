package store

import (
	"errors"
	"fmt"

	"github.com/sessiondb/sessiondb/store/driver"
)

// Sentinel errors. Every error the Store returns wraps at most one of them
// (ErrDiskFull may come with ErrCommitUnknown), so callers branch with
// errors.Is and never on message text.
var (
	// ErrNotFound: the session (or meta key, or message) does not exist.
	ErrNotFound = driver.ErrNotFound
	// ErrExists: a create met a row that already exists (use EnsureSession
	// to accept an existing session).
	ErrExists = driver.ErrExists
	// ErrConflict: a compare-and-set lost — the row changed since it was
	// read (a handoff already moved on, a rewind's or delete's view went
	// stale: another writer got there first).
	// Re-read the state and decide again; retrying blindly will not help.
	ErrConflict = driver.ErrConflict
	// ErrInvalidInput: the caller's input was refused before anything was
	// written (empty id, unknown role, invalid UTF-8, bad options).
	ErrInvalidInput = driver.ErrInvalidInput
	// ErrLocked: another process held the write lock for longer than the
	// call's patience. The database itself is healthy; retrying later is safe.
	ErrLocked = driver.ErrLocked
	// ErrCommitUnknown: COMMIT failed in a way that leaves its outcome
	// unknown. The write may or may not be durable; it was not retried.
	// Appends with an idempotency key can be retried safely.
	ErrCommitUnknown = driver.ErrCommitUnknown
	// ErrCorrupt: the stored data is damaged — SQLite reported structural
	// damage to the file, or a stored value is not what sessiondb wrote
	// there (JSON that does not parse, a value of the wrong type: another
	// program wrote into the store). The error says what; on SQLite
	// `sessiondb verify` names it and `sessiondb repair` mends it.
	ErrCorrupt = driver.ErrCorrupt
	// ErrNotDatabase: the file at the path is not a SQLite database.
	ErrNotDatabase = driver.ErrNotDatabase
	// ErrNotAStore: the path holds something that is not a sessiondb store
	// and that sessiondb will not turn into one — another program's SQLite
	// database, a text file, a directory, a device. Nothing was created,
	// changed or left beside it. It is not damage: check the path. An
	// error that matches it matches ErrNotDatabase too.
	ErrNotAStore = driver.ErrNotAStore
	// ErrReadOnly: the file or its directory cannot be written by this
	// user, the filesystem is mounted read-only, or the Store was opened
	// with Options.ReadOnly. Reading still works through Options.ReadOnly.
	ErrReadOnly = driver.ErrReadOnly
	// ErrDiskFull: the filesystem holding the database has no room left.
	// Nothing acknowledged is lost; free space and retry. During COMMIT it
	// comes with ErrCommitUnknown (the disk may fill while the commit
	// record is flushed), so retry appends with their idempotency keys.
	ErrDiskFull = driver.ErrDiskFull
	// ErrTooManyOpenFiles: the process reached its open-file limit
	// (ulimit -n). The database is fine; close files or raise the limit.
	ErrTooManyOpenFiles = driver.ErrTooManyOpenFiles
	// ErrReplaced: the file was replaced underneath a live Store.
	ErrReplaced = driver.ErrReplaced
	// ErrClosed: the Store has been closed.
	ErrClosed = driver.ErrClosed
	// ErrLeaseHeld: a live turn lease or compression lock held by someone
	// else stands in the way of a destructive change (rewind, delete).
	ErrLeaseHeld = driver.ErrLeaseHeld
	// ErrLeaseLost: the caller named a lease or lock it does not hold (it
	// expired and was taken over, or was never acquired).
	ErrLeaseLost = driver.ErrLeaseLost
	// ErrSessionClosed: the session has ended in a way that refuses the
	// change; a session compressed into a continuation takes no more
	// messages — write to its compression tip instead.
	ErrSessionClosed = driver.ErrSessionClosed
	// ErrSchemaTooNew: a newer sessiondb has migrated the file past the
	// schema this one knows. Writing with the older rules could leave the
	// file inconsistent (since version 4, new messages are indexed by the
	// writer, not by a trigger), so Open refuses; upgrade sessiondb.
	ErrSchemaTooNew = driver.ErrSchemaTooNew
	// ErrSchemaBehind: the store's schema is older than this sessiondb's
	// and the store was opened with the engine's NoMigrate option (or on a
	// server that cannot be written, a hot standby), so it was not
	// migrated. Run the deploy step (sessiondb migrate, or the engine's
	// Migrate) and open again. See SchemaBehindError.
	ErrSchemaBehind = driver.ErrSchemaBehind
	// ErrIdempotencyConflict: an append reused an idempotency key, or a
	// platform message id, the session already holds for a different
	// message. A retry or re-delivery must resend the same message; a new
	// message needs a new key (and its own platform id).
	ErrIdempotencyConflict = driver.ErrIdempotencyConflict
	// ErrCoolingDown: the session's last compression failed and its
	// cooldown has not passed (CompressionFailed); try again after it.
	ErrCoolingDown = driver.ErrCoolingDown
	// ErrIO: the operating system reported an I/O error (EIO) reading or
	// writing the database. After a failed fsync the Store halts its writes
	// with this error until it is reopened: the kernel may have dropped
	// data that no later fsync makes durable.
	ErrIO = driver.ErrIO
	// ErrForeignSchema: the file holds a trigger on sessiondb's tables that
	// sessiondb did not create (or one of its own, altered). A trigger runs
	// inside every write and can change or delete what was just
	// acknowledged, so Open and the write path refuse to write through it;
	// the error names it. Inspect and drop it (sqlite3 state.db 'DROP
	// TRIGGER name'); Verify reports it and every other foreign object.
	// On PostgreSQL it also answers a write that a constraint, unique index
	// or NOT NULL a DBA added refused, and a statement that found a table,
	// column or function of the store dropped, renamed or moved under it:
	// nothing of the call was written, and no resend gets past it.
	ErrForeignSchema = driver.ErrForeignSchema
	// ErrAliased: the database file is reachable by another path (a hard
	// link, a file bind mount) that is, or may be, in use. SQLite names the
	// WAL and shared memory after the path, so two paths to one file give
	// two logs that two writers checkpoint into it independently, which
	// corrupts it. See AliasedFileError.
	ErrAliased = driver.ErrAliased
	// ErrNotSupported: the engine does not do this (a file operation on a
	// server engine).
	ErrNotSupported = driver.ErrNotSupported
	// ErrTooLarge: an append was refused before anything was written
	// because one message is larger than the engine keeps (MaxMessageBytes:
	// its text fields together). Nothing was written; split the content or
	// store a large attachment by reference.
	ErrTooLarge = driver.ErrTooLarge
	// ErrInternal: the engine's driver failed in a way that leaves its
	// connection in an unknown state (a panic inside it, e.g. the SQLite
	// driver out of memory). Writes are halted with it until the store is
	// reopened; nothing acknowledged is lost.
	ErrInternal = driver.ErrInternal
)

// Error is the one typed error of the package: what was being done (Op),
// on which session when there is one, and why (Err, usually wrapping a
// sentinel above).
type Error struct {
	Op        string
	SessionID string
	Err       error
}

func (e *Error) Error() string {
	if e.SessionID != "" {
		return fmt.Sprintf("%s %q: %v", e.Op, e.SessionID, e.Err)
	}
	return e.Op + ": " + e.Err.Error()
}

func (e *Error) Unwrap() error { return e.Err }

// opErr wraps err as an *Error; it returns nil for a nil err. The engine
// has already mapped its own errors to the sentinels.
func opErr(op, sessionID string, err error) error {
	if err == nil {
		return nil
	}
	var already *Error
	if errors.As(err, &already) && already.Op == op {
		return err
	}
	return &Error{Op: op, SessionID: sessionID, Err: err}
}

// invalid builds an ErrInvalidInput with a reason.
func invalid(format string, args ...any) error { return driver.Invalid(format, args...) }

// badStoredJSON is the error for a stored JSON cell that does not parse:
// sessiondb checks JSON before it stores it, so another program wrote it.
// Reads that meet it fail with it, and read-modify-writes leave the cell
// as it was.
func badStoredJSON(what string, err error) error {
	return fmt.Errorf("%w: stored %s are not valid JSON (another program wrote them?): %v", ErrCorrupt, what, err)
}
