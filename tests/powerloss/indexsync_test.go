package powerloss

import (
	"fmt"
	"math/rand/v2"
	"path/filepath"
	"testing"

	"github.com/sessiondb/sessiondb/db"
	"github.com/sessiondb/sessiondb/storetest"
)

// appendAndIndex opens a store on disk, appends n messages holding word
// in one batch and indexes them, and reports how many times that synced
// the WAL.
func appendAndIndex(t *testing.T, disk *Disk, path string, n int, word string) (*db.Store, int) {
	t.Helper()
	s, err := db.Open(t.Context(), path, db.Options{VFS: disk.Name(), CheckpointEvery: -1, FTSMergeEvery: -1, Logger: quiet})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := s.CreateSession(t.Context(), db.NewSession{ID: "p", Source: "powerloss"}); err != nil {
		t.Fatal(err)
	}
	var batch []db.NewMessage
	for i := range n {
		batch = append(batch, db.NewMessage{Role: db.RoleUser, Content: fmt.Sprintf("turn %d %s", i, word)})
	}
	before := disk.Calls(Sync, WAL)
	if _, err := s.AppendMessages(t.Context(), "p", batch); err != nil {
		t.Fatal(err)
	}
	if err := s.IndexNow(t.Context()); err != nil {
		t.Fatal(err)
	}
	return s, disk.Calls(Sync, WAL) - before
}

// cutAndRestore cuts the power under s and rewinds the disk to what was
// synced, dropping every unsynced write.
func cutAndRestore(t *testing.T, disk *Disk, s *db.Store) {
	t.Helper()
	disk.Cut()
	s.Close() // fails to checkpoint: the disk is gone
	if _, err := disk.Restore(rand.New(rand.NewPCG(3, 3)), 0, false); err != nil {
		t.Fatal(err)
	}
}

// The indexer's transactions commit without an fsync (db/indexsync.go):
// appending 100 messages and indexing them costs the one sync of the
// append. A power cut that drops the unsynced index commit loses nothing
// acknowledged: the messages are there, the reopened store indexes them
// again, Search finds every one and the file verifies.
func TestPowerLoss_IndexerCommitsWithoutSync(t *testing.T) {
	ctx := t.Context()
	path := filepath.Join(t.TempDir(), "state.db")
	disk := New(false)
	defer disk.Close()
	const n = 100
	s, syncs := appendAndIndex(t, disk, path, n, "kumquat")
	if syncs != 1 {
		t.Errorf("appending and indexing synced the WAL %d times, want 1 (the append's commit)", syncs)
	}
	cutAndRestore(t, disk, s)
	if st := disk.Stats(); st.Dropped == 0 {
		t.Fatalf("the cut dropped nothing, so it tested nothing: %+v", st)
	}

	ro, err := db.Open(ctx, path, db.Options{ReadOnly: true, Logger: quiet})
	if err != nil {
		t.Fatal(err)
	}
	if q := ro.Stats().IndexQueued; q != n {
		t.Errorf("after the cut %d messages are queued for the index, want %d: the index commit was to be lost", q, n)
	}
	ro.Close()

	after, err := db.Open(ctx, path, db.Options{Logger: quiet})
	if err != nil {
		t.Fatal(err)
	}
	defer after.Close()
	if msgs := storetest.WholeSession(t, after.Store, "p"); len(msgs) != n {
		t.Fatalf("after the cut: %d messages, want %d", len(msgs), n)
	}
	if err := after.IndexNow(ctx); err != nil {
		t.Fatal(err)
	}
	hits, err := after.Search(ctx, "kumquat", db.SearchOptions{Limit: 200})
	if err != nil || len(hits) != n {
		t.Errorf("search after the cut: %d hits (%v), want %d", len(hits), err, n)
	}
	after.Close()
	if report, err := db.Verify(ctx, path); err != nil || report.Health != db.HealthVerified {
		t.Errorf("verify after the cut: %v %v %v", report.Health, report.Details, err)
	}
}

// An append's FULL commit makes the unsynced index commit before it
// durable too: after a cut that drops every unsynced write, nothing of
// the first batch is queued again.
func TestPowerLoss_LaterAppendSyncsTheIndexCommit(t *testing.T) {
	ctx := t.Context()
	path := filepath.Join(t.TempDir(), "state.db")
	disk := New(false)
	defer disk.Close()
	s, _ := appendAndIndex(t, disk, path, 100, "kumquat")
	if _, err := s.AppendMessage(ctx, "p", db.NewMessage{Role: db.RoleUser, Content: "the last turn"}); err != nil {
		t.Fatal(err)
	}
	cutAndRestore(t, disk, s)

	ro, err := db.Open(ctx, path, db.Options{ReadOnly: true, Logger: quiet})
	if err != nil {
		t.Fatal(err)
	}
	defer ro.Close()
	if q := ro.Stats().IndexQueued; q > 1 {
		t.Errorf("after the cut %d messages are queued for the index, want at most the last one", q)
	}
	if msgs := storetest.WholeSession(t, ro.Store, "p"); len(msgs) != 101 {
		t.Errorf("after the cut: %d messages, want 101", len(msgs))
	}
}
