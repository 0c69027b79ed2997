package db

import (
	"context"
	"errors"
	"strings"
	"testing"
	"time"
)

// closeWithin closes s and fails the test when Close does not return
// within d (on 63b5fb9 it never returned after a driver panic).
func closeWithin(t *testing.T, s *Store, d time.Duration) error {
	t.Helper()
	done := make(chan error, 1)
	go func() { done <- s.Close() }()
	select {
	case err := <-done:
		return err
	case <-time.After(d):
		t.Fatalf("Close did not return within %v", d)
		return nil
	}
}

// The SQLite driver panics on SQLITE_NOMEM inside database/sql (the 100 MB
// message of issue 38 ran the indexer out of memory). A real NOMEM here:
// the writer's connection gets a hard heap limit of 4 MiB, and an 8 MiB
// message is appended. The append gets ErrInternal (not the driver's panic,
// and never a retry), every later write the same halt, Close returns, and
// the reopened store holds what was acknowledged and writes again.
func TestDriverPanic_HaltsWritesAndCloseReturns(t *testing.T) {
	path := t.TempDir() + "/state.db"
	s, err := Open(t.Context(), path, Options{ManualIndexing: true})
	if err != nil {
		t.Fatal(err)
	}
	newTestSession(t, s, "s")
	if _, err := s.AppendMessage(t.Context(), "s", NewMessage{Role: RoleUser, Content: "kept"}); err != nil {
		t.Fatal(err)
	}
	s.w.mu.Lock()
	//sessiondb:allow txonly -- a pragma on the writer's connection: SQLite's own memory limit, to make a real NOMEM
	_, err = s.w.conn.ExecContext(context.Background(), "PRAGMA hard_heap_limit = 4194304")
	s.w.mu.Unlock()
	if err != nil {
		t.Fatal(err)
	}
	var appendErr error
	func() {
		defer func() {
			if p := recover(); p != nil {
				t.Fatalf("the append panicked: %v", p)
			}
		}()
		_, appendErr = s.AppendMessage(t.Context(), "s", NewMessage{Role: RoleTool, ToolName: "read", Content: strings.Repeat("out of memory ", 600_000)})
	}()
	if !errors.Is(appendErr, ErrInternal) {
		t.Fatalf("append past the driver's memory: %v, want ErrInternal", appendErr)
	}
	if err := s.SetMeta(t.Context(), "k", "v"); !errors.Is(err, ErrInternal) {
		t.Errorf("a later write: %v, want the ErrInternal halt", err)
	}
	if err := closeWithin(t, s, 30*time.Second); err != nil {
		t.Logf("Close: %v", err)
	}

	s, err = Open(t.Context(), path, Options{})
	if err != nil {
		t.Fatalf("reopen: %v", err)
	}
	defer closeWithin(t, s, 30*time.Second)
	msgs, err := s.Messages(t.Context(), "s", MessageQuery{})
	if err != nil || len(msgs) != 1 || msgs[0].Content != "kept" {
		t.Fatalf("after reopen: %v %v, want the acknowledged message alone", msgs, err)
	}
	if _, err := s.AppendMessage(t.Context(), "s", NewMessage{Role: RoleUser, Content: "again"}); err != nil {
		t.Errorf("append after reopen: %v", err)
	}
}
