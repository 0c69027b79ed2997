package storetest

import (
	"errors"
	"testing"

	. "github.com/sessiondb/sessiondb/store"

	"github.com/google/go-cmp/cmp"
	"github.com/google/go-cmp/cmp/cmpopts"
)

// testSearch_ExcludeSources: SearchOptions.ExcludeSources leaves out the
// sessions of those sources on every route — words, substrings (CJK), the
// rows still waiting to be indexed and, with the index marked stale, the
// scan — in every order, filtered before paging, so that Limit and Offset
// count only what is left.
func testSearch_ExcludeSources(t *testing.T, e Engine) {
	ctx := t.Context()
	s := e.Open(t, Options{})
	var release func() int
	if e.HoldIndexing != nil {
		release = e.HoldIndexing(t, s)
	}
	// Interleaved, so that a filter applied after paging would leave
	// pages short.
	for i, src := range []string{"cli", "cron", "subagent", "cli", "cron", "cli", "subagent", "cli"} {
		id := src + "-" + string(rune('a'+i))
		MustCreate(t, s, NewSession{ID: id, Source: src})
		AppendTexts(t, s, id, "the otter swims near 東京タワー "+id)
	}
	want := []string{"cli-a", "cli-d", "cli-f", "cli-h"}
	sessions := func(hits []SearchHit) []string {
		out := []string{}
		for _, h := range hits {
			out = append(out, h.SessionID)
		}
		return out
	}
	check := func(t *testing.T, stage string) {
		for _, q := range []string{"otter", "東京タワー", "tter"} {
			for _, sort := range []SearchSort{SortRelevance, SortNewest, SortOldest} {
				o := SearchOptions{ExcludeSources: []string{"cron", "subagent"}, Sort: sort}
				hits, err := s.Search(ctx, q, o)
				if err != nil {
					t.Fatalf("%s %q %v: %v", stage, q, sort, err)
				}
				if diff := cmp.Diff(want, sessions(hits), cmpopts.SortSlices(func(a, b string) bool { return a < b })); diff != "" {
					t.Errorf("%s %q %v (-want +got):\n%s", stage, q, sort, diff)
				}
				o.Limit, o.Offset = 2, 2
				page, err := s.Search(ctx, q, o)
				if err != nil || len(page) != 2 {
					t.Errorf("%s %q %v: page 2 = %v, %v; want 2 hits", stage, q, sort, sessions(page), err)
				}
				if sort == SortOldest && len(page) == 2 {
					if diff := cmp.Diff(want[2:], sessions(page)); diff != "" {
						t.Errorf("%s %q: page 2 oldest first (-want +got):\n%s", stage, q, diff)
					}
				}
			}
		}
		both, err := s.Search(ctx, "otter", SearchOptions{Source: "cron", ExcludeSources: []string{"cron"}})
		if err != nil || len(both) != 0 {
			t.Errorf("%s: a source both kept and excluded = %v, %v; want nothing", stage, sessions(both), err)
		}
	}
	if release != nil {
		check(t, "waiting")
		release()
	}
	check(t, "indexed")
	// The scan (SQLite, with its index marked stale; elsewhere a no-op).
	e.Exec(t, s, "INSERT INTO meta (key, value, updated_at) VALUES ('fts_stale', '1', 0)")
	check(t, "stale")
	if _, err := s.Search(ctx, "otter", SearchOptions{ExcludeSources: []string{"a\xffb"}}); !errors.Is(err, ErrInvalidInput) {
		t.Errorf("an invalid source: %v, want ErrInvalidInput", err)
	}
}
