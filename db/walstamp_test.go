package db

import (
	"context"
	"fmt"
	"testing"

	"github.com/sessiondb/sessiondb/db/internal/forensics"
)

// walStamps summarises the store's WAL and returns the store's
// application_id, which a stamp carries.
func walStamps(t *testing.T, s *Store) (forensics.WALSummary, uint32) {
	t.Helper()
	sum, err := forensics.ReadWAL(s.Path() + "-wal")
	if err != nil {
		t.Fatal(err)
	}
	s.w.mu.Lock()
	defer s.w.mu.Unlock()
	return sum, uint32(s.w.id.appID)
}

// appendN appends n one-message commits to session "a", checking after
// each that the WAL holds the store's stamp: a crash may follow any
// commit.
func appendN(t *testing.T, s *Store, n int, word string) {
	t.Helper()
	for i := range n {
		if _, err := s.AppendMessage(t.Context(), "a", NewMessage{Role: RoleUser, Content: fmt.Sprint(word, " ", i)}); err != nil {
			t.Fatal(err)
		}
		if sum, appID := walStamps(t, s); !sum.AppIDs[appID] {
			t.Fatalf("%s %d: after this commit the WAL holds no page 1 stamped %d (page 1 images %d): foreignWAL could not tell it", word, i, appID, sum.Page1)
		}
	}
}

// wantFewerStamps checks that fewer of the WAL's commits than it holds
// wrote page 1: the first the store made in this generation (and, when
// that one started it, the next).
func wantFewerStamps(t *testing.T, s *Store, commits int) {
	t.Helper()
	if sum, _ := walStamps(t, s); sum.Page1 >= commits {
		t.Errorf("%d page 1 images for %d commits: every commit still writes page 1", sum.Page1, commits)
	}
}

// Each WAL generation gets the store's stamp once, not on every commit
// (walstamp.go), however it started: after this store's checkpoint, after
// another connection's (which the writer learns of only through the
// wal-index), and when another writer's commit started it without page 1.
func TestStampWAL_OncePerWALGeneration(t *testing.T) {
	s := openTestStore(t, Options{CheckpointEvery: -1, FTSMergeEvery: -1})
	s.w.ix.paused.Store(true) // the indexer's commits would be counted too
	newTestSession(t, s, "a")
	const commits = 12

	for _, mode := range []string{"TRUNCATE", "PASSIVE"} { // PASSIVE: SQLite starts the WAL over at the next commit
		s.w.mu.Lock()
		_, _, err := walCheckpoint(t.Context(), s.w.conn, mode)
		s.w.mu.Unlock()
		if err != nil {
			t.Fatal(err)
		}
		appendN(t, s, commits, "own "+mode)
		wantFewerStamps(t, s, commits)
	}

	other, err := openDB(s.Path(), kindRepair, 1, "")
	if err != nil {
		t.Fatal(err)
	}
	defer other.Close()
	if _, err := other.ExecContext(context.Background(), "PRAGMA wal_checkpoint(TRUNCATE)"); err != nil {
		t.Fatal(err)
	}
	appendN(t, s, commits, "other")
	wantFewerStamps(t, s, commits)

	// Another writer starts the WAL, without page 1: the store's first
	// commit into that generation stamps it.
	if _, err := other.ExecContext(context.Background(), "PRAGMA wal_checkpoint(TRUNCATE)"); err != nil {
		t.Fatal(err)
	}
	//sessiondb:allow txonly -- plays another tool writing the file
	if _, err := other.ExecContext(context.Background(), "UPDATE sessions SET title = 'renamed' WHERE id = 'a'"); err != nil {
		t.Fatal(err)
	}
	if sum, err := forensics.ReadWAL(s.Path() + "-wal"); err != nil || sum.Frames == 0 || sum.Page1 != 0 {
		t.Fatalf("the other writer's WAL: %d frames, %d page 1 images (%v); the case needs frames without page 1", sum.Frames, sum.Page1, err)
	}
	appendN(t, s, commits, "after")
	wantFewerStamps(t, s, commits)
}
