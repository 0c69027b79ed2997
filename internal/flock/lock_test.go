package flock

import (
	"context"
	"errors"
	"path/filepath"
	"testing"
	"time"
)

// A held lock makes a second Acquire wait until its context runs out, and
// a released one is taken at once.
func TestAcquire_ExcludesUntilReleased(t *testing.T) {
	path := filepath.Join(t.TempDir(), "x.lock")
	first, err := Acquire(t.Context(), path)
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(t.Context(), 100*time.Millisecond)
	defer cancel()
	if l, err := Acquire(ctx, path); !errors.Is(err, context.DeadlineExceeded) {
		if l != nil {
			l.Release()
		}
		t.Fatalf("second Acquire while held = %v, want the context's deadline", err)
	}
	if err := first.Release(); err != nil {
		t.Fatal(err)
	}
	second, err := Acquire(t.Context(), path)
	if err != nil {
		t.Fatalf("Acquire after Release = %v", err)
	}
	second.Release()
}
