package db

import (
	"cmp"
	"context"
	"database/sql"
	"errors"
	"fmt"
	"path/filepath"
	"strings"
	"syscall"
	"time"

	"github.com/ncruces/go-sqlite3"
)

// Sentinel errors. Every error the Store returns wraps at most one of them
// (ErrDiskFull may come with ErrCommitUnknown), so callers branch with
// errors.Is and never on message text.
var (
	// ErrNotFound: the session (or meta key, or message) does not exist.
	ErrNotFound = errors.New("not found")
	// ErrExists: a create met a row that already exists (use EnsureSession
	// to accept an existing session).
	ErrExists = errors.New("already exists")
	// ErrConflict: a compare-and-set lost — the row changed since it was
	// read (a handoff already moved on, a rewind's or delete's view went
	// stale: another writer got there first).
	// Re-read the state and decide again; retrying blindly will not help.
	ErrConflict = errors.New("the row changed since it was read")
	// ErrInvalidInput: the caller's input was refused before anything was
	// written (empty id, unknown role, invalid UTF-8, bad options).
	ErrInvalidInput = errors.New("invalid input")
	// ErrLocked: another process held the write lock for longer than the
	// call's patience. The database itself is healthy; retrying later is safe.
	ErrLocked = errors.New("database is locked")
	// ErrCommitUnknown: COMMIT failed in a way that leaves its outcome
	// unknown. The write may or may not be durable; it was not retried.
	// Appends with an idempotency key can be retried safely.
	ErrCommitUnknown = errors.New("commit outcome unknown")
	// ErrCorrupt: SQLite reported structural damage to the file.
	ErrCorrupt = errors.New("database file is damaged")
	// ErrNotDatabase: the file at the path is not a SQLite database.
	ErrNotDatabase = errors.New("not a sessiondb database")
	// ErrReadOnly: the file or its directory cannot be written by this
	// user, the filesystem is mounted read-only, or the Store was opened
	// with Options.ReadOnly. Reading still works through Options.ReadOnly.
	ErrReadOnly = errors.New("database is read-only")
	// ErrDiskFull: the filesystem holding the database has no room left.
	// Nothing acknowledged is lost; free space and retry. During COMMIT it
	// comes with ErrCommitUnknown (the disk may fill while the commit
	// record is flushed), so retry appends with their idempotency keys.
	ErrDiskFull = errors.New("disk is full")
	// ErrTooManyOpenFiles: the process reached its open-file limit
	// (ulimit -n). The database is fine; close files or raise the limit.
	ErrTooManyOpenFiles = errors.New("too many open files")
	// ErrReplaced: the file was replaced underneath a live Store.
	ErrReplaced = errors.New("database file was replaced")
	// ErrClosed: the Store has been closed.
	ErrClosed = errors.New("store is closed")
	// ErrLeaseHeld: a live turn lease or compression lock held by someone
	// else stands in the way of a destructive change (rewind, delete).
	ErrLeaseHeld = errors.New("held by a live lease")
	// ErrLeaseLost: the caller named a lease or lock it does not hold (it
	// expired and was taken over, or was never acquired).
	ErrLeaseLost = errors.New("lease not held by the caller")
	// ErrSessionClosed: the session has ended in a way that refuses the
	// change; a session compressed into a continuation takes no more
	// messages — write to its compression tip instead.
	ErrSessionClosed = errors.New("session is closed")
	// ErrSchemaTooNew: a newer sessiondb has migrated the file past the
	// schema this one knows. Writing with the older rules could leave the
	// file inconsistent (since version 4, new messages are indexed by the
	// writer, not by a trigger), so Open refuses; upgrade sessiondb.
	ErrSchemaTooNew = errors.New("database schema is newer than this sessiondb")
	// ErrIdempotencyConflict: an append reused an idempotency key the
	// session already holds for a different message. A retry must resend
	// the same message; a new message needs a new key.
	ErrIdempotencyConflict = errors.New("idempotency key already used for a different message")
	// ErrCoolingDown: the session's last compression failed and its
	// cooldown has not passed (CompressionFailed); try again after it.
	ErrCoolingDown = errors.New("compression is cooling down after a failure")
	// ErrIO: the operating system reported an I/O error (EIO) reading or
	// writing the database. After a failed fsync the Store halts its writes
	// with this error until it is reopened: the kernel may have dropped
	// data that no later fsync makes durable.
	ErrIO = errors.New("disk I/O error")
	// ErrForeignSchema: the file holds a trigger on sessiondb's tables that
	// sessiondb did not create (or one of its own, altered). A trigger runs
	// inside every write and can change or delete what was just
	// acknowledged, so Open and the write path refuse to write through it;
	// the error names it. Inspect and drop it (sqlite3 state.db 'DROP
	// TRIGGER name'); Verify reports it and every other foreign object.
	ErrForeignSchema = errors.New("database holds schema objects sessiondb did not create")
	// ErrAliased: the database file is reachable by another path (a hard
	// link, a file bind mount) that is, or may be, in use. SQLite names the
	// WAL and shared memory after the path, so two paths to one file give
	// two logs that two writers checkpoint into it independently, which
	// corrupts it. See AliasedFileError.
	ErrAliased = errors.New("database file is reachable by another path")
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

// opErr wraps err as an *Error after mapping driver errors to sentinels.
// It returns nil for a nil err.
func opErr(op, sessionID string, err error) error {
	if err == nil {
		return nil
	}
	var already *Error
	if errors.As(err, &already) && already.Op == op {
		return err
	}
	return &Error{Op: op, SessionID: sessionID, Err: mapDriverError(err)}
}

// mapDriverError is the one place that turns database/sql and SQLite errors
// into the package's sentinels. The driver error stays in the chain (for
// errors.Is(err, sqlite3.BUSY) and for logs); the sentinel is added to it.
func mapDriverError(err error) error {
	if err == nil || hasSentinel(err) {
		return err
	}
	switch {
	case errors.Is(err, sql.ErrNoRows):
		return fmt.Errorf("%w: %w", ErrNotFound, err)
	case (errors.Is(err, sql.ErrConnDone) || errors.Is(err, sql.ErrTxDone)) && !fromSQLite(err):
		// With a SQLite error in the chain, the connection or transaction
		// ended because of it (a failed migration's rollback reports both):
		// that error is the cause, and the store is not closed.
		return fmt.Errorf("%w: %w", ErrClosed, err)
	case errors.Is(err, context.Canceled), errors.Is(err, context.DeadlineExceeded):
		return err
	case errors.Is(err, sqlite3.FULL), errors.Is(err, syscall.ENOSPC):
		return fmt.Errorf("%w: %w", ErrDiskFull, err)
	case errors.Is(err, syscall.EMFILE), errors.Is(err, syscall.ENFILE):
		return fmt.Errorf("%w: %w", ErrTooManyOpenFiles, err)
	case errors.Is(err, sqlite3.NOTADB):
		return fmt.Errorf("%w: %w", ErrNotDatabase, err)
	case errors.Is(err, sqlite3.CORRUPT):
		return fmt.Errorf("%w: %w", ErrCorrupt, err)
	case errors.Is(err, sqlite3.READONLY), errors.Is(err, sqlite3.PERM), errors.Is(err, sqlite3.CANTOPEN):
		return fmt.Errorf("%w: %w", ErrReadOnly, err)
	case errors.Is(err, sqlite3.CONSTRAINT_UNIQUE), errors.Is(err, sqlite3.CONSTRAINT_PRIMARYKEY):
		return fmt.Errorf("%w: %w", ErrExists, err)
	case errors.Is(err, sqlite3.CONSTRAINT_FOREIGNKEY):
		return fmt.Errorf("%w: %w", ErrNotFound, err)
	case errors.Is(err, sqlite3.CONSTRAINT_CHECK), errors.Is(err, sqlite3.CONSTRAINT_NOTNULL):
		return fmt.Errorf("%w: %w", ErrInvalidInput, err)
	case errors.Is(err, sqlite3.IOERR):
		return fmt.Errorf("%w: %w", ErrIO, err)
	}
	return err
}

// fromSQLite reports whether err carries an error of SQLite itself.
func fromSQLite(err error) bool {
	var code sqlite3.ErrorCode // *sqlite3.Error and ExtendedErrorCode convert too
	return errors.As(err, &code)
}

// sentinels are the package's own errors: an error already carrying one is
// not mapped again.
var sentinels = []error{ErrNotFound, ErrExists, ErrInvalidInput, ErrLocked, ErrCommitUnknown,
	ErrCorrupt, ErrNotDatabase, ErrReadOnly, ErrReplaced, ErrClosed, ErrConflict, ErrLeaseHeld,
	ErrLeaseLost, ErrSessionClosed, ErrSchemaTooNew, ErrIdempotencyConflict, ErrCoolingDown, ErrDiskFull, ErrIO, ErrTooManyOpenFiles, ErrForeignSchema, ErrAliased}

func hasSentinel(err error) bool {
	for _, s := range sentinels {
		if errors.Is(err, s) {
			return true
		}
	}
	return false
}

// isLockError reports whether err is SQLite telling us another connection
// holds a lock (primary result code BUSY or LOCKED). Only these are retried
// by the write path; the classification never looks at message text.
func isLockError(err error) bool {
	return errors.Is(err, sqlite3.BUSY) || errors.Is(err, sqlite3.LOCKED)
}

// invalid builds an ErrInvalidInput with a reason.
func invalid(format string, args ...any) error {
	return fmt.Errorf("%w: %s", ErrInvalidInput, fmt.Sprintf(format, args...))
}

// LockedError reports a write that gave up after waiting its whole patience
// for another process's write lock. It matches ErrLocked.
type LockedError struct {
	Path     string
	Patience time.Duration
	// Holders describes the processes seen holding write-class locks on
	// the database files (Linux /proc/locks); empty where the OS cannot tell.
	Holders []string
	Err     error // the last driver error
}

func (e *LockedError) Error() string {
	msg := fmt.Sprintf("database is locked (another process held the %s write lock for over %v — "+
		"likely a long maintenance operation such as VACUUM, a large WAL checkpoint, or an older process; "+
		"the database itself is healthy)", filepath.Base(e.Path), e.Patience.Round(time.Millisecond))
	if len(e.Holders) > 0 {
		msg += ": " + strings.Join(e.Holders, "; ")
	}
	return msg
}

func (e *LockedError) Is(target error) bool { return target == ErrLocked }
func (e *LockedError) Unwrap() error        { return e.Err }

// AliasedFileError refuses a database file that has a second name: more
// than one hard link, or a process holding it open under a path whose WAL
// is not this path's WAL (a file bind mount such as docker's
// -v host/state.db:/data/state.db). It matches ErrAliased.
type AliasedFileError struct {
	Path  string
	Links uint64 // the file's link count, when above 1
	Other string // the other path, when known
	PID   int    // the process using Other, when known
	// Process is that process's command line, when known.
	Process string
}

func (e *AliasedFileError) Error() string {
	why := "each path gets its own -wal and -shm, and two writers checkpointing separate logs into one file corrupt it"
	if e.PID != 0 {
		other := e.Other
		if other == "" {
			other = "another path"
		}
		return fmt.Sprintf("%s is the same file as %s, open in pid %d (%s): %s; use one path for every process (bind-mount the directory, not the file)",
			e.Path, other, e.PID, cmp.Or(e.Process, "unknown"), why)
	}
	return fmt.Sprintf("%s has %d hard links: %s; remove the other names (find / -samefile %s) or copy the file",
		e.Path, e.Links, why, e.Path)
}

func (e *AliasedFileError) Is(target error) bool { return target == ErrAliased }

// ForeignOwnerError refuses to open for writing a database file that
// belongs to another user: the -wal and -shm this process would create
// are its own, 0600, and would lock the owner out of their own file. It
// matches ErrReadOnly; run as the file's owner (sudo -u) instead.
type ForeignOwnerError struct {
	Path  string
	Owner int // the file's uid
	User  int // this process's effective uid
}

func (e *ForeignOwnerError) Error() string {
	return fmt.Sprintf("%s belongs to uid %d, and this process runs as uid %d: writing it would leave -wal and -shm files its owner cannot open; run as its owner (e.g. sudo -u '#%d' sessiondb ...)",
		e.Path, e.Owner, e.User, e.Owner)
}

func (e *ForeignOwnerError) Is(target error) bool { return target == ErrReadOnly }
