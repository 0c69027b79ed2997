package db

import (
	"bytes"
	"context"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
)

// indexMark reads fts_mark: how far the indexes hold every message, and
// since when a message has waited past it (0: none has).
func indexMark(t *testing.T, s *Store) (through, behindSince int64) {
	t.Helper()
	if err := s.readers.QueryRowContext(t.Context(), "SELECT indexed_through, behind_since FROM fts_mark").Scan(&through, &behindSince); err != nil {
		t.Fatal(err)
	}
	return through, behindSince
}

// queueRows counts the rows of both queue tables: what a write queued
// beside its messages.
func queueRows(t *testing.T, s *Store) int {
	t.Helper()
	var n int
	if err := s.readers.QueryRowContext(t.Context(), "SELECT (SELECT COUNT(*) FROM fts_pending) + (SELECT COUNT(*) FROM fts_deleted)").Scan(&n); err != nil {
		t.Fatal(err)
	}
	return n
}

// An append commits its row and nothing in the queue tables: it waits
// past the mark, Search finds it there, and indexing moves the mark past
// it and clears behind_since.
func TestFTSMark_AnAppendWaitsPastTheMark(t *testing.T) {
	s := openTestStore(t, Options{ManualIndexing: true})
	newTestSession(t, s, "m")
	before := time.Now().UnixMilli()
	ids := []int64{appendMessage(t, s, "m", "quokka one"), appendMessage(t, s, "m", "quokka two")}
	if n := queueRows(t, s); n != 0 {
		t.Errorf("%d queue rows after two appends, want 0", n)
	}
	through, behind := indexMark(t, s)
	if through != 0 || behind < before || behind > time.Now().UnixMilli() {
		t.Errorf("mark %d, behind since %d; want 0 and the first append's time (%d or later)", through, behind, before)
	}
	if n := queued(t, s); n != 2 {
		t.Errorf("%d waiting, want the 2 rows past the mark", n)
	}
	for _, q := range []string{"quokka", "okk"} { // the word route and the trigram route
		if got := idsFound(t, s, q, SearchOptions{Sort: SortOldest}); !cmp.Equal(got, ids) {
			t.Errorf("%q while past the mark: %v, want %v", q, got, ids)
		}
	}
	indexNow(t, s)
	if through, behind := indexMark(t, s); through != ids[1] || behind != 0 {
		t.Errorf("after IndexNow: mark %d, behind since %d; want %d and 0", through, behind, ids[1])
	}
	if st := s.Stats(); st.IndexQueued != 0 || st.IndexLag != 0 {
		t.Errorf("after IndexNow: %d queued, lag %v; want none", st.IndexQueued, st.IndexLag)
	}
	for _, q := range []string{"quokka", "okk"} {
		if got := idsFound(t, s, q, SearchOptions{Sort: SortOldest}); !cmp.Equal(got, ids) {
			t.Errorf("%q once indexed: %v, want %v", q, got, ids)
		}
	}
	ftsConsistent(t, s)
	wantVerified(t, s, "indexed")
}

// An edit or delete of a row past the mark queues nothing (no index holds
// it: the indexer reads its current text when it gets there); of a row at
// or below the mark it queues the old text and, for an edit, the row.
func TestFTSMark_EditsAndDeletesQueueOnlyIndexedRows(t *testing.T) {
	s := openTestStore(t, Options{ManualIndexing: true})
	newTestSession(t, s, "m")
	indexedEdit := appendMessage(t, s, "m", "narwhal indexed then edited")
	indexedGone := appendMessage(t, s, "m", "narwhal indexed then deleted")
	indexNow(t, s)
	waitingEdit := appendMessage(t, s, "m", "narwhal waiting then edited")
	waitingGone := appendMessage(t, s, "m", "narwhal waiting then deleted")
	err := s.w.write(t.Context(), s.opts.WritePatience, func(ctx context.Context, tx genDBTX) error {
		for _, stmt := range []struct {
			sql string
			id  int64
		}{
			{"UPDATE messages SET content = 'beluga waiting, edited' WHERE id = ?", waitingEdit},
			{"DELETE FROM messages WHERE id = ?", waitingGone},
		} {
			if _, err := tx.ExecContext(ctx, stmt.sql, stmt.id); err != nil {
				return err
			}
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	if n := queueRows(t, s); n != 0 {
		t.Errorf("an edit and a delete past the mark queued %d rows, want 0", n)
	}
	err = s.w.write(t.Context(), s.opts.WritePatience, func(ctx context.Context, tx genDBTX) error {
		if _, err := tx.ExecContext(ctx, "UPDATE messages SET content = 'beluga indexed, edited' WHERE id = ?", indexedEdit); err != nil {
			return err
		}
		_, err := tx.ExecContext(ctx, "DELETE FROM messages WHERE id = ?", indexedGone)
		return err
	})
	if err != nil {
		t.Fatal(err)
	}
	if n := queueRows(t, s); n != 3 { // two old texts, one row to index again
		t.Errorf("an edit and a delete at or below the mark queued %d rows, want 3", n)
	}
	for _, stage := range []string{"queued", "indexed"} {
		if stage == "indexed" {
			indexNow(t, s)
			ftsConsistent(t, s)
		}
		if got, want := idsFound(t, s, "narwhal", SearchOptions{}), []int64{}; !cmp.Equal(got, want) {
			t.Errorf("%s: narwhal %v, want none (edited away or deleted)", stage, got)
		}
		if got, want := idsFound(t, s, "beluga", SearchOptions{Sort: SortOldest}), []int64{indexedEdit, waitingEdit}; !cmp.Equal(got, want) {
			t.Errorf("%s: beluga %v, want %v", stage, got, want)
		}
	}
	wantVerified(t, s, "after the edits and deletes")
}

// Rows appended and deleted before the indexer reached them leave
// behind_since set with nothing past the mark: Stats reports no lag, and
// the next slice clears it, so the next append's wait is its own.
func TestFTSMark_BehindSinceClearedWhenTheWaitingRowsAreGone(t *testing.T) {
	s := openTestStore(t, Options{ManualIndexing: true})
	newTestSession(t, s, "m")
	appendMessage(t, s, "m", "ephemeral")
	if _, err := s.DeleteSession(t.Context(), "m", DeleteOptions{ExpectedIDs: []string{"m"}}); err != nil {
		t.Fatal(err)
	}
	if _, behind := indexMark(t, s); behind == 0 {
		t.Fatal("behind_since not set by the append")
	}
	if st := s.Stats(); st.IndexQueued != 0 || st.IndexLag != 0 {
		t.Errorf("nothing past the mark: %d queued, lag %v; want none", st.IndexQueued, st.IndexLag)
	}
	indexNow(t, s)
	if _, behind := indexMark(t, s); behind != 0 {
		t.Errorf("behind_since %d after IndexNow, want 0", behind)
	}
}

// A mark that would leave new messages out of the indexes and of Search
// — its row gone, or past any id SQLite may still give — is damage:
// Verify says so, and the next writable open rebuilds the indexes, after
// which a new message is found and indexed.
func TestFTSMark_DamagedMarkRebuiltAtOpen(t *testing.T) {
	for _, tc := range []struct{ name, damage, verify string }{
		{"row deleted", "DELETE FROM fts_mark", "fts_mark holds 0 rows"},
		{"past the last id", "UPDATE fts_mark SET indexed_through = indexed_through + 50", "past the last id given"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			path := filledStore(t)
			damage(t, path, tc.damage)
			if r, err := Verify(t.Context(), path); err != nil || r.Health != HealthCorrupt || !strings.Contains(r.FTS, tc.verify) {
				t.Errorf("Verify = %s %q %v; want corrupt, %q", r.Health, r.FTS, err, tc.verify)
			}
			var logs bytes.Buffer
			s, err := Open(t.Context(), path, Options{ManualIndexing: true, Logger: testLogger(&logs)})
			if err != nil {
				t.Fatal(err)
			}
			defer s.Close()
			if !strings.Contains(logs.String(), "its mark is damaged") {
				t.Errorf("the rebuild was not logged: %q", logs.String())
			}
			wantVerified(t, s, "rebuilt")
			id := appendMessage(t, s, "a", "axolotl after the rebuild")
			if got := idsFound(t, s, "axolotl", SearchOptions{}); !cmp.Equal(got, []int64{id}) {
				t.Errorf("new message before indexing: %v, want [%d]", got, id)
			}
			indexNow(t, s)
			if through, _ := indexMark(t, s); through != id {
				t.Errorf("mark %d after IndexNow, want %d", through, id)
			}
			ftsConsistent(t, s)
		})
	}
}

// A version-11 file's queue — new rows queued by its insert trigger,
// edited rows, deleted rows' old text — is applied after the upgrade,
// without a rebuild: the mark starts at the last message, every queued row
// below it.
func TestOpen_MigratesTheQueueToTheMark(t *testing.T) {
	s := openTestStore(t, Options{ManualIndexing: true})
	newTestSession(t, s, "a")
	var ids []int64
	for i := range 10 {
		ids = append(ids, appendMessage(t, s, "a", fmt.Sprint("pangolin indexed ", i)))
	}
	indexNow(t, s)
	path := s.Path()
	s.Close()
	migrateDownTo(t, path, 11)
	damage(t, path,
		"INSERT INTO messages (session_id, role, content, created_at) VALUES ('a', 'user', 'pangolin queued by an older build', 0)",
		fmt.Sprintf("UPDATE messages SET content = 'tapir edited by an older build' WHERE id = %d", ids[0]),
		fmt.Sprintf("DELETE FROM messages WHERE id = %d", ids[1]))
	var logs bytes.Buffer
	s, err := Open(t.Context(), path, Options{ManualIndexing: true, Logger: testLogger(&logs)})
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	if strings.Contains(logs.String(), "rebuilt") {
		t.Errorf("the upgrade rebuilt the index: %q", logs.String())
	}
	var last int64
	if err := s.readers.QueryRowContext(t.Context(), "SELECT MAX(id) FROM messages").Scan(&last); err != nil {
		t.Fatal(err)
	}
	if through, _ := indexMark(t, s); through != last {
		t.Errorf("mark %d after the upgrade, want the last message, %d", through, last)
	}
	// Open applied the queue the older build left.
	if n := queued(t, s); n != 0 {
		t.Errorf("%d changes waiting after Open, want 0", n)
	}
	ftsConsistent(t, s)
	wantVerified(t, s, "migrated")
	if got := idsFound(t, s, "pangolin", SearchOptions{}); len(got) != 9 {
		t.Errorf("pangolin: %d hits, want the 8 indexed rows left and the queued one", len(got))
	}
	if got := idsFound(t, s, "tapir", SearchOptions{}); !cmp.Equal(got, []int64{ids[0]}) {
		t.Errorf("tapir: %v, want the edited row %d", got, ids[0])
	}
	// And down again: the rows past the mark (one inserted after Close,
	// which indexes what waits) go back into fts_pending.
	s.Close()
	damage(t, path, "INSERT INTO messages (session_id, role, content, created_at) VALUES ('a', 'user', 'pangolin past the mark', 0)")
	id := last + 1
	migrateDownTo(t, path, 11)
	d, err := openDB(path, kindProbe, 1, "")
	if err != nil {
		t.Fatal(err)
	}
	defer d.Close()
	if pending := queryIDs(t, d, "SELECT id FROM fts_pending"); !cmp.Equal(pending, []int64{id}) {
		t.Errorf("version 11's queue after the downgrade: %v, want [%d]", pending, id)
	}
}

// The lag of a new message counts from its append: its created_at, or
// the first append since the indexer caught up when created_at is older
// (an imported message keeps the time it was said).
func TestFTSMark_LagOfAnImportedMessageCountsFromItsAppend(t *testing.T) {
	s := openTestStore(t, Options{ManualIndexing: true})
	newTestSession(t, s, "m")
	if _, err := s.AppendMessage(t.Context(), "m", NewMessage{Role: RoleUser, Content: "said a day ago", CreatedAt: time.Now().Add(-24 * time.Hour)}); err != nil {
		t.Fatal(err)
	}
	time.Sleep(60 * time.Millisecond)
	if st := s.Stats(); st.IndexQueued != 1 || st.IndexLag < 50*time.Millisecond || st.IndexLag > time.Minute {
		t.Errorf("Stats: %d queued, lag %v; want 1 queued and a lag of 60 ms or so, not a day", st.IndexQueued, st.IndexLag)
	}
}

// A mark row deleted under an open store (another writer's damage): the
// messages appended meanwhile are still found, the indexer marks the
// index stale (Search then scans), and the next open rebuilds it.
func TestFTSMark_RowDeletedWhileOpen(t *testing.T) {
	var logs bytes.Buffer
	s := openTestStore(t, Options{Logger: testLogger(&logs)})
	newTestSession(t, s, "m")
	appendMessage(t, s, "m", "gecko before")
	indexNow(t, s)
	damage(t, s.Path(), "DELETE FROM fts_mark")
	id := appendMessage(t, s, "m", "gecko after")
	if got := idsFound(t, s, "gecko", SearchOptions{Sort: SortNewest}); len(got) != 2 || got[0] != id {
		t.Errorf("gecko with the mark gone: %v, want both, %d first", got, id)
	}
	for deadline := time.Now().Add(10 * time.Second); !s.w.ftsOff.Load() && time.Now().Before(deadline); {
		time.Sleep(10 * time.Millisecond)
	}
	if !s.w.ftsOff.Load() || !strings.Contains(logs.String(), "fts_mark") {
		t.Fatalf("indexing not switched off for the missing mark: %q", logs.String())
	}
	if got := idsFound(t, s, "gecko", SearchOptions{}); len(got) != 2 {
		t.Errorf("gecko once marked stale: %v, want both", got)
	}
	path := s.Path()
	s.Close()
	s, err := Open(t.Context(), path, Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	wantVerified(t, s, "rebuilt")
	if through, _ := indexMark(t, s); through != id {
		t.Errorf("mark %d after the rebuild, want %d", through, id)
	}
}
