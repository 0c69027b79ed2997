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
	"github.com/sessiondb/sessiondb/store"
	"github.com/sessiondb/sessiondb/store/driver"
)

// opErr wraps err as an *Error after mapping driver errors to sentinels.
// It returns nil for a nil err.
func opErr(op, sessionID string, err error) error {
	if err == nil {
		return nil
	}
	var already *store.Error
	if errors.As(err, &already) && already.Op == op {
		return err
	}
	return &store.Error{Op: op, SessionID: sessionID, Err: mapDriverError(err)}
}

// mapDriverError is the one place that turns database/sql and SQLite errors
// into the package's sentinels. The driver error stays in the chain (for
// errors.Is(err, sqlite3.BUSY) and for logs); the sentinel is added to it.
func mapDriverError(err error) error {
	if err == nil || driver.HasSentinel(err) {
		return err
	}
	switch {
	case errors.Is(err, sql.ErrNoRows):
		return ErrNotFound // the driver's wording is not the caller's business
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
	case errors.Is(err, sqlite3.CONSTRAINT_UNIQUE) && namesMessageIdentity(err):
		return fmt.Errorf("%w: %w", ErrIdempotencyConflict, err)
	case errors.Is(err, sqlite3.CONSTRAINT_UNIQUE), errors.Is(err, sqlite3.CONSTRAINT_PRIMARYKEY):
		return fmt.Errorf("%w: %w", ErrExists, err)
	case errors.Is(err, sqlite3.CONSTRAINT_FOREIGNKEY):
		return fmt.Errorf("%w: %w", ErrNotFound, err)
	case errors.Is(err, sqlite3.CONSTRAINT_CHECK), errors.Is(err, sqlite3.CONSTRAINT_NOTNULL):
		return fmt.Errorf("%w: %w", ErrInvalidInput, err)
	case errors.Is(err, sqlite3.IOERR):
		return fmt.Errorf("%w: %w", ErrIO, err)
	case isMistypedCell(err):
		return fmt.Errorf("%w: a stored value of the wrong type (another program wrote into the store; "+
			"`sessiondb verify` names it, `sessiondb repair` rewrites it): %w", ErrCorrupt, err)
	}
	return err
}

// isMistypedCell reports whether err is database/sql failing to scan a
// stored value into the type sessiondb wrote there (celltypes.go).
// database/sql keeps no type for it, and formats the conversion's cause
// with %v, so its stable wording is read: this is the one place.
func isMistypedCell(err error) bool {
	s := err.Error()
	i := strings.Index(s, "sql: Scan error on column index ")
	return i >= 0 && strings.Contains(s[i:], "converting ")
}

// namesMessageIdentity reports whether a UNIQUE violation is on what
// makes a message one of its session (messages_idempotency,
// messages_platform_id): another message already holds the key or the
// platform id, which is an idempotency conflict, not a row that exists.
// SQLite names the violated index only by its columns, in the error's
// text ("UNIQUE constraint failed: messages.session_id,
// messages.platform_message_id"), so the text is read here — for this
// classification only, and only once the code says UNIQUE.
func namesMessageIdentity(err error) bool {
	var e *sqlite3.Error
	if !errors.As(err, &e) {
		return false
	}
	msg := e.Error()
	return strings.Contains(msg, "messages.idempotency_key") || strings.Contains(msg, "messages.platform_message_id")
}

// fromSQLite reports whether err carries an error of SQLite itself.
func fromSQLite(err error) bool {
	var code sqlite3.ErrorCode // *sqlite3.Error and ExtendedErrorCode convert too
	return errors.As(err, &code)
}

// isLockError reports whether err is SQLite telling us another connection
// holds a lock (primary result code BUSY or LOCKED). Only these are retried
// by the write path; the classification never looks at message text.
func isLockError(err error) bool {
	return errors.Is(err, sqlite3.BUSY) || errors.Is(err, sqlite3.LOCKED)
}

// invalid builds an ErrInvalidInput with a reason.
func invalid(format string, args ...any) error { return driver.Invalid(format, args...) }

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
