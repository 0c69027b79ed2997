package db

import (
	"fmt"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/google/go-cmp/cmp/cmpopts"

	"github.com/sessiondb/sessiondb/internal/searchtext"
)

// A file from version 12 with changes still queued — an indexed row
// edited, one deleted, one past the mark, a row an older build queued and
// never indexed then deleted (its text copied to fts_deleted all the
// same), an indexed row queued again without its old text — is carried
// forward: the
// trigram index is recreated without positions holding exactly what the
// old one held, so the queue applies to it as it would have to the old
// one, and Search, the index and Verify agree with the text before and
// after it is applied. Going back down (version 12's positional index)
// does the same.
func TestOpen_MigratesTheTrigramIndexWithItsQueue(t *testing.T) {
	s := openTestStore(t, Options{ManualIndexing: true})
	newTestSession(t, s, "a")
	var ids []int64
	for i := range 6 {
		ids = append(ids, appendMessage(t, s, "a", fmt.Sprint("papaya indexed ", i)))
	}
	indexNow(t, s)
	path := s.Path()
	s.Close()
	migrateDownTo(t, path, 12)
	newRow, neverIndexed := ids[5]+2, ids[5]+1
	damage(t, path,
		// Queued by an older build (version 11's insert trigger), below the
		// mark and in no index, then deleted.
		"INSERT INTO messages (session_id, role, content, created_at) VALUES ('a', 'user', 'papaya never indexed', 0)",
		fmt.Sprintf("UPDATE fts_mark SET indexed_through = %d", neverIndexed),
		fmt.Sprintf("INSERT INTO fts_pending (id, queued_at) VALUES (%d, 0)", neverIndexed),
		fmt.Sprintf("DELETE FROM messages WHERE id = %d", neverIndexed),
		// Indexed with its current text, queued again without an old text.
		fmt.Sprintf("INSERT INTO fts_pending (id, queued_at) VALUES (%d, 0)", ids[4]),
		fmt.Sprintf("UPDATE messages SET content = 'mango edited' WHERE id = %d", ids[1]),
		fmt.Sprintf("DELETE FROM messages WHERE id = %d", ids[2]),
		"INSERT INTO messages (session_id, role, content, created_at) VALUES ('a', 'user', 'papaya past the mark', 0)")

	// The migration alone: the new index holds the old one's documents —
	// the edited row's and the deleted row's old text included — and
	// nothing else; the queue is untouched.
	migrateUpTo(t, path, 13)
	d, err := openDB(path, kindReader, 1, "")
	if err != nil {
		t.Fatal(err)
	}
	tris, _, _ := searchtext.Terms{"apay"}.TrigramMatch()
	for _, c := range []struct{ name, trigram, words string }{
		{"documents", "SELECT id FROM messages_fts_trigram_docsize ORDER BY id", "SELECT id FROM messages_fts_docsize ORDER BY id"},
		{"matches", "SELECT rowid FROM messages_fts_trigram('" + tris + "') ORDER BY rowid", "SELECT rowid FROM messages_fts('papaya') ORDER BY rowid"},
	} {
		if diff := cmp.Diff(queryIDs(t, d, c.words), queryIDs(t, d, c.trigram)); diff != "" {
			t.Errorf("after the migration, the trigram index's %s (-word index +trigram index):\n%s", c.name, diff)
		}
	}
	var queue int
	if err := d.QueryRowContext(t.Context(), `SELECT (SELECT COUNT(*) FROM fts_pending) + (SELECT COUNT(*) FROM fts_deleted)
		+ (SELECT COUNT(*) FROM messages WHERE id > (SELECT indexed_through FROM fts_mark))`).Scan(&queue); err != nil {
		t.Fatal(err)
	}
	d.Close()
	if queue != 7 {
		t.Errorf("%d changes queued after the migration, want 7 (the old texts of the edited and the two deleted rows, the edit, the two rows queued again, the new row)", queue)
	}

	s, err = Open(t.Context(), path, Options{ManualIndexing: true})
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	want := map[string][]int64{
		"papaya": {newRow, ids[5], ids[4], ids[3], ids[0]},
		"apay":   {newRow, ids[5], ids[4], ids[3], ids[0]}, // through the trigram index
		"ango":   {ids[1]},
		"dexed":  {ids[5], ids[4], ids[3], ids[0]},
	}
	check := func(stage string) {
		t.Helper()
		wantVerified(t, s, stage)
		for q, w := range want {
			if diff := cmp.Diff(w, idsFound(t, s, q, SearchOptions{Sort: SortNewest})); diff != "" {
				t.Errorf("%s: search %q (-want +got):\n%s", stage, q, diff)
			}
		}
	}
	check("queued")
	indexNow(t, s)
	ftsConsistent(t, s)
	check("indexed")
	for _, q := range []string{"apay", "ango", "dexed"} {
		expr, _, _ := searchtext.Terms{q}.TrigramMatch()
		got := queryIDs(t, s.readers, "SELECT rowid FROM messages_fts_trigram WHERE messages_fts_trigram MATCH ? ORDER BY rowid", expr)
		if diff := cmp.Diff(rowsHoldingTrigrams(t, s, expr), got, cmpopts.EquateEmpty()); diff != "" {
			t.Errorf("the trigram index for %q (-text +index):\n%s", q, diff)
		}
	}
}
