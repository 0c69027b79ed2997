package db

// The trigram index keeps no positions (migration 13): it finds the
// messages holding every trigram it is asked for, and Search keeps those
// holding the term itself. These tests pin that nothing else comes
// through — in the index and in the queue alike — and how the trigram
// route ranks.

import (
	"slices"
	"testing"

	"github.com/google/go-cmp/cmp"
)

// trigramFixture: messages that hold a query's substring, and messages
// that hold every trigram the index is asked for but not the substring.
// queued keeps them out of the indexes (no background indexer), so
// Search answers from their text.
func trigramFixture(t *testing.T, queued bool) *searchFixture {
	f := newSearchFixture(t, Options{ManualIndexing: queued})
	f.session(t, NewSession{ID: "t", Source: "cli"},
		user("hit", "the xabcdefy token"),
		user("trigrams-apart", "bcd and cdef"), // "bcd" and "def", not "bcdef"
		user("folded", "XABCDEFY in capitals"),
		user("cjk-hit", "この文章を検索する"),
		user("cjk-apart", "文章を書いてを検索した"), // "文章を" and "を検索", not "文章を検索"
		user("short-hit", "zq xabcdefy"),
		user("nul", "xq\x00rstuv"), // the tokenizer skips NUL: "qrstu" is there
	)
	return f
}

func TestSearch_TrigramCandidatesAreTestedExactly(t *testing.T) {
	tests := []struct {
		query string
		want  []string // newest first
	}{
		{"bcdef", []string{"short-hit", "folded", "hit"}},
		{"BCDEF", []string{"short-hit", "folded", "hit"}},
		{"文章を検索", []string{"cjk-hit"}},
		{"bcdef zq", []string{"short-hit"}}, // a short term, checked by instr
		{"bcdefz", []string{}},
		{"qrstu", []string{"nul"}},
	}
	for _, stage := range []string{"queued", "indexed"} {
		f := trigramFixture(t, stage == "queued")
		if stage == "indexed" {
			f.indexed(t)
		} else if n := queued(t, f.s); n == 0 {
			t.Fatal("nothing queued: the queued stage would search the index")
		}
		for _, tt := range tests {
			for _, sort := range []SearchSort{SortNewest, SortOldest, SortRelevance} {
				hits, err := f.s.Search(t.Context(), tt.query, SearchOptions{Sort: sort})
				if err != nil {
					t.Fatal(err)
				}
				got := f.keys(hits)
				want := tt.want
				if sort == SortOldest {
					want = slices.Clone(want)
					slices.Reverse(want)
				}
				if sort == SortRelevance { // the order is the next test's
					got, want = slices.Sorted(slices.Values(got)), slices.Sorted(slices.Values(want))
				}
				if diff := cmp.Diff(want, got); diff != "" {
					t.Errorf("%s, %v, Search(%q) (-want +got):\n%s", stage, sort, tt.query, diff)
				}
			}
		}
	}
}

// The trigram route ranks by how often the terms occur, against the
// message's length; ties newest first.
func TestSearch_TrigramRanksByFrequencyThenLength(t *testing.T) {
	f := newSearchFixture(t, Options{})
	f.session(t, NewSession{ID: "r", Source: "cli"},
		user("twice-short", "xbcdefx and xbcdefx"),
		user("once-long", "one xbcdefx among a great many other words that make this message long"),
		user("once-short", "one xbcdefx here"),
		user("once-short-newer", "one xbcdefx here"),
	)
	f.indexed(t)
	hits, err := f.s.Search(t.Context(), "bcdef", SearchOptions{})
	if err != nil {
		t.Fatal(err)
	}
	want := []string{"twice-short", "once-short-newer", "once-short", "once-long"}
	if diff := cmp.Diff(want, f.keys(hits)); diff != "" {
		t.Errorf("relevance (-want +got):\n%s", diff)
	}
}
