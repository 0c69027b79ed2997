package db

import (
	"context"
	"fmt"
	"testing"
	"time"
)

// The rows of a bulk load are indexed in large slices, and the index has
// caught up when BulkLoad returns: with no background indexer at all
// (ManualIndexing), one slice indexes the whole load at its end.
func TestBulkLoad_IndexesInOneSliceAndHasCaughtUp(t *testing.T) {
	ctx := t.Context()
	s := openTestStore(t, Options{ManualIndexing: true})
	newTestSession(t, s, "bulk")
	const rows = 1200 // more than a yielding slice's indexMaxSlice
	before := s.Stats()
	err := s.BulkLoad(ctx, func(ctx context.Context) error {
		for b := range rows / 100 {
			ms := make([]NewMessage, 100)
			for i := range ms {
				ms[i] = NewMessage{Role: RoleUser, Content: fmt.Sprintf("line %d of batch %d", i, b)}
			}
			if _, err := s.AppendMessages(ctx, "bulk", ms); err != nil {
				return err
			}
		}
		if q := s.Stats().IndexQueued; q != rows {
			t.Errorf("inside the load %d changes queued, want all %d (no indexer runs)", q, rows)
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	after := s.Stats()
	if after.IndexQueued != 0 {
		t.Errorf("%d changes still queued after BulkLoad returned", after.IndexQueued)
	}
	if slices, indexed := after.IndexSlices-before.IndexSlices, after.MessagesIndexed-before.MessagesIndexed; slices != 1 || indexed != rows {
		t.Errorf("the catch-up took %d slices for %d rows, want 1 for %d", slices, indexed, rows)
	}
	if hits, err := s.Search(ctx, "batch", SearchOptions{Limit: 5}); err != nil || len(hits) != 5 {
		t.Errorf("Search after the load = %d hits, %v", len(hits), err)
	}
}

func TestBulkSliceDue(t *testing.T) {
	now := time.Now()
	tests := []struct {
		name   string
		queued int64
		waited time.Duration
		want   bool
	}{
		{"NothingQueued", 0, 0, true}, // the slice clears behind_since
		{"Gathering", bulkSliceRows - 1, bulkMaxLag / 2, false},
		{"Full", bulkSliceRows, 0, true},
		{"WaitedLongEnough", 1, bulkMaxLag, true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := bulkSliceDue(tt.queued, now.Add(-tt.waited), now); got != tt.want {
				t.Errorf("bulkSliceDue(%d, waited %v) = %v, want %v", tt.queued, tt.waited, got, tt.want)
			}
		})
	}
}
