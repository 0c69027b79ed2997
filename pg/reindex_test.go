package pg

import (
	"fmt"
	"sync"
	"testing"

	"github.com/sessiondb/sessiondb/store"
)

// TestReindexConcurrently_StoreStaysWhole backs docs/OPERATIONS.md's advice
// to rebuild the trigram indexes after a large import: REINDEX INDEX
// CONCURRENTLY of both, while appends go on, blocks no append (its SHARE
// UPDATE EXCLUSIVE lock conflicts with none a write takes), and leaves a
// store Verify finds nothing in and whose substring search finds every
// message, those appended during the rebuild too.
func TestReindexConcurrently_StoreStaysWhole(t *testing.T) {
	ctx := t.Context()
	s := openTestStore(t, Options{})
	if _, err := s.CreateSession(ctx, store.NewSession{ID: "s", Source: "test"}); err != nil {
		t.Fatal(err)
	}
	for i := range 200 {
		if _, err := s.AppendMessage(ctx, "s", store.NewMessage{Role: store.RoleUser, Content: fmt.Sprintf("kubernetes pod %d restarted", i)}); err != nil {
			t.Fatal(err)
		}
	}
	admin := sideConn(t, s)
	var wg sync.WaitGroup
	appendErrs := make(chan error, 1)
	stop := make(chan struct{})
	wg.Go(func() {
		for i := 0; ; i++ {
			select {
			case <-stop:
				return
			default:
			}
			if _, err := s.AppendMessage(ctx, "s", store.NewMessage{Role: store.RoleUser, Content: fmt.Sprintf("kubernetes node %d drained", i)}); err != nil {
				appendErrs <- err
				return
			}
		}
	})
	for _, index := range []string{"messages_trigram", "messages_tool_trigram"} {
		sideExec(t, admin, "REINDEX INDEX CONCURRENTLY "+index)
	}
	close(stop)
	wg.Wait()
	close(appendErrs)
	for err := range appendErrs {
		t.Errorf("an append during the rebuild: %v", err)
	}
	if r, err := s.Verify(ctx); err != nil || !r.OK() {
		t.Errorf("Verify after the rebuild = %q, %v; want nothing found", r.Findings, err)
	}
	sess, err := s.Session(ctx, "s")
	if err != nil {
		t.Fatal(err)
	}
	hits, err := s.Search(ctx, "ubernete", store.SearchOptions{Limit: store.MaxSearchLimit})
	if err != nil {
		t.Fatal(err)
	}
	if want := min(int(sess.MessageCount), store.MaxSearchLimit); len(hits) != want {
		t.Errorf("substring search after the rebuild: %d hits, want %d (%d messages)", len(hits), want, sess.MessageCount)
	}
}
