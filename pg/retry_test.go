package pg

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net"
	"syscall"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgconn"
	"github.com/sessiondb/sessiondb/store"
)

// TestRetryable_MappedServerErrors: what the server and pgx say, as this
// engine maps it, is retryable only where waiting cures it.
func TestRetryable_MappedServerErrors(t *testing.T) {
	pgErr := func(code, constraint string) error {
		return &pgconn.PgError{Severity: "ERROR", Code: code, ConstraintName: constraint}
	}
	for _, tc := range []struct {
		name         string
		in           error
		retry, keyed bool
	}{
		{"NoRows", pgx.ErrNoRows, false, false},
		{"Unique", pgErr(stateUniqueViolation, "sessions_pkey"), false, false},
		{"IdempotencyKey", pgErr(stateUniqueViolation, "messages_idempotency"), false, false},
		{"ForeignKey", pgErr(stateForeignKeyViolation, ""), false, false},
		{"Check", pgErr(stateCheckViolation, ""), false, false},
		{"NUL", pgErr(stateNotInRepertoire, ""), false, false},
		{"ReadOnly", pgErr(stateReadOnlyTx, ""), false, false},
		{"Canceled", context.Canceled, false, false},
		{"Locked", &LockedError{Schema: "team_a", Patience: time.Second, Err: pgErr(stateLockNotAvailable, "")}, true, true},
		{"ServerTimeout", &ServerTimeoutError{Setting: "statement_timeout", Value: "1ms", Err: pgErr(stateQueryCanceled, "")}, true, true},
		{"CommitUnknown", fmt.Errorf("%w: %w", store.ErrCommitUnknown, pgErr("57P01", "")), false, true},
	} {
		err := &store.Error{Op: "append", SessionID: "s1", Err: mapError(tc.in)}
		if got := store.Retryable(err); got != tc.retry {
			t.Errorf("%s: Retryable(%v) = %v, want %v", tc.name, err, got, tc.retry)
		}
		if got := store.RetryableKeyed(err); got != tc.keyed {
			t.Errorf("%s: RetryableKeyed(%v) = %v, want %v", tc.name, err, got, tc.keyed)
		}
	}
}

// TestUnreachable_ServerGoneNotRefused: which errors Open (and the
// message of a *LockedError) read as a server gone or not answering —
// worth another try on a new connection — and which as a refusal.
func TestUnreachable_ServerGoneNotRefused(t *testing.T) {
	fatal := func(code string) error { return &pgconn.PgError{Severity: "FATAL", Code: code} }
	for _, tc := range []struct {
		name string
		in   error
		want bool
	}{
		{"AdminShutdown", fmt.Errorf("read the catalog: %w", fatal(stateAdminShutdown)), true},
		{"CrashShutdown", fatal(stateCrashShutdown), true},
		{"StartingUp", fatal(stateCannotConnectNow), true},
		{"ConnectionFailure", fatal("08006"), true},
		{"Refused", &net.OpError{Op: "dial", Net: "unix", Err: syscall.ECONNREFUSED}, true},
		{"CutMidReply", fmt.Errorf("read: %w", io.ErrUnexpectedEOF), true},
		{"ProtocolViolation", &pgconn.PgError{Severity: "ERROR", Code: stateProtocolViolation, Message: "invalid message format"}, false},
		{"BadPassword", fatal("28P01"), false},
		{"NoSuchDatabase", fatal("3D000"), false},
		{"NoSuchHost", &net.OpError{Op: "dial", Err: &net.DNSError{Err: "no such host", Name: "pg.example", IsNotFound: true}}, false},
		{"LockTimeout", &pgconn.PgError{Severity: "ERROR", Code: stateLockNotAvailable}, false},
		{"Deadline", context.DeadlineExceeded, false},
		{"Plain", errors.New("something else"), false},
	} {
		if got := unreachable(tc.in); got != tc.want {
			t.Errorf("%s: unreachable(%v) = %v, want %v", tc.name, tc.in, got, tc.want)
		}
	}
}
