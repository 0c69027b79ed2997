package db

import (
	"slices"
	"strconv"
	"testing"

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
