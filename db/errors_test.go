package db

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"io/fs"
	"syscall"
	"testing"

	"github.com/ncruces/go-sqlite3"
)

func TestMapDriverError(t *testing.T) {
	tests := []struct {
		name string
		in   error
		want error // nil: passed through unchanged
		// replaced: the sentinel stands alone, without the driver's
		// error (its wording is not the caller's business)
		replaced bool
	}{
		{"NoRows", sql.ErrNoRows, ErrNotFound, true},
		{"NotADatabase", sqlite3.NOTADB, ErrNotDatabase, false},
		{"Corrupt", sqlite3.CORRUPT, ErrCorrupt, false},
		{"CorruptVTab", sqlite3.CORRUPT_VTAB, ErrCorrupt, false},
		{"ReadOnly", sqlite3.READONLY, ErrReadOnly, false},
		{"CantOpen", sqlite3.CANTOPEN, ErrReadOnly, false},
		{"Unique", sqlite3.CONSTRAINT_UNIQUE, ErrExists, false},
		{"PrimaryKey", sqlite3.CONSTRAINT_PRIMARYKEY, ErrExists, false},
		{"ForeignKey", sqlite3.CONSTRAINT_FOREIGNKEY, ErrNotFound, false},
		{"Check", sqlite3.CONSTRAINT_CHECK, ErrInvalidInput, false},
		{"ConnDone", sql.ErrConnDone, ErrClosed, false},
		{"WrappedNoRows", fmt.Errorf("scan: %w", sql.ErrNoRows), ErrNotFound, true},
		{"Full", sqlite3.FULL, ErrDiskFull, false},
		{"WrappedENOSPC", fmt.Errorf("write: %w", &fs.PathError{Op: "write", Path: "x", Err: syscall.ENOSPC}), ErrDiskFull, false},
		{"IOError", sqlite3.IOERR, ErrIO, false},
		{"FsyncFailed", sqlite3.IOERR_FSYNC, ErrIO, false},
		{"SentinelKept", ErrLocked, ErrLocked, false},
		{"BusyPassesThrough", sqlite3.BUSY, nil, false},
		{"CanceledPassesThrough", context.Canceled, nil, false},
		{"OtherPassesThrough", errors.New("x"), nil, false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got := mapDriverError(tt.in)
			if tt.replaced {
				if got != tt.want {
					t.Errorf("mapDriverError(%v) = %v, want %v alone", tt.in, got, tt.want)
				}
				return
			}
			if !errors.Is(got, tt.in) {
				t.Errorf("mapDriverError(%v) = %v lost the original error", tt.in, got)
			}
			if tt.want == nil {
				if got != tt.in {
					t.Errorf("mapDriverError(%v) = %v, want it unchanged", tt.in, got)
				}
				return
			}
			if !errors.Is(got, tt.want) {
				t.Errorf("mapDriverError(%v) = %v, want %v", tt.in, got, tt.want)
			}
		})
	}
	if mapDriverError(nil) != nil {
		t.Error("mapDriverError(nil) != nil")
	}
}

func TestIsLockError(t *testing.T) {
	for _, err := range []error{sqlite3.BUSY, sqlite3.BUSY_TIMEOUT, sqlite3.BUSY_SNAPSHOT, sqlite3.LOCKED, sqlite3.LOCKED_SHAREDCACHE, fmt.Errorf("begin: %w", sqlite3.BUSY)} {
		if !isLockError(err) {
			t.Errorf("isLockError(%v) = false", err)
		}
	}
	// Classified by code, never by text.
	for _, err := range []error{errors.New("database is locked"), sqlite3.IOERR, sqlite3.CORRUPT, context.DeadlineExceeded} {
		if isLockError(err) {
			t.Errorf("isLockError(%v) = true", err)
		}
	}
}

func TestErrorWrapping(t *testing.T) {
	err := opErr("append message", "s1", sql.ErrNoRows)
	if got, want := err.Error(), `append message "s1": not found`; got != want {
		t.Errorf("Error() = %q, want %q", got, want)
	}
	var e *Error
	if !errors.As(err, &e) || e.Op != "append message" || e.SessionID != "s1" {
		t.Errorf("errors.As(*Error) = %+v", e)
	}
	if opErr("x", "", nil) != nil {
		t.Error("opErr(nil) != nil")
	}
}

func TestSyncFailureIsNotDiskFull(t *testing.T) {
	// A failed fsync reporting ENOSPC (delayed allocation, thin
	// provisioning) dropped data like any failed fsync: it halts, and is
	// not the clean, resumable ErrDiskFull of a write.
	err := fmt.Errorf("commit: %w", &fs.PathError{Op: "sync", Path: "x", Err: syscall.ENOSPC})
	fsync := errors.Join(sqlite3.IOERR_FSYNC, err)
	if !isSyncFailure(fsync) || isDiskFull(fsync) {
		t.Errorf("fsync ENOSPC: isSyncFailure = %v, isDiskFull = %v; want true, false", isSyncFailure(fsync), isDiskFull(fsync))
	}
	if isSyncFailure(sqlite3.FULL) || !isDiskFull(sqlite3.FULL) {
		t.Error("SQLITE_FULL is a full disk, not a failed fsync")
	}
	if isSyncFailure(sqlite3.IOERR_WRITE) {
		t.Error("a failed write is not a failed fsync: it does not halt")
	}
}
