package changefeed

import (
	"context"
	"errors"
	"testing"
	"time"
)

// waitWithin is sub.Wait bounded, so a missed wake fails rather than hangs.
func waitWithin(t *testing.T, sub *Sub) error {
	t.Helper()
	ctx, cancel := context.WithTimeout(t.Context(), 2*time.Second)
	defer cancel()
	return sub.Wait(ctx)
}

// idle is a source that reports nothing until it is stopped.
func idle(ctx context.Context, _ func()) error { <-ctx.Done(); return nil }

func TestHub_ChangeBetweenSubscribeAndWaitWakes(t *testing.T) {
	h := New(idle)
	sub, err := h.Subscribe()
	if err != nil {
		t.Fatal(err)
	}
	defer sub.Close()
	h.Changed() // before Wait: still wakes it
	h.Changed() // and coalesces with the first
	if err := waitWithin(t, sub); err != nil {
		t.Fatalf("Wait after a change: %v", err)
	}
	ctx, cancel := context.WithTimeout(t.Context(), 50*time.Millisecond)
	defer cancel()
	if err := sub.Wait(ctx); !errors.Is(err, context.DeadlineExceeded) {
		t.Fatalf("Wait with no new change returned %v, want ctx's deadline", err)
	}
}

func TestHub_CloseEndsWaitersWithItsError(t *testing.T) {
	stopped := make(chan struct{})
	h := New(func(ctx context.Context, _ func()) error { <-ctx.Done(); close(stopped); return nil })
	sub, _ := h.Subscribe()
	closed := errors.New("closed")
	h.Close(closed)
	select {
	case <-stopped:
	default:
		t.Fatal("Close returned before the source stopped")
	}
	if err := waitWithin(t, sub); !errors.Is(err, closed) {
		t.Fatalf("Wait after Close: %v", err)
	}
	if _, err := h.Subscribe(); !errors.Is(err, closed) {
		t.Fatalf("Subscribe after Close: %v", err)
	}
}

// A source that fails ends every watcher with its error; once they have
// all gone, a new subscription starts the source again.
func TestHub_SourceFailureEndsWatchersThenRetries(t *testing.T) {
	damaged := errors.New("damaged")
	starts := make(chan struct{}, 4)
	h := New(func(ctx context.Context, _ func()) error { starts <- struct{}{}; return damaged })
	sub, _ := h.Subscribe()
	if err := waitWithin(t, sub); !errors.Is(err, damaged) {
		t.Fatalf("Wait after the source failed: %v", err)
	}
	sub.Close()
	again, err := h.Subscribe()
	if err != nil {
		t.Fatalf("Subscribe once every watcher has gone: %v", err)
	}
	defer again.Close()
	if err := waitWithin(t, again); !errors.Is(err, damaged) {
		t.Fatalf("the restarted source's failure: %v", err)
	}
	if len(starts) != 2 {
		t.Fatalf("the source started %d times, want 2", len(starts))
	}
}

// The source runs only while someone watches.
func TestHub_LastCloseStopsTheSource(t *testing.T) {
	stopped := make(chan struct{})
	h := New(func(ctx context.Context, _ func()) error { <-ctx.Done(); close(stopped); return nil })
	a, _ := h.Subscribe()
	b, _ := h.Subscribe()
	a.Close()
	a.Close() // twice is once
	select {
	case <-stopped:
		t.Fatal("the source stopped while b still watches")
	case <-time.After(20 * time.Millisecond):
	}
	b.Close()
	select {
	case <-stopped:
	case <-time.After(2 * time.Second):
		t.Fatal("the source still runs after the last watcher left")
	}
}
