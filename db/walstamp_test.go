package db

import (
	"context"
	"fmt"
	"testing"
)

// appendN appends n one-message commits to session "a".
func appendN(t *testing.T, s *Store, n int, word string) {
	t.Helper()
	for i := range n {
		if _, err := s.AppendMessage(t.Context(), "a", NewMessage{Role: RoleUser, Content: fmt.Sprint(word, " ", i)}); err != nil {
			t.Fatal(err)
		}
	}
}

// wantStampedOnce checks that the WAL's replayable frames hold page 1,
// stamped with the store's application_id, from one commit of the
// commits it holds: the first after the WAL started over.
func wantStampedOnce(t *testing.T, s *Store, commits int) {
	t.Helper()
	sum, err := readWAL(s.Path() + "-wal")
	if err != nil {
		t.Fatal(err)
	}
	s.w.mu.Lock()
	appID := uint32(s.w.id.appID)
	s.w.mu.Unlock()
	if !sum.appIDs[appID] || sum.page1 == 0 {
		t.Fatalf("the WAL holds no page 1 stamped %d (page 1 images %d, ids %v): foreignWAL could not tell it", appID, sum.page1, sum.appIDs)
	}
	if sum.page1 >= commits {
		t.Errorf("%d page 1 images for %d commits: every commit still writes page 1", sum.page1, commits)
	}
}

// The first commit after the WAL starts over writes page 1; the commits
// after it do not (walstamp.go). Both ways the WAL starts over are
// covered: this store's checkpoint, and another connection's, which the
// writer learns of only through the wal-index.
func TestStampWAL_FirstCommitOfEachWAL(t *testing.T) {
	s := openTestStore(t, Options{CheckpointEvery: -1, FTSMergeEvery: -1})
	s.w.ix.paused.Store(true) // the indexer's commits would be counted too
	newTestSession(t, s, "a")
	const commits = 12

	s.w.mu.Lock()
	_, _, err := walCheckpoint(t.Context(), s.w.conn, "TRUNCATE")
	s.w.mu.Unlock()
	if err != nil {
		t.Fatal(err)
	}
	appendN(t, s, commits, "own")
	wantStampedOnce(t, s, commits)

	other, err := openDB(s.Path(), kindRepair, 1, "")
	if err != nil {
		t.Fatal(err)
	}
	defer other.Close()
	if _, err := other.ExecContext(context.Background(), "PRAGMA wal_checkpoint(TRUNCATE)"); err != nil {
		t.Fatal(err)
	}
	appendN(t, s, commits, "other")
	wantStampedOnce(t, s, commits)
}
