package store

import (
	"context"
	"errors"
	"fmt"
	"go/ast"
	"go/parser"
	"go/token"
	"slices"
	"testing"
)

// sentinelNames are the sentinels errors.go declares, read from its source
// so that a sentinel added there without a row below fails the test.
func sentinelNames(t *testing.T) []string {
	t.Helper()
	f, err := parser.ParseFile(token.NewFileSet(), "errors.go", nil, 0)
	if err != nil {
		t.Fatal(err)
	}
	var names []string
	for _, d := range f.Decls {
		g, ok := d.(*ast.GenDecl)
		if !ok || g.Tok != token.VAR {
			continue
		}
		for _, spec := range g.Specs {
			for _, n := range spec.(*ast.ValueSpec).Names {
				if ast.IsExported(n.Name) {
					names = append(names, n.Name)
				}
			}
		}
	}
	if len(names) < 20 {
		t.Fatalf("found only %d sentinels in errors.go", len(names))
	}
	return names
}

// retryRow is one sentinel and what a caller may do after it: repeat any
// call (Retryable), or only an append idempotent by key (RetryableKeyed).
type retryRow struct {
	name         string
	err          error
	retry, keyed bool
}

// RetryRows is every sentinel of errors.go with whether it is retryable,
// for the engines' tests of their own mapped errors too.
var RetryRows = []retryRow{
	{"ErrNotFound", ErrNotFound, false, false},
	{"ErrExists", ErrExists, false, false},
	{"ErrConflict", ErrConflict, false, false},
	{"ErrInvalidInput", ErrInvalidInput, false, false},
	{"ErrLocked", ErrLocked, true, true},
	{"ErrCommitUnknown", ErrCommitUnknown, false, true},
	{"ErrCorrupt", ErrCorrupt, false, false},
	{"ErrNotDatabase", ErrNotDatabase, false, false},
	{"ErrReadOnly", ErrReadOnly, false, false},
	{"ErrDiskFull", ErrDiskFull, true, true},
	{"ErrTooManyOpenFiles", ErrTooManyOpenFiles, true, true},
	{"ErrReplaced", ErrReplaced, false, false},
	{"ErrClosed", ErrClosed, false, false},
	{"ErrLeaseHeld", ErrLeaseHeld, true, true},
	{"ErrLeaseLost", ErrLeaseLost, false, false},
	{"ErrSessionClosed", ErrSessionClosed, false, false},
	{"ErrSchemaTooNew", ErrSchemaTooNew, false, false},
	{"ErrIdempotencyConflict", ErrIdempotencyConflict, false, false},
	{"ErrCoolingDown", ErrCoolingDown, true, true},
	{"ErrIO", ErrIO, false, false},
	{"ErrForeignSchema", ErrForeignSchema, false, false},
	{"ErrAliased", ErrAliased, false, false},
	{"ErrNotSupported", ErrNotSupported, false, false},
	{"ErrNotAStore", ErrNotAStore, false, false},       // the wrong path: check it
	{"ErrTooLarge", ErrTooLarge, false, false},         // the same message is as large next time
	{"ErrInternal", ErrInternal, false, false},         // writes halted until the store is reopened
	{"ErrSchemaBehind", ErrSchemaBehind, false, false}, // the deploy step must migrate first
}

// TestRetryable_EverySentinel: each sentinel, wrapped as the Store returns
// it (an *Error around the engine's wrapping), is retryable or not as
// RetryRows says, and RetryRows names every sentinel errors.go declares.
func TestRetryable_EverySentinel(t *testing.T) {
	var listed []string
	for _, r := range RetryRows {
		listed = append(listed, r.name)
		err := opErr("append", "s1", fmt.Errorf("%w: what the engine said", r.err))
		if got := Retryable(err); got != r.retry {
			t.Errorf("Retryable(%s) = %v, want %v", r.name, got, r.retry)
		}
		if got := RetryableKeyed(err); got != r.keyed {
			t.Errorf("RetryableKeyed(%s) = %v, want %v", r.name, got, r.keyed)
		}
	}
	for _, name := range sentinelNames(t) {
		if !slices.Contains(listed, name) {
			t.Errorf("store.%s has no row in RetryRows: say whether it is retryable (and in Retryable's doc)", name)
		}
	}
}

// TestRetryable_NotSentinels: no error, the caller's own context ending,
// an error without a sentinel, and a commit cut short by a full disk.
func TestRetryable_NotSentinels(t *testing.T) {
	for _, tc := range []struct {
		name         string
		err          error
		retry, keyed bool
	}{
		{"nil", nil, false, false},
		{"canceled", opErr("append", "s1", context.Canceled), false, false},
		{"deadline", opErr("append", "s1", context.DeadlineExceeded), false, false},
		{"plain", errors.New("connection reset by peer"), false, false},
		{"disk full at commit", opErr("append", "s1", fmt.Errorf("%w: %w", ErrCommitUnknown, ErrDiskFull)), false, true},
	} {
		if got := Retryable(tc.err); got != tc.retry {
			t.Errorf("Retryable(%s) = %v, want %v", tc.name, got, tc.retry)
		}
		if got := RetryableKeyed(tc.err); got != tc.keyed {
			t.Errorf("RetryableKeyed(%s) = %v, want %v", tc.name, got, tc.keyed)
		}
	}
}
