package powerloss

import (
	"fmt"
	"math/rand/v2"
	"path/filepath"
	"testing"

	"github.com/sessiondb/sessiondb/db"
)

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
	s, err := db.Open(ctx, path, db.Options{VFS: disk.Name(), CheckpointEvery: -1, FTSMergeEvery: -1, Logger: quiet})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := s.CreateSession(ctx, db.NewSession{ID: "p", Source: "powerloss"}); err != nil {
		t.Fatal(err)
	}
	const n = 100
	var batch []db.NewMessage
	for i := range n {
		batch = append(batch, db.NewMessage{Role: db.RoleUser, Content: fmt.Sprintf("turn %d kumquat", i)})
	}
	before := disk.Calls(Sync, WAL)
	if _, err := s.AppendMessages(ctx, "p", batch); err != nil {
		t.Fatal(err)
	}
	if err := s.IndexNow(ctx); err != nil {
		t.Fatal(err)
	}
	if syncs := disk.Calls(Sync, WAL) - before; syncs != 1 {
		t.Errorf("appending and indexing synced the WAL %d times, want 1 (the append's commit)", syncs)
	}

	disk.Cut()
	s.Close() // fails to checkpoint: the disk is gone
	// Every unsynced write dropped: the index commit with them.
	stats, err := disk.Restore(rand.New(rand.NewPCG(3, 3)), 0, false)
	if err != nil {
		t.Fatal(err)
	}
	if stats.Dropped == 0 {
		t.Fatalf("the cut dropped nothing, so it tested nothing: %+v", stats)
	}
	after, err := db.Open(ctx, path, db.Options{Logger: quiet})
	if err != nil {
		t.Fatal(err)
	}
	defer after.Close()
	msgs, err := after.Messages(ctx, "p", db.MessageQuery{Limit: 1000})
	if err != nil || len(msgs) != n {
		t.Fatalf("after the cut: %d messages (%v), want %d", len(msgs), err, n)
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
