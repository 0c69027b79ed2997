package storetest

import (
	"context"
	"errors"
	"fmt"
	"testing"

	. "github.com/sessiondb/sessiondb/store"
)

// A bulk load changes no write's contract: inside it every append is
// counted and found by the next search (before any indexing caught up),
// and after it everything is found; the load's error is returned as it
// is, and loads nest.
func testBulkLoad_AppendsStayFreshCountedAndFound(t *testing.T, open Opener) {
	ctx := t.Context()
	s := open(t, Options{})
	MustCreate(t, s, NewSession{ID: "bulk", Source: "cli"})
	const batches, per = 3, 60
	err := s.BulkLoad(ctx, func(ctx context.Context) error {
		return s.BulkLoad(ctx, func(ctx context.Context) error { // nested
			for b := range batches {
				ms := make([]NewMessage, per)
				for i := range ms {
					ms[i] = NewMessage{Role: RoleUser, Content: fmt.Sprintf("history line %d of batch %d", i, b)}
				}
				ms[per-1].Content = fmt.Sprintf("marker%d arrives last", b)
				if _, err := s.AppendMessages(ctx, "bulk", ms); err != nil {
					return err
				}
				hits, err := s.Search(ctx, fmt.Sprintf("marker%d", b), SearchOptions{})
				if err != nil {
					return err
				}
				if len(hits) != 1 {
					t.Errorf("inside the load, batch %d's marker found %d times, want 1", b, len(hits))
				}
			}
			return nil
		})
	})
	if err != nil {
		t.Fatal(err)
	}
	sess, err := s.Session(ctx, "bulk")
	if err != nil {
		t.Fatal(err)
	}
	if sess.MessageCount != batches*per {
		t.Errorf("MessageCount = %d, want %d", sess.MessageCount, batches*per)
	}
	for _, q := range []string{"marker0", "marker2", "history"} {
		hits, err := s.Search(ctx, q, SearchOptions{Limit: MaxSearchLimit})
		if err != nil {
			t.Fatal(err)
		}
		if want := map[string]int{"history": batches * (per - 1)}[q]; (want == 0 && len(hits) != 1) || (want > 0 && len(hits) != want) {
			t.Errorf("after the load, %q found %d times", q, len(hits))
		}
	}

	sentinel := errors.New("the load's own failure")
	if err := s.BulkLoad(ctx, func(context.Context) error { return sentinel }); err != sentinel {
		t.Errorf("BulkLoad returned %v, want the load's error as it is", err)
	}
	// The store works as before once the loads ended.
	AppendTexts(t, s, "bulk", "after the loads")
	if hits, err := s.Search(ctx, "after the loads", SearchOptions{}); err != nil || len(hits) != 1 {
		t.Errorf("a search after the loads = %d hits, %v; want 1", len(hits), err)
	}
}
