package db

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"io/fs"
	"syscall"
	"testing"
	"time"

	"github.com/ncruces/go-sqlite3"
)

// TestRetryable_MappedDriverErrors: what SQLite and the OS say, as this
// engine maps it, is retryable only where waiting cures it.
func TestRetryable_MappedDriverErrors(t *testing.T) {
	for _, tc := range []struct {
		name         string
		in           error
		retry, keyed bool
	}{
		{"Full", sqlite3.FULL, true, true},
		{"ENOSPC", &fs.PathError{Op: "write", Path: "x", Err: syscall.ENOSPC}, true, true},
		{"EMFILE", &fs.PathError{Op: "open", Path: "x", Err: syscall.EMFILE}, true, true},
		{"NoRows", sql.ErrNoRows, false, false},
		{"NotADatabase", sqlite3.NOTADB, false, false},
		{"Corrupt", sqlite3.CORRUPT, false, false},
		{"ReadOnly", sqlite3.READONLY, false, false},
		{"Unique", sqlite3.CONSTRAINT_UNIQUE, false, false},
		{"ForeignKey", sqlite3.CONSTRAINT_FOREIGNKEY, false, false},
		{"Check", sqlite3.CONSTRAINT_CHECK, false, false},
		{"IOError", sqlite3.IOERR_FSYNC, false, false},
		{"ConnDone", sql.ErrConnDone, false, false},
		{"Canceled", context.Canceled, false, false},
		{"Locked", &LockedError{Path: "state.db", Patience: time.Second, Err: sqlite3.BUSY}, true, true},
		{"CommitUnknown", fmt.Errorf("%w: %w", ErrCommitUnknown, sqlite3.IOERR), false, true},
	} {
		err := opErr("append", "s1", tc.in)
		if got := Retryable(err); got != tc.retry {
			t.Errorf("%s: Retryable(%v) = %v, want %v", tc.name, err, got, tc.retry)
		}
		if got := RetryableKeyed(err); got != tc.keyed {
			t.Errorf("%s: RetryableKeyed(%v) = %v, want %v", tc.name, err, got, tc.keyed)
		}
	}
}

// TestRetryable_ALockHeldElsewhere: an append that gave up on another
// connection's write lock is retryable, wrote nothing, and its retry with
// the same key, once the lock is gone, writes the message once; an append
// to a missing session or on a closed store is not retryable.
func TestRetryable_ALockHeldElsewhere(t *testing.T) {
	ctx := t.Context()
	s := openTestStore(t, Options{WritePatience: 50 * time.Millisecond, TranscriptPatience: 100 * time.Millisecond})
	newTestSession(t, s, "s1")
	msg := NewMessage{Role: RoleUser, Content: "hello", IdempotencyKey: "update:1"}

	released := holdWriteLock(t, s.Path(), 500*time.Millisecond)
	_, err := s.AppendMessage(ctx, "s1", msg)
	if !errors.Is(err, ErrLocked) || !Retryable(err) {
		t.Fatalf("append under another's lock: %v (retryable %v), want a retryable ErrLocked", err, Retryable(err))
	}
	<-released
	var ids []int64
	for range 2 { // the retry, and a retry of the retry
		id, err := s.AppendMessage(ctx, "s1", msg)
		if err != nil {
			t.Fatalf("retry: %v", err)
		}
		ids = append(ids, id)
	}
	msgs, err := s.Messages(ctx, "s1", MessageQuery{})
	if err != nil || len(msgs) != 1 || ids[0] != ids[1] || msgs[0].ID != ids[0] {
		t.Fatalf("after retries: ids %v, messages %+v, %v; want the one message", ids, msgs, err)
	}

	if _, err := s.AppendMessage(ctx, "missing", msg); !errors.Is(err, ErrNotFound) || Retryable(err) {
		t.Errorf("append to a missing session: %v (retryable %v), want ErrNotFound, not retryable", err, Retryable(err))
	}
	s.Close()
	if _, err := s.AppendMessage(ctx, "s1", msg); !errors.Is(err, ErrClosed) || Retryable(err) {
		t.Errorf("append on a closed store: %v (retryable %v), want ErrClosed, not retryable", err, Retryable(err))
	}
}
