package pg

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgconn"
	"github.com/sessiondb/sessiondb/store/driver"
)

// SQLSTATEs the engine acts on (PostgreSQL, Appendix A).
const (
	stateUniqueViolation     = "23505"
	stateForeignKeyViolation = "23503"
	stateNotNullViolation    = "23502"
	stateCheckViolation      = "23514"
	stateNotInRepertoire     = "22021"
	stateReadOnlyTx          = "25006"
	stateSerialization       = "40001"
	stateDeadlock            = "40P01"
	stateLockNotAvailable    = "55P03"
	stateQueryCanceled       = "57014"
	stateInternal            = "XX000"
)

// messageIdentityIndexes make a message one of its session: a violation
// means another message already holds the idempotency key or the platform
// message id — an idempotency conflict, not a row that exists.
var messageIdentityIndexes = map[string]bool{"messages_idempotency": true, "messages_platform_id": true}

// mapError maps an error of pgx or the server to the store's sentinels:
// the one place that reads SQLSTATEs for them. The server's error stays in
// the chain for logs, except for a missing row, whose driver wording is
// not the caller's business. Lock and timeout states are left alone here:
// Write turns them into a *LockedError with the patience it spent.
func mapError(err error) error {
	if err == nil || driver.HasSentinel(err) {
		return err
	}
	if errors.Is(err, pgx.ErrNoRows) {
		return driver.ErrNotFound
	}
	var pgErr *pgconn.PgError
	if !errors.As(err, &pgErr) {
		return err
	}
	switch pgErr.Code {
	case stateUniqueViolation:
		if messageIdentityIndexes[pgErr.ConstraintName] {
			return fmt.Errorf("%w: %w", driver.ErrIdempotencyConflict, err)
		}
		return fmt.Errorf("%w: %w", driver.ErrExists, err)
	case stateForeignKeyViolation:
		return fmt.Errorf("%w: %w", driver.ErrNotFound, err)
	case stateNotNullViolation, stateCheckViolation:
		return fmt.Errorf("%w: %w", driver.ErrInvalidInput, err)
	case stateNotInRepertoire:
		// The store refuses text that is not UTF-8 before it gets here, so
		// this is a NUL byte, which PostgreSQL text cannot hold.
		return fmt.Errorf("%w: PostgreSQL text cannot hold a NUL byte: %w", driver.ErrInvalidInput, err)
	case stateReadOnlyTx:
		return fmt.Errorf("%w: %w", driver.ErrReadOnly, err)
	}
	return err
}

// sqlState is the server's SQLSTATE in err's chain, or "".
func sqlState(err error) string {
	var pgErr *pgconn.PgError
	if errors.As(err, &pgErr) {
		return pgErr.Code
	}
	return ""
}

// serverRolledBack reports a failed COMMIT the server answered with an
// ERROR, which rolls the transaction back (a serialization failure found
// at commit, a deferred constraint), or with ROLLBACK. A FATAL answer ends
// the session (the backend terminated, the server shutting down), and
// says nothing sure about the commit, no more than silence does.
func serverRolledBack(err error) bool {
	var pgErr *pgconn.PgError
	if errors.As(err, &pgErr) {
		return pgErr.Severity == "ERROR"
	}
	return errors.Is(err, pgx.ErrTxCommitRollback)
}

// retryable reports an error the server raised after rolling the
// transaction back for a reason a rerun can cure: a serialization failure,
// a deadlock, or the multixact XX000 ("new multixact has more than one
// updating member") that PostgreSQL 15 raised under concurrent updates of
// one row (issue 33; the engine no longer provokes it). Only the server's
// own report counts: a connection lost mid-call proves nothing about the
// transaction.
func retryable(err error) bool {
	switch sqlState(err) {
	case stateSerialization, stateDeadlock:
		return true
	case stateInternal:
		var pgErr *pgconn.PgError
		return errors.As(err, &pgErr) && strings.Contains(pgErr.Message, "multixact")
	}
	return false
}

// gaveUpWaiting reports an error that means the call's patience ran out
// while another transaction held what it needed: the server's lock or
// statement timeout (set from the patience), or the patience's own
// deadline (waiting for a pool connection, or the query canceled by it).
func gaveUpWaiting(ctx, patienceCtx context.Context, err error) bool {
	switch sqlState(err) {
	case stateLockNotAvailable, stateQueryCanceled:
		return ctx.Err() == nil
	}
	return ctx.Err() == nil && patienceCtx.Err() != nil && errors.Is(err, context.DeadlineExceeded)
}

// LockedError reports a write that gave up after waiting its whole patience
// for locks other transactions held (rows, a table, the pool's
// connections) or for a server that did not answer. It matches ErrLocked.
// Nothing of the write was committed: resending it is safe (with its
// idempotency key, an append is stored once however often it is sent).
type LockedError struct {
	Schema   string
	Patience time.Duration
	Err      error // the last server or pool error
}

func (e *LockedError) Error() string {
	return fmt.Sprintf("database is locked (other transactions held what this write needed in schema %s for over %v — "+
		"likely a long transaction or a busy pool; the database itself is healthy)", e.Schema, e.Patience.Round(time.Millisecond))
}

func (e *LockedError) Is(target error) bool { return target == driver.ErrLocked }
func (e *LockedError) Unwrap() error        { return e.Err }
