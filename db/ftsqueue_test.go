package db

import (
	"bytes"
	"context"
	"fmt"
	"os"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
)

// ftsConsistent runs FTS5's integrity check of both indexes (a
// contentless index is checked against itself: its postings, its
// structure) and checks that each counts one document per message.
func ftsConsistent(t *testing.T, s *Store) {
	t.Helper()
	err := s.w.write(t.Context(), s.opts.WritePatience, func(ctx context.Context, tx genDBTX) error {
		for _, stmt := range []string{
			"INSERT INTO messages_fts (messages_fts, rank) VALUES ('integrity-check', 1)",
			"INSERT INTO messages_fts_trigram (messages_fts_trigram, rank) VALUES ('integrity-check', 1)",
		} {
			if _, err := tx.ExecContext(ctx, stmt); err != nil {
				return fmt.Errorf("%s: %w", stmt, err)
			}
		}
		return nil
	})
	if err != nil {
		t.Fatalf("full-text index out of step with the messages: %v", err)
	}
	// The check above does not count documents: a 'delete' of a row the
	// index never held leaves its postings alone but miscounts the
	// documents bm25 divides by (the averages record, id 1, starts with
	// the document count as a varint).
	for _, index := range ftsIndexes {
		var block []byte
		var rows int64
		if err := s.readers.QueryRowContext(t.Context(), "SELECT block FROM "+index+"_data WHERE id = 1").Scan(&block); err != nil {
			t.Fatal(err)
		}
		if err := s.readers.QueryRowContext(t.Context(), "SELECT COUNT(*) FROM messages").Scan(&rows); err != nil {
			t.Fatal(err)
		}
		if docs, _ := sqliteVarint(block); docs != uint64(rows) {
			t.Fatalf("%s counts %d documents, messages holds %d rows", index, docs, rows)
		}
	}
}

// queued counts the changes waiting for the indexes: the messages past
// the mark, fts_pending (edited rows to index again) and fts_deleted (old
// text to forget).
func queued(t *testing.T, s *Store) int {
	t.Helper()
	var n int
	if err := s.readers.QueryRowContext(t.Context(), `SELECT (SELECT COUNT(*) FROM fts_pending) + (SELECT COUNT(*) FROM fts_deleted)
		+ (SELECT COUNT(*) FROM messages WHERE id > (SELECT indexed_through FROM fts_mark))`).Scan(&n); err != nil {
		t.Fatal(err)
	}
	return n
}

func searchContents(t *testing.T, s *Store, q string) []string {
	t.Helper()
	hits, err := s.Search(t.Context(), q, SearchOptions{})
	if err != nil {
		t.Fatalf("search %q: %v", q, err)
	}
	out := []string{}
	for _, h := range hits {
		out = append(out, h.SessionID+"/"+fmt.Sprint(h.MessageID))
	}
	return out
}

// Rows inserted, updated and deleted inside one transaction, before the
// indexer reaches them: the row waits past the mark, and its update or
// delete queues nothing (no index holds a row past the mark); Search
// finds the row's current text at once, and once indexed the index is
// exactly in step.
func TestFTSQueue_ChangesBeforeCommit(t *testing.T) {
	for _, tc := range []struct {
		name        string
		sql         []string // after inserting message 1 ('alpha') in the same transaction
		findOld     bool
		findNew     bool
		wantEntries int
	}{
		{"insert only", nil, true, false, 1},
		{"insert then update", []string{"UPDATE messages SET content = 'omega' WHERE id = 1"}, false, true, 1},
		{"insert then an update that changes nothing", []string{"UPDATE messages SET content = 'alpha' WHERE id = 1"}, true, false, 1},
		{"insert then delete", []string{"DELETE FROM messages WHERE id = 1"}, false, false, 0},
		{"insert, update, delete", []string{"UPDATE messages SET content = 'omega' WHERE id = 1", "DELETE FROM messages WHERE id = 1"}, false, false, 0},
	} {
		t.Run(tc.name, func(t *testing.T) {
			s := openTestStore(t, Options{})
			s.w.ix.paused.Store(true)
			newTestSession(t, s, "q")
			err := s.w.write(t.Context(), s.opts.WritePatience, func(ctx context.Context, tx genDBTX) error {
				if _, err := tx.ExecContext(ctx, "INSERT INTO messages (id, session_id, role, content, created_at) VALUES (1, 'q', 'user', 'alpha', 0)"); err != nil {
					return err
				}
				for _, stmt := range tc.sql {
					if _, err := tx.ExecContext(ctx, stmt); err != nil {
						return err
					}
				}
				return nil
			})
			if err != nil {
				t.Fatal(err)
			}
			if n := queued(t, s); n != tc.wantEntries {
				t.Errorf("%d entries queued after the commit, want %d", n, tc.wantEntries)
			}
			for _, stage := range []string{"queued", "indexed"} {
				if stage == "indexed" {
					indexNow(t, s)
					if n := queued(t, s); n != 0 {
						t.Errorf("%d rows still queued after IndexNow", n)
					}
					ftsConsistent(t, s)
				}
				if got := len(searchContents(t, s, "alpha")) == 1; got != tc.findOld {
					t.Errorf("%s: finds the inserted text: %v, want %v", stage, got, tc.findOld)
				}
				if got := len(searchContents(t, s, "omega")) == 1; got != tc.findNew {
					t.Errorf("%s: finds the updated text: %v, want %v", stage, got, tc.findNew)
				}
			}
		})
	}
}

// A batch of appends is searchable the moment each caller is acknowledged,
// and a later update and delete of the rows, queued or indexed, keep the
// index in step.
func TestFTSQueue_SearchableAtEveryCommit(t *testing.T) {
	for _, indexFirst := range []bool{false, true} {
		t.Run(fmt.Sprint("indexed before the update: ", indexFirst), func(t *testing.T) {
			searchableAtEveryCommit(t, indexFirst)
		})
	}
}

func searchableAtEveryCommit(t *testing.T, indexFirst bool) {
	s := openTestStore(t, Options{})
	s.w.ix.paused.Store(true)
	newTestSession(t, s, "q")
	ids, err := s.AppendMessages(t.Context(), "q", []NewMessage{
		{Role: RoleUser, Content: "first zebra"}, {Role: RoleAssistant, Content: "second zebra"}, {Role: RoleUser, Content: "third giraffe"},
	})
	if err != nil {
		t.Fatal(err)
	}
	if got, want := searchContents(t, s, "zebra"), []string{fmt.Sprint("q/", ids[1]), fmt.Sprint("q/", ids[0])}; len(got) != 2 {
		t.Errorf("zebra: %v, want both of %v", got, want)
	}
	if got, want := searchContents(t, s, "iraf"), []string{fmt.Sprint("q/", ids[2])}; !cmp.Equal(got, want) {
		t.Errorf("trigram iraf: %v, want %v", got, want)
	}
	if indexFirst {
		indexNow(t, s)
	}
	if err := s.w.write(t.Context(), s.opts.WritePatience, func(ctx context.Context, tx genDBTX) error {
		_, err := tx.ExecContext(ctx, "UPDATE messages SET content = 'third okapi' WHERE id = ?", ids[2])
		return err
	}); err != nil {
		t.Fatal(err)
	}
	if got := searchContents(t, s, "okapi"); len(got) != 1 {
		t.Errorf("okapi after the update: %v, want the updated row", got)
	}
	if got := searchContents(t, s, "giraffe"); len(got) != 0 {
		t.Errorf("giraffe after the update: %v, want none", got)
	}
	if _, err := s.DeleteSession(t.Context(), "q", DeleteOptions{}); err != nil {
		t.Fatal(err)
	}
	indexNow(t, s)
	ftsConsistent(t, s)
	if got := searchContents(t, s, "zebra"); len(got) != 0 {
		t.Errorf("deleted rows still found: %v", got)
	}
}

// A writer that knows nothing of the queue (another tool inserting rows
// by hand) leaves its rows queued; the background indexer of any open
// store finds and indexes them.
func TestFTSQueue_ForeignInsertIndexedInTheBackground(t *testing.T) {
	s := openTestStore(t, Options{})
	newTestSession(t, s, "q")
	other, err := openDB(s.Path(), kindRepair, 1, "")
	if err != nil {
		t.Fatal(err)
	}
	defer other.Close()
	if _, err := other.ExecContext(t.Context(), "INSERT INTO messages (session_id, role, content, created_at) VALUES ('q', 'user', 'hand written kiwi', 0)"); err != nil {
		t.Fatal(err)
	}
	for deadline := time.Now().Add(10 * time.Second); queued(t, s) > 0 && time.Now().Before(deadline); {
		time.Sleep(10 * time.Millisecond)
	}
	wantForeignRowIndexed(t, s, "kiwi")
}

// indexNow indexes everything queued.
func indexNow(t *testing.T, s *Store) {
	t.Helper()
	if err := s.IndexNow(t.Context()); err != nil {
		t.Fatal(err)
	}
}

// wantForeignRowIndexed checks that the queue is empty, that word finds
// the one row written behind sessiondb's back, and that the indexes match
// the messages.
func wantForeignRowIndexed(t *testing.T, s *Store, word string) {
	t.Helper()
	if n := queued(t, s); n != 0 {
		t.Errorf("%d rows still queued", n)
	}
	if got := searchContents(t, s, word); len(got) != 1 {
		t.Errorf("%s: %v, want the row written behind sessiondb's back", word, got)
	}
	ftsConsistent(t, s)
}

// reopenAfterForeignSQL makes a store with session "q", closes it, runs
// stmts on the file behind sessiondb's back, and opens it again.
func reopenAfterForeignSQL(t *testing.T, stmts ...string) *Store {
	t.Helper()
	s := openTestStore(t, Options{})
	newTestSession(t, s, "q")
	path := s.Path()
	s.Close()
	damage(t, path, stmts...)
	s, err := Open(t.Context(), path, Options{})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { s.Close() })
	return s
}

// Open indexes rows a queue-unaware writer left behind, before any write.
func TestFTSQueue_OpenIndexesForeignRows(t *testing.T) {
	s := reopenAfterForeignSQL(t, "INSERT INTO messages (session_id, role, content, created_at) VALUES ('q', 'user', 'left behind papaya', 0)")
	wantForeignRowIndexed(t, s, "papaya")
}

// Salvage copies rows into a fresh file, where they are past its mark:
// the repaired file must come back fully indexed, the mark at its last
// message, nothing waiting.
func TestFTSQueue_SalvageIndexesCopiedRows(t *testing.T) {
	path := filledStore(t)
	fi, err := os.Stat(path)
	if err != nil {
		t.Fatal(err)
	}
	if err := os.Truncate(path, fi.Size()/2); err != nil {
		t.Fatal(err)
	}
	r, err := Repair(t.Context(), path, RepairOptions{Logger: testLogger(new(bytes.Buffer))})
	if err != nil || r.Strategy != "salvage" {
		t.Fatalf("Repair = %+v, %v; want the salvage strategy", r, err)
	}
	d, err := openDB(path, kindRepair, 1, "")
	if err != nil {
		t.Fatal(err)
	}
	var pending, unindexed int
	if err := d.QueryRowContext(t.Context(), `SELECT (SELECT COUNT(*) FROM fts_pending) + (SELECT COUNT(*) FROM fts_deleted)
		+ (SELECT COUNT(*) FROM messages WHERE id > (SELECT indexed_through FROM fts_mark))
		+ (SELECT COUNT(*) FROM fts_mark WHERE indexed_through <> (SELECT MAX(id) FROM messages))`).Scan(&pending); err != nil {
		t.Fatal(err)
	}
	if err := d.QueryRowContext(t.Context(), `SELECT COUNT(*) FROM messages
		WHERE id NOT IN (SELECT id FROM messages_fts_docsize)`).Scan(&unindexed); err != nil {
		t.Fatal(err)
	}
	d.Close()
	if pending != 0 || unindexed != 0 {
		t.Errorf("after salvage: %d changes waiting (or the mark not at the last message), %d messages not indexed; want 0 and 0", pending, unindexed)
	}
	s, err := Open(t.Context(), path, Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	ftsConsistent(t, s)
}

// Index damage that shows up as an ordinary error when the queue is
// indexed (the word index's structure record zeroed reads as an empty
// index, so its next segment takes id 1 and clashes with the segment 1 it
// forgot, which filledStore's index always holds) must not stop appends or
// indexing: the index is marked stale, and the next open rebuilds it. The
// damage comes while the store is open: at Open it would be found first
// (TestFTSState_OpenRebuildsAnIndexThatForgotItsSegments).
func TestFTSQueue_IndexDamageAtCommitKeepsAppendsGoing(t *testing.T) {
	path := filledStore(t)
	s, err := Open(t.Context(), path, Options{Logger: testLogger(new(bytes.Buffer))})
	if err != nil {
		t.Fatal(err)
	}
	damage(t, path, "UPDATE messages_fts_data SET block = zeroblob(length(block)) WHERE id = 10")
	for i := range 3 {
		if _, err := s.AppendMessage(t.Context(), "b", NewMessage{Role: RoleUser, Content: fmt.Sprint("zanzibar ", i)}); err != nil {
			t.Fatalf("append %d over a damaged index: %v", i, err)
		}
	}
	indexNow(t, s)
	if _, err := s.Meta(t.Context(), metaFTSStale); err != nil {
		t.Errorf("the index was not marked stale: %v", err)
	}
	if err := s.Close(); err != nil {
		t.Fatal(err)
	}
	s, err = Open(t.Context(), path, Options{Logger: testLogger(new(bytes.Buffer))})
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	if got := searchContents(t, s, "zanzibar"); len(got) != 3 {
		t.Errorf("after the rebuild at open, zanzibar: %v, want the 3 appends", got)
	}
	ftsConsistent(t, s)
}

// A row indexed by hand that leaves the queue alone must not be indexed a
// second time when the indexer reaches its queue entry.
func TestFTSQueue_HandIndexedRowIsIndexedOnce(t *testing.T) {
	s := reopenAfterForeignSQL(t,
		"INSERT INTO messages (session_id, role, content, created_at) VALUES ('q', 'user', 'indexed by hand mango', 0)",
		"INSERT INTO messages_fts (rowid, content, tool_name, tool_text) SELECT id, content, tool_name, tool_text FROM messages",
		"INSERT INTO messages_fts_trigram (rowid, content, tool_text) SELECT id, content, tool_text FROM messages")
	indexNow(t, s)
	wantForeignRowIndexed(t, s, "mango")
}

// A file from before migration 4 (no queue), or from before migration 11
// (a queue, no fts_deleted, an external-content index), that Repair mends
// by rebuilding its index keeps its own triggers and tables.
func TestFTSQueue_RepairOfAnOlderFile(t *testing.T) {
	for _, version := range []int64{3, 10} {
		t.Run(fmt.Sprint("version ", version), func(t *testing.T) {
			path := filledStore(t)
			d, err := openDB(path, kindRepair, 1, "")
			if err != nil {
				t.Fatal(err)
			}
			p, err := newMigrations(d)
			if err != nil {
				t.Fatal(err)
			}
			if _, err := p.DownTo(t.Context(), version); err != nil {
				t.Fatal(err)
			}
			d.Close()
			damage(t, path, "UPDATE messages_fts_data SET block = zeroblob(length(block)) WHERE id > 10")
			r, err := Repair(t.Context(), path, RepairOptions{Logger: testLogger(new(bytes.Buffer))})
			if err != nil {
				t.Fatal(err)
			}
			if r.Strategy == "salvage" || r.Strategy == "none" {
				t.Errorf("Repair of a version-%d file used %q; want an index rebuild", version, r.Strategy)
			}
			v, err := Verify(t.Context(), path)
			if err != nil || v.Health != HealthVerified {
				t.Errorf("after repair: %s %v %s %v", v.Health, v.Details, v.FTS, err)
			}
		})
	}
}

// Open finds rows queued over a damaged index: indexing them marks the
// index stale, and the same Open rebuilds it.
func TestFTSQueue_OpenRebuildsWhenTheQueueFindsDamage(t *testing.T) {
	path := filledStore(t)
	damage(t, path,
		"INSERT INTO messages (session_id, role, content, created_at) VALUES ('a', 'user', 'queued over damage quince', 0)",
		"UPDATE messages_fts_data SET block = zeroblob(length(block)) WHERE id = 10")
	s, err := Open(t.Context(), path, Options{Logger: testLogger(new(bytes.Buffer))})
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	if _, err := s.Meta(t.Context(), metaFTSStale); err == nil {
		t.Error("Open left the index marked stale")
	}
	wantForeignRowIndexed(t, s, "quince")
}

// Repair's drop-and-vacuum strategy on a version-10 file recreates the
// file's own external-content indexes, which its triggers and its own
// build expect (a contentless index refuses 'rebuild'), and fills them.
func TestFTSQueue_DropFTSVacuumKeepsAnOlderFilesIndexes(t *testing.T) {
	path := filledStore(t)
	migrateDownTo(t, path, 10)
	d, err := openDB(path, kindRepair, 1, "")
	if err != nil {
		t.Fatal(err)
	}
	defer d.Close()
	if err := repairDropFTSVacuum(t.Context(), d); err != nil {
		t.Fatal(err)
	}
	for _, index := range ftsIndexes {
		var def string
		if err := d.QueryRowContext(t.Context(), "SELECT sql FROM sqlite_schema WHERE name = ?", index).Scan(&def); err != nil {
			t.Fatal(err)
		}
		if !strings.Contains(def, "content = 'messages'") {
			t.Errorf("%s recreated as %q, want the version-10 external-content index", index, def)
		}
		if _, err := d.ExecContext(t.Context(), "INSERT INTO "+index+" ("+index+") VALUES ('rebuild')"); err != nil {
			t.Errorf("%s: the version-10 rebuild: %v", index, err)
		}
	}
	d.Close()
	if v, err := Verify(t.Context(), path); err != nil || v.Health != HealthVerified || v.FTS != "ok" {
		t.Errorf("after the strategy: %s %v %q %v", v.Health, v.Details, v.FTS, err)
	}
}
