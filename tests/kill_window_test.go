//go:build unix

package tests

import (
	"errors"
	"fmt"
	"path/filepath"
	"strings"
	"testing"

	"github.com/sessiondb/sessiondb/db"
	"github.com/sessiondb/sessiondb/storetest"
)

// pastAWindow is one message more than a Messages call returns.
const pastAWindow = 100_001

// TestKillNine's check reads the whole session, past the 100,000 rows one
// Messages call returns (issue 38: on a quiet machine the writers append
// more than that during the kills, and the check read as a window reported
// 10,747 acknowledged messages "present 0 times"). Here the last
// acknowledged message is row 100,001: the check finds it, finds a key
// missing past the window, and a read that is a window fails loudly.
func TestKillNine_CheckReadsPastAWindow(t *testing.T) {
	path := filepath.Join(t.TempDir(), "state.db")
	s := openStore(t, path, db.Options{})
	if _, err := s.CreateSession(t.Context(), db.NewSession{ID: "k", Source: "test"}); err != nil {
		t.Fatal(err)
	}
	acked := map[string]bool{}
	const batch = 10_000
	for from := 0; from < pastAWindow; from += batch {
		ms := make([]db.NewMessage, 0, batch)
		for i := from; i < min(from+batch, pastAWindow); i++ {
			key := fmt.Sprint("w", i)
			ms = append(ms, db.NewMessage{Role: db.RoleUser, Content: key, IdempotencyKey: key})
			acked[key] = true
		}
		if _, err := s.AppendMessages(t.Context(), "k", ms); err != nil {
			t.Fatal(err)
		}
	}
	last := fmt.Sprint("w", pastAWindow-1)

	checkExactlyOnce(t, path, acked) // the kill test's own check: passes
	if t.Failed() {
		t.Fatalf("the kill test's check failed on a session of %d acknowledged messages", pastAWindow)
	}

	whole := storetest.WholeSession(t, s.Store, "k")
	if len(whole) != pastAWindow || whole[len(whole)-1].IdempotencyKey != last {
		t.Fatalf("the whole session: %d rows, want %d ending with %s", len(whole), pastAWindow, last)
	}
	// A key lost past the window is found.
	if got := exactlyOnce(whole[:len(whole)-1], acked); len(got) != 1 || !strings.Contains(got[0], last+" present 0 times") {
		t.Errorf("with row %d gone the check says %q, want %s present 0 times", pastAWindow, got, last)
	}
	// A window is not taken for the whole session.
	window, err := s.Messages(t.Context(), "k", db.MessageQuery{Limit: 1_000_000})
	if err != nil || len(window) != pastAWindow-1 {
		t.Fatalf("Messages: %d rows, %v; want a window of %d", len(window), err, pastAWindow-1)
	}
	if err := storetest.CheckWholeSession(window, pastAWindow, pastAWindow); !errors.Is(err, storetest.ErrNotWholeSession) {
		t.Errorf("a window of %d rows checked as a session of %d: %v, want an error", len(window), pastAWindow, err)
	}
	// AllMessages asked for pages larger than Messages returns still
	// reads to the end.
	n := 0
	for _, err := range s.AllMessages(t.Context(), "k", db.MessageQuery{Limit: 1_000_000}) {
		if err != nil {
			t.Fatal(err)
		}
		n++
	}
	if n != pastAWindow {
		t.Errorf("AllMessages with a page of 1,000,000 read %d rows, want %d", n, pastAWindow)
	}
}
