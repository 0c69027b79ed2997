package driver

import (
	"errors"
	"fmt"
)

// The sentinel errors of every engine: what the store's callers branch on
// with errors.Is. An engine maps its own errors to these, in one place,
// and keeps its driver's error in the chain for logs. They are documented
// for callers where the store re-exports them (package store).
var (
	ErrNotFound            = errors.New("not found")
	ErrExists              = errors.New("already exists")
	ErrConflict            = errors.New("the row changed since it was read")
	ErrInvalidInput        = errors.New("invalid input")
	ErrLocked              = errors.New("database is locked")
	ErrCommitUnknown       = errors.New("commit outcome unknown")
	ErrCorrupt             = errors.New("database file is damaged")
	ErrNotDatabase         = errors.New("not a sessiondb database")
	ErrNotAStore           = errors.New("not a sessiondb store")
	ErrReadOnly            = errors.New("database is read-only")
	ErrDiskFull            = errors.New("disk is full")
	ErrTooManyOpenFiles    = errors.New("too many open files")
	ErrReplaced            = errors.New("database file was replaced")
	ErrClosed              = errors.New("store is closed")
	ErrLeaseHeld           = errors.New("held by a live lease")
	ErrLeaseLost           = errors.New("lease not held by the caller")
	ErrSessionClosed       = errors.New("session is closed")
	ErrSchemaTooNew        = errors.New("database schema is newer than this sessiondb")
	ErrSchemaBehind        = errors.New("database schema is behind this sessiondb and was not migrated")
	ErrIdempotencyConflict = errors.New("idempotency key or platform message id already used for a different message")
	ErrCoolingDown         = errors.New("compression is cooling down after a failure")
	ErrIO                  = errors.New("disk I/O error")
	ErrForeignSchema       = errors.New("database holds schema objects sessiondb did not create")
	ErrAliased             = errors.New("database file is reachable by another path")
	ErrNotSupported        = errors.New("not supported by this engine")
	ErrTooLarge            = errors.New("message too large for this engine")
	ErrInternal            = errors.New("internal error in the engine's driver")
)

// Sentinels lists every sentinel above.
var Sentinels = []error{ErrNotFound, ErrExists, ErrConflict, ErrInvalidInput, ErrLocked,
	ErrCommitUnknown, ErrCorrupt, ErrNotDatabase, ErrNotAStore, ErrReadOnly, ErrDiskFull, ErrTooManyOpenFiles,
	ErrReplaced, ErrClosed, ErrLeaseHeld, ErrLeaseLost, ErrSessionClosed, ErrSchemaTooNew, ErrSchemaBehind,
	ErrIdempotencyConflict, ErrCoolingDown, ErrIO, ErrForeignSchema, ErrAliased, ErrNotSupported, ErrTooLarge, ErrInternal}

// HasSentinel reports whether err already carries one of the sentinels,
// so an engine does not map it again.
func HasSentinel(err error) bool {
	for _, s := range Sentinels {
		if errors.Is(err, s) {
			return true
		}
	}
	return false
}

// Invalid builds an ErrInvalidInput with a reason.
func Invalid(format string, args ...any) error {
	return fmt.Errorf("%w: %s", ErrInvalidInput, fmt.Sprintf(format, args...))
}
