package pg

import (
	"context"
	"errors"
	"fmt"
	"io"
	"math/rand/v2"
	"net"
	"strings"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgconn"
	"github.com/jackc/pgx/v5/pgxpool"
	"github.com/sessiondb/sessiondb/store/driver"
)

// SQLSTATEs the engine acts on (PostgreSQL, Appendix A).
const (
	stateUniqueViolation     = "23505"
	stateForeignKeyViolation = "23503"
	stateNotNullViolation    = "23502"
	stateCheckViolation      = "23514"
	stateNotInRepertoire     = "22021"
	stateProtocolViolation   = "08P01"
	stateUndefinedTable      = "42P01"
	stateUndefinedColumn     = "42703"
	stateUndefinedFunction   = "42883"
	stateExclusionViolation  = "23P01"
	stateReadOnlyTx          = "25006"
	stateSerialization       = "40001"
	stateDeadlock            = "40P01"
	stateLockNotAvailable    = "55P03"
	stateQueryCanceled       = "57014"
	stateAdminShutdown       = "57P01"
	stateCrashShutdown       = "57P02"
	stateCannotConnectNow    = "57P03"
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
// Write turns them into a *LockedError with the patience it spent, and a
// read or Open into a *ServerTimeoutError naming the server setting that
// fired (explainTimeout).
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
	if foreign := foreignRefusal(pgErr); foreign != "" {
		return fmt.Errorf("%w: %s (pg.Verify lists what the schema holds; no resend gets past it): %w",
			driver.ErrForeignSchema, foreign, err)
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
	case stateProtocolViolation:
		if pgErr.Message == "invalid message format" {
			// By the simple protocol (pool_mode=transaction, pooler.go)
			// a parameter is part of the query text, which a NUL byte
			// ends: the same refusal as 22021's.
			return fmt.Errorf("%w: PostgreSQL text cannot hold a NUL byte: %w", driver.ErrInvalidInput, err)
		}
	}
	return err
}

// foreignRefusal names what refused a statement when it is not
// sessiondb's schema as it made it: a constraint, unique index or NOT NULL
// a DBA added to its tables, or a table, column or function of the store
// dropped, renamed or moved under an open store. "" otherwise. Without it
// a DBA's CHECK would reach the caller as ErrInvalidInput and a unique
// index of theirs as ErrExists — answers that tell a gateway to drop the
// message, or that it was already stored.
func foreignRefusal(e *pgconn.PgError) string {
	switch e.Code {
	case stateUniqueViolation, stateForeignKeyViolation, stateCheckViolation, stateExclusionViolation:
		if !ownConstraints()[e.TableName+"."+e.ConstraintName] {
			return fmt.Sprintf("constraint %q on %s, which sessiondb did not create, refused the statement", e.ConstraintName, e.TableName)
		}
	case stateNotNullViolation:
		if !ownConstraints()[e.TableName+"."+e.ColumnName] {
			return fmt.Sprintf("NOT NULL on %s.%s, which sessiondb did not set, refused the statement", e.TableName, e.ColumnName)
		}
	case stateUndefinedTable, stateUndefinedColumn, stateUndefinedFunction:
		return "the store's schema changed under it: a table, column or function of its own was dropped, renamed or moved since it opened"
	}
	return ""
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

// unreachable reports an error that says the server went away or could
// not be reached, not that it refused what was asked: it is shutting down,
// restarting or starting up (57P01, 57P02, 57P03), the connection broke
// (08000, 08001, 08003, 08006, a network error, EOF), or nothing answered
// at the address.
// The same call on a new connection may succeed once the server is back.
// A refusal is not: at connect (a bad password, 28P01; no such database,
// 3D000), of a message (08P01: a NUL byte behind a transaction-pooling
// proxy, ErrInvalidInput), nor is a host name that does not resolve.
func unreachable(err error) bool {
	var pgErr *pgconn.PgError
	if errors.As(err, &pgErr) {
		switch pgErr.Code {
		case stateAdminShutdown, stateCrashShutdown, stateCannotConnectNow,
			"08000", "08001", "08003", "08006": // connection exceptions, not 08P01: a refused message
			return true
		}
		return false
	}
	var dnsErr *net.DNSError
	if errors.As(err, &dnsErr) && dnsErr.IsNotFound {
		return false
	}
	var connectErr *pgconn.ConnectError
	var netErr net.Error
	return errors.As(err, &connectErr) || errors.As(err, &netErr) && !errors.Is(err, context.DeadlineExceeded) ||
		errors.Is(err, io.EOF) || errors.Is(err, io.ErrUnexpectedEOF)
}

// reconnectBackoff is how long a rerun waits after attempt found the
// server unreachable: a restart takes seconds, so the waits grow to half
// a second instead of hammering it.
func reconnectBackoff(attempt int) time.Duration {
	ceiling := 20 * time.Millisecond << min(attempt, 5) // up to 640 ms
	return ceiling/2 + rand.N(ceiling/2+1)
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

// LockedError reports a write that gave up after waiting its whole
// patience for locks other transactions held (rows, a table, the pool's
// connections) or for a server that did not answer — its message says
// which; or an Open or a read that gave up waiting for either. It matches
// ErrLocked. Nothing of the write was committed: resending it is safe
// (with its idempotency key, an append is stored once however often it is
// sent).
type LockedError struct {
	Schema   string
	Patience time.Duration
	Err      error // the last server or pool error
}

func (e *LockedError) Error() string {
	if unreachable(e.Err) {
		return fmt.Sprintf("database is locked: the server for schema %s could not be reached for over %v "+
			"(restarting, shutting down or down; nothing was written): %v", e.Schema, e.Patience.Round(time.Millisecond), e.Err)
	}
	return fmt.Sprintf("database is locked (other transactions held what this call needed in schema %s for over %v — "+
		"likely a long transaction or a busy pool; the database itself is healthy)", e.Schema, e.Patience.Round(time.Millisecond))
}

func (e *LockedError) Is(target error) bool { return target == driver.ErrLocked }
func (e *LockedError) Unwrap() error        { return e.Err }

// ServerTimeoutError reports a statement the server canceled by a
// statement_timeout or lock_timeout of its own — set for the role (ALTER
// ROLE … SET), the database, the server's configuration or the connection
// string — not by the call's patience, which a write sets for itself with
// SET LOCAL. It matches ErrLocked: the database is healthy, and the call
// may succeed later or with the setting raised.
type ServerTimeoutError struct {
	Setting string // statement_timeout or lock_timeout
	Value   string // as the server states it, "1ms"; "" when it could not be read
	Origin  string // where it was set: "role alice", "database app", …; "" when not known
	Err     error  // the server's error
}

func (e *ServerTimeoutError) Error() string {
	what := e.Setting
	if e.Value != "" {
		what += " = " + e.Value
	}
	if e.Origin != "" {
		what += ", set for " + e.Origin + ","
	}
	fix := "raise it"
	if role, ok := strings.CutPrefix(e.Origin, "role "); ok {
		role, _, _ = strings.Cut(role, " ")
		fix = fmt.Sprintf("raise it, or RESET it for the role (ALTER ROLE %s RESET %s)", role, e.Setting)
	}
	return fmt.Sprintf("database is locked: the server's %s canceled the statement — this server setting fired, "+
		"not the call's patience; %s", what, fix)
}

func (e *ServerTimeoutError) Is(target error) bool { return target == driver.ErrLocked }
func (e *ServerTimeoutError) Unwrap() error        { return e.Err }

// timeoutSetting names the server setting that canceled a statement, or
// "" for any other error (a cancel by pg_cancel_backend is 57014 too).
func timeoutSetting(err error) string {
	var pgErr *pgconn.PgError
	if !errors.As(err, &pgErr) {
		return ""
	}
	switch {
	case pgErr.Code == stateQueryCanceled && strings.Contains(pgErr.Message, "statement timeout"):
		return "statement_timeout"
	case pgErr.Code == stateLockNotAvailable && strings.Contains(pgErr.Message, "lock timeout"):
		return "lock_timeout"
	}
	return ""
}

// settingQuery reads a setting's session value and where it was set for
// this role and database ($1 the setting). It runs after SET LOCAL lifted
// both timeouts (reset_val is the value before), so a 1 ms limit cannot
// cancel it too. Hand-written: a catalog read.
const settingQuery = `
SELECT s.reset_val || COALESCE(s.unit, ''),
       COALESCE((SELECT CASE WHEN r.setrole = 0 THEN 'database ' || current_database()
                             WHEN r.setdatabase = 0 THEN 'role ' || current_user
                             ELSE 'role ' || current_user || ' in database ' || current_database() END
                 FROM pg_db_role_setting r
                 WHERE r.setrole IN (0, (SELECT oid FROM pg_roles WHERE rolname = current_user))
                   AND r.setdatabase IN (0, (SELECT oid FROM pg_database WHERE datname = current_database()))
                   AND NOT (r.setrole = 0 AND r.setdatabase = 0)
                   AND EXISTS (SELECT 1 FROM unnest(r.setconfig) c WHERE c LIKE $1 || '=%')
                 ORDER BY r.setrole DESC, r.setdatabase DESC LIMIT 1), '')
FROM pg_settings s WHERE s.name = $1`

// explainTimeout turns a statement the server's own timeout canceled into
// a *ServerTimeoutError naming the setting, its value and where it was
// set; any other error is returned as it is. Only a call that set no
// timeout of its own (a read, Open) can meet one.
func explainTimeout(ctx context.Context, pool *pgxpool.Pool, err error) error {
	setting := timeoutSetting(err)
	if setting == "" || ctx.Err() != nil {
		return err
	}
	out := &ServerTimeoutError{Setting: setting, Err: err}
	lctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), rollbackBound)
	defer cancel()
	//sessiondb:allow txonly -- a read-only transaction reading the server's settings
	tx, txErr := pool.BeginTx(lctx, pgx.TxOptions{BeginQuery: "BEGIN READ ONLY; SET LOCAL statement_timeout = 0; SET LOCAL lock_timeout = 0"})
	if txErr != nil {
		return out
	}
	defer rollback(lctx, tx)
	var origin string
	if tx.QueryRow(lctx, settingQuery, setting).Scan(&out.Value, &origin) == nil {
		out.Origin = origin
		if origin == "" {
			out.Origin = "the server (its configuration or the connection string's options)"
		}
	}
	return out
}
