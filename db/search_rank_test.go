package db

// Relevance ranking is bounded to a window (rankWindow): the newest
// matches the search returns at all, ranked, then the older ones newest
// first. These tests pin which rows the window holds and that paging
// visits every hit exactly once. Most shrink the window (setRankWindow) to
// keep their fixtures small; TestSearch_RelevancePagingVisitsEveryHitOnce
// runs at the real size.

import (
	"fmt"
	"slices"
	"strings"
	"testing"

	"github.com/sessiondb/sessiondb/storetest"

	"github.com/google/go-cmp/cmp"
)

// setRankWindow shrinks the ranking window for one test.
func setRankWindow(t *testing.T, n int) {
	old := rankWindow
	rankWindow = n
	t.Cleanup(func() { rankWindow = old })
}

// pageAll pages through a search with the given page size and returns the
// hits' message ids in order, failing on an error or a runaway loop.
func pageAll(t *testing.T, s *Store, query string, opts SearchOptions, size int) []int64 {
	t.Helper()
	var ids []int64
	opts.Limit = size
	for opts.Offset = 0; ; opts.Offset += size {
		hits, err := s.Search(t.Context(), query, opts)
		if err != nil {
			t.Fatalf("Search(%q, offset %d): %v", query, opts.Offset, err)
		}
		for _, h := range hits {
			ids = append(ids, h.MessageID)
		}
		if len(hits) < size {
			return ids
		}
		if opts.Offset > 100*rankWindow {
			t.Fatalf("Search(%q) pages on past offset %d", query, opts.Offset)
		}
	}
}

// rankFixture: "best" (the best match, the oldest), rankWindow fillers
// that tie (same length, one needle each), and "good" (the newest, the
// second best). The window is good and the newest rankWindow-1 fillers;
// m0 and best are past it.
func rankFixture(t *testing.T) *searchFixture {
	f := newSearchFixture(t, Options{})
	ms := []keyedMessage{user("best", "needle needle needle")}
	for i := range rankWindow {
		ms = append(ms, assistant(fmt.Sprint("m", i), fmt.Sprintf("one needle among many other words, number %d of the haystack", i)))
	}
	ms = append(ms, user("good", "needle needle in a short line"))
	f.session(t, NewSession{ID: "w", Source: "cli"}, ms...)
	f.indexed(t)
	return f
}

func TestSearch_RankWindow(t *testing.T) {
	setRankWindow(t, 50)
	f := rankFixture(t)
	fillers := func(from, to int) []string { // m<from> down to m<to>
		var out []string
		for i := from; i >= to; i-- {
			out = append(out, fmt.Sprint("m", i))
		}
		return out
	}
	tests := []struct {
		name string
		opts SearchOptions
		want []string
	}{
		{"FirstHit", SearchOptions{Limit: 1}, []string{"good"}}, // "best" is past the window
		// A filter that keeps every match keeps the same window.
		{"FilterKeepingAll", SearchOptions{Limit: 1, Source: "cli"}, []string{"good"}},
		// A filter that keeps few matches ranks them all: the window is
		// counted after the filter.
		{"FilteredByRole", SearchOptions{Limit: 5, Roles: []Role{RoleUser}}, []string{"best", "good"}},
		// Ties rank newest first, so the window ends with m1; past it, the
		// older matches newest first.
		{"WindowEnd", SearchOptions{Limit: 2, Offset: rankWindow - 2}, []string{"m2", "m1"}},
		{"StraddlingTheEnd", SearchOptions{Limit: 3, Offset: rankWindow - 1}, []string{"m1", "m0", "best"}},
		{"PastTheWindow", SearchOptions{Limit: 5, Offset: rankWindow}, []string{"m0", "best"}},
		{"LastHit", SearchOptions{Limit: 5, Offset: rankWindow + 1}, []string{"best"}},
		{"PastTheLastHit", SearchOptions{Limit: 5, Offset: rankWindow + 2}, []string{}},
		{"InsideTheWindow", SearchOptions{Limit: 3, Offset: 1}, fillers(rankWindow-1, rankWindow-3)},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			hits, err := f.s.Search(t.Context(), "needle", tt.opts)
			if err != nil {
				t.Fatal(err)
			}
			if diff := cmp.Diff(tt.want, f.keys(hits)); diff != "" {
				t.Errorf("(-want +got):\n%s", diff)
			}
		})
	}

	// Paging visits every hit exactly once, in the documented order, with
	// pages that end at the window's end (10, 1) or straddle it (7).
	want := append(append([]string{"good"}, fillers(rankWindow-1, 0)...), "best")
	for _, size := range []int{MaxSearchLimit, 10, 7, 1} {
		ids := pageAll(t, f.s, "needle", SearchOptions{}, size)
		got := make([]string, len(ids))
		for i, id := range ids {
			got[i] = f.key[id]
		}
		if diff := cmp.Diff(want, got); diff != "" {
			t.Errorf("paging by %d (-want +got):\n%s", size, diff)
		}
	}
}

// The window is counted over the rows the search returns: newer matches
// in a hidden session, rewound newer matches and newer matches outside a
// filter take no place in it — by either index.
func TestSearch_RankWindowCountsVisibleMatchesOnly(t *testing.T) {
	setRankWindow(t, 40)
	many := func(format string) []string {
		texts := make([]string, rankWindow)
		for i := range texts {
			texts[i] = fmt.Sprintf(format, i)
		}
		return texts
	}
	setups := []struct {
		name  string
		setup func(t *testing.T, s *Store) (opts SearchOptions, want []int64)
	}{
		{"HiddenSession", func(t *testing.T, s *Store) (SearchOptions, []int64) {
			newTestSession(t, s, "visible")
			want := storetest.AppendTexts(t, s.Store, "visible", "needle in the visible session", "another needle here")
			newTestSession(t, s, "secret")
			storetest.AppendTexts(t, s.Store, "secret", many("needle %d")...)
			hideSession(t, s, "secret")
			return SearchOptions{}, want
		}},
		{"Rewound", func(t *testing.T, s *Store) (SearchOptions, []int64) {
			// Large rows too: their state is read through an index (see
			// queries/search.sql).
			large := " " + strings.Repeat("filler ", 500)
			newTestSession(t, s, "r")
			want := storetest.AppendTexts(t, s.Store, "r", "needle kept", "needle kept"+large)
			texts := many("needle %d")
			for i := 0; i < len(texts); i += 2 {
				texts[i] += large
			}
			ids := storetest.AppendTexts(t, s.Store, "r", texts...)
			if _, err := s.RewindTo(t.Context(), "r", ids[0], RewindOptions{LeaseHolder: storetest.LockFor(t, s.Store, "r")}); err != nil {
				t.Fatal(err)
			}
			return SearchOptions{}, want
		}},
		{"OtherSession", func(t *testing.T, s *Store) (SearchOptions, []int64) {
			newTestSession(t, s, "mine")
			want := storetest.AppendTexts(t, s.Store, "mine", "needle one", "needle two", "needle three")
			newTestSession(t, s, "other")
			storetest.AppendTexts(t, s.Store, "other", many("needle %d")...)
			return SearchOptions{SessionID: "mine"}, want
		}},
		{"InterleavedSessions", func(t *testing.T, s *Store) (SearchOptions, []int64) {
			// The word index is read only within mine's span of ids
			// (queries/search.sql): other's matches before, inside and
			// after that span take no place, and none of mine is missed.
			newTestSession(t, s, "mine")
			newTestSession(t, s, "other")
			storetest.AppendTexts(t, s.Store, "other", many("needle before %d")...)
			var want []int64
			for i := range rankWindow {
				want = append(want, storetest.AppendTexts(t, s.Store, "mine", fmt.Sprintf("needle mine %d", i))...)
				storetest.AppendTexts(t, s.Store, "other", fmt.Sprintf("needle other %d", i), "no match here")
			}
			storetest.AppendTexts(t, s.Store, "other", many("needle after %d")...)
			return SearchOptions{SessionID: "mine"}, want
		}},
		{"EmptySession", func(t *testing.T, s *Store) (SearchOptions, []int64) {
			newTestSession(t, s, "empty")
			newTestSession(t, s, "other")
			storetest.AppendTexts(t, s.Store, "other", many("needle %d")...)
			return SearchOptions{SessionID: "empty"}, nil
		}},
		{"SourceAmongOthers", func(t *testing.T, s *Store) (SearchOptions, []int64) {
			for _, id := range []string{"c1", "g1", "c2", "g2"} {
				if _, err := s.CreateSession(t.Context(), NewSession{ID: id, Source: map[byte]string{'c': "cli", 'g': "gateway"}[id[0]]}); err != nil {
					t.Fatal(err)
				}
			}
			var want []int64
			for i := range rankWindow {
				want = append(want, storetest.AppendTexts(t, s.Store, []string{"c1", "c2"}[i%2], fmt.Sprintf("needle cli %d", i))...)
				storetest.AppendTexts(t, s.Store, []string{"g1", "g2"}[i%2], fmt.Sprintf("needle gateway %d", i), "needle gateway again")
			}
			return SearchOptions{Source: "cli"}, want
		}},
		{"SourceOfFewSessions", func(t *testing.T, s *Store) (SearchOptions, []int64) {
			// The index is read only within the span of the source's two
			// sessions (SearchSourceSpan): other sources' matches before,
			// between and after them take no place, none of theirs is missed.
			for id, src := range map[string]string{"old": "pager", "new": "pager", "bulk": "cli"} {
				if _, err := s.CreateSession(t.Context(), NewSession{ID: id, Source: src}); err != nil {
					t.Fatal(err)
				}
			}
			storetest.AppendTexts(t, s.Store, "bulk", many("needle before %d")...)
			want := storetest.AppendTexts(t, s.Store, "old", "needle paged once", "needle paged twice")
			storetest.AppendTexts(t, s.Store, "bulk", many("needle between %d")...)
			want = append(want, storetest.AppendTexts(t, s.Store, "new", many("needle paged again %d")[:rankWindow/2]...)...)
			want = append(want, storetest.AppendTexts(t, s.Store, "old", "needle paged late")...)
			storetest.AppendTexts(t, s.Store, "bulk", many("needle after %d")...)
			return SearchOptions{Source: "pager"}, want
		}},
		{"SourceOfManySessions", func(t *testing.T, s *Store) (SearchOptions, []int64) {
			// More sessions than spanMaxSessions: the whole index is read.
			spanMaxSessions = 1
			t.Cleanup(func() { spanMaxSessions = 100 })
			for id, src := range map[string]string{"a": "pager", "b": "pager", "bulk": "cli"} {
				if _, err := s.CreateSession(t.Context(), NewSession{ID: id, Source: src}); err != nil {
					t.Fatal(err)
				}
			}
			want := storetest.AppendTexts(t, s.Store, "a", "needle a")
			storetest.AppendTexts(t, s.Store, "bulk", many("needle between %d")...)
			want = append(want, storetest.AppendTexts(t, s.Store, "b", many("needle b %d")[:rankWindow/2]...)...)
			return SearchOptions{Source: "pager"}, want
		}},
		{"SourceWithoutMessages", func(t *testing.T, s *Store) (SearchOptions, []int64) {
			for id, src := range map[string]string{"quiet": "pager", "bulk": "cli"} {
				if _, err := s.CreateSession(t.Context(), NewSession{ID: id, Source: src}); err != nil {
					t.Fatal(err)
				}
			}
			storetest.AppendTexts(t, s.Store, "bulk", many("needle %d")...)
			return SearchOptions{Source: "pager"}, nil
		}},
		{"UnknownSource", func(t *testing.T, s *Store) (SearchOptions, []int64) {
			newTestSession(t, s, "bulk")
			storetest.AppendTexts(t, s.Store, "bulk", many("needle %d")...)
			return SearchOptions{Source: "nosuch"}, nil
		}},
		{"ExcludedSource", func(t *testing.T, s *Store) (SearchOptions, []int64) {
			for id, src := range map[string]string{"keep": "cli", "drop": "cron"} {
				if _, err := s.CreateSession(t.Context(), NewSession{ID: id, Source: src}); err != nil {
					t.Fatal(err)
				}
			}
			var want []int64
			for i := range rankWindow {
				want = append(want, storetest.AppendTexts(t, s.Store, "keep", fmt.Sprintf("needle kept %d", i))...)
				storetest.AppendTexts(t, s.Store, "drop", fmt.Sprintf("needle dropped %d", i))
			}
			return SearchOptions{ExcludeSources: []string{"cron"}}, want
		}},
		{"Roles", func(t *testing.T, s *Store) (SearchOptions, []int64) {
			newTestSession(t, s, "r")
			var want []int64
			for i := range rankWindow {
				want = append(want, storetest.AppendTexts(t, s.Store, "r", fmt.Sprintf("needle asked %d", i))...)
				if _, err := s.AppendMessage(t.Context(), "r", NewMessage{Role: RoleAssistant, Content: fmt.Sprintf("needle answered %d", i)}); err != nil {
					t.Fatal(err)
				}
			}
			return SearchOptions{Roles: []Role{RoleUser}}, want
		}},
		{"PartlyHidden", func(t *testing.T, s *Store) (SearchOptions, []int64) {
			newTestSession(t, s, "v")
			want := storetest.AppendTexts(t, s.Store, "v", many("needle visible %d")[:rankWindow/2]...)
			newTestSession(t, s, "h")
			storetest.AppendTexts(t, s.Store, "h", many("needle hidden %d")[:rankWindow-10]...)
			hideSession(t, s, "h")
			return SearchOptions{}, want
		}},
	}
	for _, tt := range setups {
		t.Run(tt.name, func(t *testing.T) {
			s := openTestStore(t, Options{})
			opts, want := tt.setup(t, s)
			slices.Sort(want)
			// Every row in the index before paging: a row the indexer moves
			// from the tail into the window between two pages changes the
			// order the pages cut (the tail's rows come first).
			if err := s.IndexNow(t.Context()); err != nil {
				t.Fatal(err)
			}
			// "needle" goes through the word index, "eedl" through the trigram
			// index; both rank.
			for _, q := range []string{"needle", "eedl"} {
				for _, sort := range []SearchSort{SortRelevance, SortNewest, SortOldest} {
					opts.Sort = sort
					got := pageAll(t, s, q, opts, 20)
					slices.Sort(got)
					if diff := cmp.Diff(want, got); diff != "" {
						t.Errorf("Search(%q) sort %v, paged by 20 (-want +got ids):\n%s", q, sort, diff)
					}
				}
			}
		})
	}
}

// Paging a relevance search where the ranking disagrees with age (the
// best matches are the oldest, past the window): each hit appears exactly
// once; the window is the newest rankWindow, the rest follow newest first.
// At the real window size, with pages straddling its end.
func TestSearch_RelevancePagingVisitsEveryHitOnce(t *testing.T) {
	if rankWindow != 2000 {
		t.Fatalf("rankWindow %d; SortRelevance documents 2000", rankWindow)
	}
	s := openTestStore(t, Options{})
	newTestSession(t, s, "w")
	n := rankWindow + 100
	texts := make([]string, n)
	for i := range texts {
		texts[i] = fmt.Sprintf("needle filler words number %d", i)
		if i < 100 {
			texts[i] = "needle needle needle " + texts[i] // better, and older
		}
	}
	ids := storetest.AppendTexts(t, s.Store, "w", texts...)
	if err := s.IndexNow(t.Context()); err != nil { // rank every hit
		t.Fatal(err)
	}
	newestFirst := slices.Clone(ids)
	slices.Reverse(newestFirst)
	for _, q := range []string{"needle", "eedl"} { // word index, trigram index
		got := pageAll(t, s, q, SearchOptions{}, 150)
		if len(got) != n {
			t.Errorf("Search(%q): %d hits, want %d", q, len(got), n)
			continue
		}
		window := slices.Clone(got[:rankWindow])
		slices.Sort(window)
		if diff := cmp.Diff(ids[n-rankWindow:], window); diff != "" {
			t.Errorf("Search(%q): the ranked window is not the newest %d (-want +got):\n%s", q, rankWindow, diff)
		}
		if diff := cmp.Diff(newestFirst[rankWindow:], got[rankWindow:]); diff != "" {
			t.Errorf("Search(%q): past the window (-want +got):\n%s", q, diff)
		}
	}
}
