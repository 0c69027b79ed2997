package db

// Deletes and edits of rows the indexes already hold (migration 11): they
// commit without touching the indexes, Search answers from the rows as
// they are now, and the indexer brings the indexes in step.

import (
	"context"
	"fmt"
	"math/rand/v2"
	"slices"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/google/go-cmp/cmp/cmpopts"

	"github.com/sessiondb/sessiondb/db/gen"
	"github.com/sessiondb/sessiondb/internal/searchtext"
)

// idsFound returns the message ids a search returns, in its order.
func idsFound(t *testing.T, s *Store, query string, opts SearchOptions) []int64 {
	t.Helper()
	hits, err := s.Search(t.Context(), query, opts)
	if err != nil {
		t.Fatalf("search %q: %v", query, err)
	}
	ids := []int64{}
	for _, h := range hits {
		ids = append(ids, h.MessageID)
	}
	return ids
}

// appendMessage appends a user message and returns its id.
func appendMessage(t *testing.T, s *Store, session, content string) int64 {
	t.Helper()
	id, err := s.AppendMessage(t.Context(), session, NewMessage{Role: RoleUser, Content: content})
	if err != nil {
		t.Fatal(err)
	}
	return id
}

// docsizeIDs lists the rows an index holds.
func docsizeIDs(t *testing.T, s *Store, index string) []int64 {
	t.Helper()
	return queryIDs(t, s.readers, "SELECT id FROM "+index+"_docsize ORDER BY id")
}

// queryIDs runs a query of one integer column and returns its values
// (empty, not nil, for none).
func queryIDs(t *testing.T, d gen.DBTX, query string, args ...any) []int64 {
	t.Helper()
	rows, err := d.QueryContext(t.Context(), query, args...)
	if err != nil {
		t.Fatal(err)
	}
	defer rows.Close()
	ids := []int64{}
	for rows.Next() {
		var id int64
		if err := rows.Scan(&id); err != nil {
			t.Fatal(err)
		}
		ids = append(ids, id)
	}
	if err := rows.Err(); err != nil {
		t.Fatal(err)
	}
	return ids
}

func wantVerified(t *testing.T, s *Store, stage string) {
	t.Helper()
	r, err := Verify(t.Context(), s.Path())
	if err != nil || r.Health != HealthVerified || r.FTS != "ok" {
		t.Errorf("%s: Verify = %s %v %q, %v; want verified, ok", stage, r.Health, r.Details, r.FTS, err)
	}
}

// An indexed row edited twice, each time before the indexer runs: Search
// finds it by its new text at once — by words and by substrings, in every
// sort, once — and never by the text the index still holds; Verify counts
// it as queued; and once indexed, the index holds the new text only.
func TestFTSQueue_EditOfAnIndexedRow(t *testing.T) {
	s := openTestStore(t, Options{ManualIndexing: true})
	newTestSession(t, s, "q")
	edited := appendMessage(t, s, "q", "alpha shared kumquat")
	other := appendMessage(t, s, "q", "alpha shared other")
	indexNow(t, s)
	sorts := map[string]SearchOptions{"relevance": {}, "newest": {Sort: SortNewest}, "oldest": {Sort: SortOldest}}
	old := "kumquat"
	for round, word := range []string{"zucchini", "rhubarb"} {
		text := "omega shared " + word
		err := s.w.write(t.Context(), s.opts.WritePatience, func(ctx context.Context, tx genDBTX) error {
			_, err := tx.ExecContext(ctx, "UPDATE messages SET content = ? WHERE id = ?", text, edited)
			return err
		})
		if err != nil {
			t.Fatal(err)
		}
		for _, stage := range []string{"queued", "indexed"} {
			if stage == "indexed" {
				indexNow(t, s)
				ftsConsistent(t, s)
				if n := queued(t, s); n != 0 {
					t.Errorf("round %d: %d entries still queued after IndexNow", round, n)
				}
			}
			wantVerified(t, s, fmt.Sprintf("round %d, %s", round, stage))
			for name, opts := range sorts {
				for _, tc := range []struct {
					query string
					want  []int64
				}{
					{old, []int64{}},                   // the index's old words
					{old[1:5], []int64{}},              // and its old trigrams
					{word, []int64{edited}},            // the new text, by words
					{word[1:6], []int64{edited}},       // and by substrings
					{"shared", []int64{edited, other}}, // in both texts: found once
				} {
					got := idsFound(t, s, tc.query, opts) // compared oldest first
					if opts.Sort == SortRelevance {
						slices.Sort(got)
					}
					if opts.Sort == SortNewest {
						slices.Reverse(got)
					}
					if diff := cmp.Diff(tc.want, got); diff != "" {
						t.Errorf("round %d, %s, %s: search %q (-want +got):\n%s", round, stage, name, tc.query, diff)
					}
				}
			}
		}
		old = word
	}
}

// A session of indexed messages deleted: the delete queues their old
// text and touches neither index; Search never returns them, Verify
// counts them as queued, and the indexer makes both indexes forget them.
func TestFTSQueue_DeleteOfIndexedRows(t *testing.T) {
	s := openTestStore(t, Options{ManualIndexing: true})
	newTestSession(t, s, "gone")
	newTestSession(t, s, "kept")
	for i := range 50 {
		appendMessage(t, s, "gone", fmt.Sprint("papaya gone ", i))
	}
	kept := appendMessage(t, s, "kept", "papaya kept")
	indexNow(t, s)
	before := docsizeIDs(t, s, "messages_fts")
	if _, err := s.DeleteSession(t.Context(), "gone", DeleteOptions{ExpectedIDs: []string{"gone"}}); err != nil {
		t.Fatal(err)
	}
	if n := queued(t, s); n != 50 {
		t.Errorf("%d entries queued by the delete, want 50", n)
	}
	for _, index := range ftsIndexes {
		if diff := cmp.Diff(before, docsizeIDs(t, s, index)); diff != "" {
			t.Errorf("%s changed at the delete (-before +after):\n%s", index, diff)
		}
	}
	for _, stage := range []string{"queued", "indexed"} {
		if stage == "indexed" {
			indexNow(t, s)
			ftsConsistent(t, s)
			for _, index := range ftsIndexes {
				if diff := cmp.Diff([]int64{kept}, docsizeIDs(t, s, index)); diff != "" {
					t.Errorf("%s after indexing (-want +got):\n%s", index, diff)
				}
			}
		}
		wantVerified(t, s, stage)
		for _, q := range []string{"papaya", "apay", "gone"} {
			want := []int64{kept}
			if q == "gone" {
				want = []int64{}
			}
			if diff := cmp.Diff(want, idsFound(t, s, q, SearchOptions{Sort: SortNewest})); diff != "" {
				t.Errorf("%s: search %q (-want +got):\n%s", stage, q, diff)
			}
		}
	}
}

// A file from version 10 — external-content indexes, rows left queued by
// an older build, a row deleted while queued — is carried forward: the
// indexes are recreated contentless and filled from every row, both queues
// start empty, and deletes and edits from then on go through them.
func TestOpen_MigratesTheIndexesToContentless(t *testing.T) {
	s := openTestStore(t, Options{ManualIndexing: true})
	newTestSession(t, s, "a")
	for i := range 20 {
		appendMessage(t, s, "a", fmt.Sprint("walrus indexed ", i))
	}
	indexNow(t, s)
	path := s.Path()
	s.Close()
	migrateDownTo(t, path, 10)
	damage(t, path,
		"INSERT INTO messages (session_id, role, content, created_at) VALUES ('a', 'user', 'walrus queued by an older build', 0)",
		"DELETE FROM messages WHERE id = 3")
	s, err := Open(t.Context(), path, Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	var def string
	if err := s.readers.QueryRowContext(t.Context(), "SELECT sql FROM sqlite_schema WHERE name = 'messages_fts_trigram'").Scan(&def); err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(def, "content = ''") {
		t.Errorf("after the migration the trigram index is %q, want it contentless", def)
	}
	if n := queued(t, s); n != 0 {
		t.Errorf("%d entries queued after the migration, want 0", n)
	}
	ftsConsistent(t, s)
	wantVerified(t, s, "migrated")
	if got := idsFound(t, s, "walrus", SearchOptions{}); len(got) != 20 {
		t.Errorf("walrus: %d hits, want the 19 rows left and the queued one", len(got))
	}
	if _, err := s.DeleteSession(t.Context(), "a", DeleteOptions{ExpectedIDs: []string{"a"}}); err != nil {
		t.Fatal(err)
	}
	indexNow(t, s)
	for _, index := range ftsIndexes {
		if ids := docsizeIDs(t, s, index); len(ids) != 0 {
			t.Errorf("%s still holds %v after the session was deleted", index, ids)
		}
	}
}

// While a large delete's old text is forgotten, slice by slice, new
// messages are indexed in the same slices (half of each), and a row edited
// behind the delete waits, queued, until its old text is forgotten first.
func TestFTSQueue_NewRowsIndexedWhileADeleteIsForgotten(t *testing.T) {
	s := openTestStore(t, Options{ManualIndexing: true})
	newTestSession(t, s, "gone")
	newTestSession(t, s, "kept")
	for i := range indexMaxSlice {
		appendMessage(t, s, "gone", fmt.Sprint("papaya gone ", i))
	}
	edited := appendMessage(t, s, "kept", "kumquat before the edit")
	indexNow(t, s)
	if _, err := s.DeleteSession(t.Context(), "gone", DeleteOptions{ExpectedIDs: []string{"gone"}}); err != nil {
		t.Fatal(err)
	}
	err := s.w.write(t.Context(), s.opts.WritePatience, func(ctx context.Context, tx genDBTX) error {
		_, err := tx.ExecContext(ctx, "UPDATE messages SET content = 'rhubarb after the edit' WHERE id = ?", edited)
		return err
	})
	if err != nil {
		t.Fatal(err)
	}
	fresh := []int64{appendMessage(t, s, "kept", "fresh one"), appendMessage(t, s, "kept", "fresh two")}
	// Half the slice forgets, the other half takes the two new rows (the
	// edited row waits behind its old text, queued last).
	if n, err := s.w.indexOnce(t.Context(), false); err != nil || n != indexMaxSlice/2+len(fresh) {
		t.Fatalf("one slice took %d entries, %v; want %d", n, err, indexMaxSlice/2+len(fresh))
	}
	indexed := docsizeIDs(t, s, "messages_fts")
	for _, id := range fresh {
		if !slices.Contains(indexed, id) {
			t.Errorf("new message %d not indexed by the first slice of the delete's", id)
		}
	}
	if !slices.Contains(indexed, edited) {
		t.Errorf("the edited row %d left the index before its old text was forgotten", edited)
	}
	for _, q := range []string{"kumquat", "rhubarb"} {
		want := []int64{}
		if q == "rhubarb" {
			want = []int64{edited}
		}
		if diff := cmp.Diff(want, idsFound(t, s, q, SearchOptions{})); diff != "" {
			t.Errorf("between slices, search %q (-want +got):\n%s", q, diff)
		}
	}
	indexNow(t, s)
	ftsConsistent(t, s)
	wantVerified(t, s, "indexed")
	if diff := cmp.Diff([]int64{edited}, idsFound(t, s, "rhubarb", SearchOptions{})); diff != "" {
		t.Errorf("indexed, search rhubarb (-want +got):\n%s", diff)
	}
}

// changeWords is the vocabulary of TestFTSQueue_RandomChangesMatchTheText:
// no word is a substring of another, so the trigram index and the word
// index match the same rows.
var changeWords = strings.Fields("alpha bravo charlie delta echo foxtrot")

// Random appends, edits of content and of tool text, deletes, rewinds and
// their undoing, and transactions that insert, edit twice, edit another
// row and maybe delete, interleaved with index slices of one to three
// entries run by either of two Stores on the file, with a relevance window
// of two: every few steps each word is searched in every sort, whole and
// in pages of three, and must find exactly the rows whose text holds it
// now (rewound ones aside), with the same relevance pages whether the
// window reads the messages rows or not; Verify passes throughout; and
// once indexed, each index's own MATCH agrees too.
func TestFTSQueue_RandomChangesMatchTheText(t *testing.T) {
	setRankWindow(t, 2)
	for seed := range uint64(4) {
		t.Run(fmt.Sprint("seed ", seed), func(t *testing.T) {
			rng := rand.New(rand.NewPCG(seed, 16))
			text := func() string {
				w := make([]string, 1+rng.IntN(3))
				for i := range w {
					w[i] = changeWords[rng.IntN(len(changeWords))]
				}
				return strings.Join(w, " ")
			}
			s := openTestStore(t, Options{ManualIndexing: true})
			other, err := Open(t.Context(), s.Path(), Options{ManualIndexing: true})
			if err != nil {
				t.Fatal(err)
			}
			defer other.Close()
			newTestSession(t, s, "q")
			exec := func(fn func(ctx context.Context, tx genDBTX) error) {
				t.Helper()
				if err := s.w.write(t.Context(), s.opts.WritePatience, fn); err != nil {
					t.Fatal(err)
				}
			}
			sql := func(q string, args ...any) func(ctx context.Context, tx genDBTX) error {
				return func(ctx context.Context, tx genDBTX) error {
					_, err := tx.ExecContext(ctx, q, args...)
					return err
				}
			}
			var ids []int64
			for step := range 120 {
				switch op := rng.IntN(13); {
				case op < 3 || len(ids) == 0:
					ids = append(ids, appendMessage(t, s, "q", text()))
				case op < 5:
					exec(sql("UPDATE messages SET content = ? WHERE id = ?", text(), ids[rng.IntN(len(ids))]))
				case op < 6:
					exec(sql("UPDATE messages SET tool_text = ? WHERE id = ?", text(), ids[rng.IntN(len(ids))]))
				case op < 7:
					del, edited := rng.IntN(2) == 0, ids[rng.IntN(len(ids))]
					first, second := text(), text()
					var id int64
					exec(func(ctx context.Context, tx genDBTX) error {
						if err := tx.QueryRowContext(ctx, "INSERT INTO messages (session_id, role, content, created_at) VALUES ('q', 'user', ?, 0) RETURNING id", first).Scan(&id); err != nil {
							return err
						}
						for _, f := range []func(context.Context, genDBTX) error{
							sql("UPDATE messages SET content = ? WHERE id = ?", second, id),
							sql("UPDATE messages SET content = content || ' echo' WHERE id = ?", edited),
						} {
							if err := f(ctx, tx); err != nil {
								return err
							}
						}
						if del {
							return sql("DELETE FROM messages WHERE id = ?", id)(ctx, tx)
						}
						return nil
					})
					if !del {
						ids = append(ids, id)
					}
				case op < 8:
					i := rng.IntN(len(ids))
					exec(sql("DELETE FROM messages WHERE id = ?", ids[i]))
					ids = slices.Delete(ids, i, i+1)
				case op < 9:
					// Rewound rows are never returned; a rewind changes no
					// text, so the queue does not see it.
					exec(sql("UPDATE messages SET state = CASE state WHEN 'rewound' THEN 'active' ELSE 'rewound' END WHERE id = ?", ids[rng.IntN(len(ids))]))
				default:
					by := s
					if rng.IntN(2) == 0 {
						by = other
					}
					var n int
					if err := by.w.write(t.Context(), by.opts.WritePatience, indexSlice(1+rng.IntN(3), &n)); err != nil {
						t.Fatal(err)
					}
				}
				if step%8 == 0 {
					wantSearchMatchesTheText(t, s, fmt.Sprint("step ", step))
					wantSameRelevanceWindows(t, s, fmt.Sprint("step ", step))
					wantVerified(t, s, fmt.Sprint("step ", step))
				}
			}
			wantSearchMatchesTheText(t, s, "queued")
			indexNow(t, other)
			ftsConsistent(t, s)
			wantSearchMatchesTheText(t, s, "indexed")
			for _, w := range changeWords {
				// The word index holds the words; the trigram index, without
				// positions, which rows hold each trigram it is asked for.
				tris, _, _ := searchtext.Terms{w}.TrigramMatch()
				for index, expr := range map[string]string{"messages_fts": w, "messages_fts_trigram": tris} {
					want := rowsHolding(t, s, w)
					if index == "messages_fts_trigram" {
						want = rowsHoldingTrigrams(t, s, tris)
					}
					got := queryIDs(t, s.readers, "SELECT rowid FROM "+index+" WHERE "+index+" MATCH ? ORDER BY rowid", expr)
					if diff := cmp.Diff(want, got, cmpopts.EquateEmpty()); diff != "" {
						t.Errorf("%s MATCH %s (-text +index):\n%s", index, expr, diff)
					}
				}
			}
			wantVerified(t, s, "indexed")
		})
	}
}

// rowsHolding lists, oldest first, the messages whose content or tool
// text holds word, read from the rows themselves.
func rowsHolding(t *testing.T, s *Store, word string) []int64 {
	t.Helper()
	return rowsWhere(t, s, func(content, toolText string) bool {
		return slices.Contains(strings.Fields(content+" "+toolText), word)
	})
}

// rowsHoldingTrigrams returns the ids of the messages that hold, in their
// content or tool text, each trigram of a trigram-index expression (the
// quoted trigrams of Terms.TrigramMatch), folded as the index folds.
func rowsHoldingTrigrams(t *testing.T, s *Store, expr string) []int64 {
	t.Helper()
	fold := func(s string) string {
		var b strings.Builder
		searchtext.TrigramText(&b, s)
		return b.String()
	}
	tris := strings.Fields(strings.ReplaceAll(expr, `"`, ""))
	return rowsWhere(t, s, func(content, toolText string) bool {
		content, toolText = fold(content), fold(toolText)
		return !slices.ContainsFunc(tris, func(tri string) bool {
			tri = fold(tri)
			return !strings.Contains(content, tri) && !strings.Contains(toolText, tri)
		})
	})
}

// rowsWhere returns the ids of the messages whose content and tool text
// hold, in id order.
func rowsWhere(t *testing.T, s *Store, hold func(content, toolText string) bool) []int64 {
	t.Helper()
	rows, err := s.readers.QueryContext(t.Context(), "SELECT id, content, COALESCE(tool_text, '') FROM messages ORDER BY id")
	if err != nil {
		t.Fatal(err)
	}
	defer rows.Close()
	var ids []int64
	for rows.Next() {
		var id int64
		var content, toolText string
		if err := rows.Scan(&id, &content, &toolText); err != nil {
			t.Fatal(err)
		}
		if hold(content, toolText) {
			ids = append(ids, id)
		}
	}
	return ids
}

// wantSameRelevanceWindows pages through a relevance search of each of
// changeWords, in pages of three, with the word route's window read
// without the messages rows (MessageSearchWordsRankUnfiltered) and with
// them, and wants the same hits in the same order.
func wantSameRelevanceWindows(t *testing.T, s *Store, stage string) {
	t.Helper()
	before := unfilteredWindows.Load()
	pages := func(unfiltered bool) map[string][]int64 {
		old := windowUnfiltered
		windowUnfiltered = unfiltered
		defer func() { windowUnfiltered = old }()
		out := map[string][]int64{}
		for _, w := range changeWords {
			out[w] = pageAll(t, s, w, SearchOptions{Sort: SortRelevance}, 3)
		}
		return out
	}
	filtered := pages(false)
	if n := unfilteredWindows.Load(); n != before {
		t.Fatalf("%s: %d windows read without the rows while that was switched off", stage, n-before)
	}
	unfiltered := pages(true)
	if unfilteredWindows.Load() == before {
		t.Fatalf("%s: no window was read without the rows", stage)
	}
	if diff := cmp.Diff(filtered, unfiltered, cmpopts.EquateEmpty()); diff != "" {
		t.Fatalf("%s: relevance pages (-window reading rows +window without them):\n%s", stage, diff)
	}
}

// wantSearchMatchesTheText searches each of changeWords in every sort,
// whole and in pages of three, and wants exactly rowsHolding but the
// rewound ones, each once.
func wantSearchMatchesTheText(t *testing.T, s *Store, stage string) {
	t.Helper()
	rewound := queryIDs(t, s.readers, "SELECT id FROM messages WHERE state = 'rewound'")
	for _, w := range changeWords {
		// Search never returns a rewound message.
		want := slices.DeleteFunc(rowsHolding(t, s, w), func(id int64) bool { return slices.Contains(rewound, id) })
		for _, sort := range []SearchSort{SortNewest, SortOldest, SortRelevance} {
			for _, limit := range []int{MaxSearchLimit, 3} {
				var got []int64
				for offset := 0; ; offset += limit {
					page := idsFound(t, s, w, SearchOptions{Sort: sort, Limit: limit, Offset: offset})
					got = append(got, page...)
					if len(page) < limit {
						break
					}
				}
				switch sort {
				case SortRelevance:
					slices.Sort(got)
				case SortNewest:
					slices.Reverse(got)
				}
				if diff := cmp.Diff(want, got, cmpopts.EquateEmpty()); diff != "" {
					t.Fatalf("%s: search %q, %v, pages of %d (-text +search):\n%s", stage, w, sort, limit, diff)
				}
			}
		}
	}
}
