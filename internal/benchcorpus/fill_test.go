package benchcorpus_test

import (
	"context"
	"errors"
	"fmt"
	"path/filepath"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/sessiondb/sessiondb/db"
	"github.com/sessiondb/sessiondb/internal/benchcorpus"
	"github.com/sessiondb/sessiondb/store"
)

// FillParallel's loaders write FillBatches' rows: the same sessions, each
// with the same messages in the same order, whatever the loaders' timing.
func TestFillParallel_WritesFillBatchesRows(t *testing.T) {
	ctx := context.Background()
	const n, batch = 3000, 50
	fill := func(loaders int) map[string][]string {
		s, err := db.Open(ctx, filepath.Join(t.TempDir(), "fill.db"), db.Options{})
		if err != nil {
			t.Fatal(err)
		}
		defer s.Close()
		if err := benchcorpus.FillParallel(ctx, s.Store, n, batch, loaders); err != nil {
			t.Fatal(err)
		}
		rows := map[string][]string{}
		for i := 0; ; i++ {
			id := fmt.Sprintf("bench-%05d", i)
			msgs, err := s.Messages(ctx, id, store.MessageQuery{Limit: 1000})
			if errors.Is(err, store.ErrNotFound) {
				break
			}
			if err != nil {
				t.Fatal(err)
			}
			for _, m := range msgs {
				rows[id] = append(rows[id], string(m.Role)+"|"+m.ToolName+"|"+m.Content)
			}
		}
		return rows
	}
	serial := fill(1)
	total := 0
	for _, r := range serial {
		total += len(r)
	}
	if total != n {
		t.Fatalf("FillBatches wrote %d messages, want %d", total, n)
	}
	if diff := cmp.Diff(serial, fill(4)); diff != "" {
		t.Errorf("FillParallel with 4 loaders wrote other rows than FillBatches (-serial +parallel):\n%s", diff)
	}
}
