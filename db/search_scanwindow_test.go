package db

import (
	"fmt"
	"slices"
	"strconv"
	"testing"

	"github.com/sessiondb/sessiondb/storetest"

	"github.com/google/go-cmp/cmp"
)

// The scan (no full-text route can answer a substring like "q7") reads
// the table a window of ids at a time, each window in a snapshot of its
// own, so a scan of a large store never pins the WAL for its whole run —
// and the windows change nothing in what it finds: every page, in every
// order, is the one a single pass gives.
func TestSearchScan_WindowsAreShortSnapshots(t *testing.T) {
	s := openTestStore(t, Options{})
	var matching []int64 // ids of the messages holding "q7", oldest first
	for si, sid := range []string{"a", "b", "c"} {
		newTestSession(t, s, sid)
		for i := range 70 {
			content := "plain words " + strconv.Itoa(i)
			if (i+si)%3 == 0 {
				content = "xq7y turn " + strconv.Itoa(i)
			}
			id, err := s.AppendMessage(t.Context(), sid, NewMessage{Role: RoleUser, Content: content})
			if err != nil {
				t.Fatal(err)
			}
			if (i+si)%3 == 0 {
				matching = append(matching, id)
			}
		}
	}
	slices.Sort(matching)
	newest := slices.Clone(matching)
	slices.Reverse(newest)

	defer func(w int64) { scanWindowIDs = w }(scanWindowIDs)
	scanWindowIDs = 7
	for _, tt := range []struct {
		sort   SearchSort
		offset int
		want   []int64
	}{
		{SortNewest, 0, newest[:10]},
		{SortNewest, 13, newest[13:23]},
		{SortRelevance, 5, newest[5:15]},
		{SortOldest, 0, matching[:10]},
		{SortOldest, 61, matching[61:70]},
		{SortNewest, 200, nil},
	} {
		before := s.snapshots.Load()
		hits, route, err := s.search(t.Context(), "q7", SearchOptions{Sort: tt.sort, Offset: tt.offset, Limit: 10})
		if err != nil || route != routeScan {
			t.Fatalf("search q7 (%v, offset %d): route %d, %v; want the scan", tt.sort, tt.offset, route, err)
		}
		var got []int64
		for _, h := range hits {
			got = append(got, h.MessageID)
			if h.Snippet == "" {
				t.Errorf("hit %d has no snippet", h.MessageID)
			}
		}
		if diff := cmp.Diff(tt.want, got); diff != "" {
			t.Errorf("search q7 (%v, offset %d) over windows of 7 ids (-want +got):\n%s", tt.sort, tt.offset, diff)
		}
		// Several windows; past the last match, every window of the table.
		need := 3
		if tt.want == nil {
			need = 210 / 7
		}
		if n := s.snapshots.Load() - before; n < uint64(need) {
			t.Errorf("search q7 (%v, offset %d) took %d snapshots; want at least %d (one per window)", tt.sort, tt.offset, n, need)
		}
	}
}

// The scan reads only the search's span of ids, as the index routes do: a
// session's, or a source's of few sessions; nothing for a source without
// messages. Every hit is still found, in every order.
func TestSearchScan_ReadsOnlyTheSpan(t *testing.T) {
	s := openTestStore(t, Options{})
	for id, src := range map[string]string{"bulk": "cli", "mine": "pager", "quiet": "cron"} {
		if _, err := s.CreateSession(t.Context(), NewSession{ID: id, Source: src}); err != nil {
			t.Fatal(err)
		}
	}
	texts := func(n int, format string) []string {
		out := make([]string, n)
		for i := range out {
			out[i] = fmt.Sprintf(format, i)
		}
		return out
	}
	storetest.AppendTexts(t, s.Store, "bulk", texts(300, "xq7y bulk %d")...)
	var mine []int64 // oldest first
	for i := range 10 {
		ids := storetest.AppendTexts(t, s.Store, "mine", fmt.Sprintf("xq7y mine %d", i), "plain words")
		mine = append(mine, ids[0])
		storetest.AppendTexts(t, s.Store, "bulk", "xq7y between")
	}
	storetest.AppendTexts(t, s.Store, "bulk", texts(300, "xq7y bulk after %d")...)
	newest := slices.Clone(mine)
	slices.Reverse(newest)

	defer func(w int64) { scanWindowIDs = w }(scanWindowIDs)
	scanWindowIDs = 7
	for _, tt := range []struct {
		opts SearchOptions
		want []int64
	}{
		{SearchOptions{SessionID: "mine", Sort: SortNewest}, newest},
		{SearchOptions{SessionID: "mine", Sort: SortOldest}, mine},
		{SearchOptions{SessionID: "mine"}, newest},
		{SearchOptions{Source: "pager", Sort: SortOldest}, mine},
		{SearchOptions{Source: "cron"}, nil},
		{SearchOptions{Source: "nosuch"}, nil},
	} {
		tt.opts.Limit = MaxSearchLimit
		before := s.snapshots.Load()
		hits, route, err := s.search(t.Context(), "q7", tt.opts)
		if err != nil || route != routeScan {
			t.Fatalf("search q7 %+v: route %d, %v; want the scan", tt.opts, route, err)
		}
		var got []int64
		for _, h := range hits {
			got = append(got, h.MessageID)
		}
		if diff := cmp.Diff(tt.want, got); diff != "" {
			t.Errorf("search q7 %+v (-want +got):\n%s", tt.opts, diff)
		}
		// mine's span is 30 ids, 5 or 6 windows of 7, beside the search's
		// own snapshots (the index routes', the span's, the snippets',
		// the hits'); the table's ~630 ids would take 90 windows.
		if n := s.snapshots.Load() - before; n > 12 {
			t.Errorf("search q7 %+v took %d snapshots; want at most 12 (the span's windows)", tt.opts, n)
		}
	}
}
