package pg

import (
	"context"
	"errors"
	"sync"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/sessiondb/sessiondb/store"
	"github.com/sessiondb/sessiondb/store/driver"
)

// A pipelined batch's counter updates ride its COMMIT's round: the lanes
// answer them at once, so a batch of plain appends takes one round of
// statements (their shared INSERT), not two.
func TestPipeline_DeferredCountsTakeNoRound(t *testing.T) {
	ctx := t.Context()
	s := openTestStore(t, Options{})
	sessions := []string{"a", "b", "c"}
	for _, id := range sessions {
		if _, err := s.CreateSession(ctx, store.NewSession{ID: id, Source: "test"}); err != nil {
			t.Fatal(err)
		}
	}
	conn, err := s.eng.pool.Acquire(ctx)
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Release()
	if _, err := conn.Exec(ctx, "BEGIN"); err != nil {
		t.Fatal(err)
	}
	counted := make([]int64, len(sessions))
	lanes := make([]func(*pipeline), len(sessions))
	for i, sid := range sessions {
		lanes[i] = func(p *pipeline) {
			ex := pgExecutor{executor: executor{q: queries, db: p}}
			if _, err := ex.MessageInsert(ctx, driver.MessageInsertParams{SessionID: sid, Role: "user", Content: "x", CreatedAt: 1}); err != nil {
				t.Error(err)
				return
			}
			counted[i], _ = ex.SessionAddMessageCounts(ctx, driver.SessionAddMessageCountsParams{ID: sid, Messages: 1})
		}
	}
	p := runLanes(ctx, conn.Conn(), lanes, nil, true)
	if p.rounds != 1 || len(p.deferred) != len(sessions) {
		t.Errorf("%d rounds, %d counts deferred; want 1 round (the INSERT) and %d deferred", p.rounds, len(p.deferred), len(sessions))
	}
	if diff := cmp.Diff([]int64{1, 1, 1}, counted); diff != "" {
		t.Errorf("counts answered (-want +got):\n%s", diff)
	}
	sql, args := p.countsAll()
	if _, err := conn.Exec(ctx, sql, args...); err != nil {
		t.Fatalf("the deferred counts: %v", err)
	}
	if _, err := conn.Exec(ctx, "COMMIT"); err != nil {
		t.Fatal(err)
	}
	for _, sid := range sessions {
		checkSessionRow(t, s, sid)
	}
}

// A count answered "counted" before it ran, for a session compression
// closed meanwhile, must not commit: the deferred counts fail in the
// COMMIT's round, the COMMIT behind them does not run, and the batch runs
// again careful, where that append reads its real count (0) and is refused
// alone. The others commit once, counted once.
func TestAppendDeferredCountOfAClosedSessionIsRefusedAlone(t *testing.T) {
	s := openTestStore(t, Options{})
	ctx := t.Context()
	sessions := []string{"a", "b", "c"}
	for _, id := range sessions {
		if _, err := s.CreateSession(ctx, store.NewSession{ID: id, Source: "test"}); err != nil {
			t.Fatal(err)
		}
	}
	if _, err := s.eng.pool.Exec(ctx, "UPDATE sessions SET end_reason = 'compression', ended_at = 1 WHERE id = 'b'"); err != nil {
		t.Fatal(err)
	}
	errRefused := errors.New("refused: counted nothing")
	var mu sync.Mutex
	seen := map[string][]int64{} // each run's answer to the count, by session
	fns := make([]func(context.Context, driver.Executor) error, len(sessions))
	for i, sid := range sessions {
		fns[i] = func(ctx context.Context, tx driver.Executor) error {
			if _, err := tx.MessageInsert(ctx, driver.MessageInsertParams{SessionID: sid, Role: "user", Content: "x", CreatedAt: time.Now().UnixMilli()}); err != nil {
				return err
			}
			n, err := tx.SessionAddMessageCounts(ctx, driver.SessionAddMessageCountsParams{ID: sid, Messages: 1})
			mu.Lock()
			seen[sid] = append(seen[sid], n)
			mu.Unlock()
			if err == nil && n == 0 {
				err = errRefused
			}
			return err
		}
	}
	res := runOneBatch(t, s, sessions, fns)
	for i, sid := range sessions {
		if want := sid == "b"; errors.Is(res[i].err, errRefused) != want || (!want && res[i].err != nil) {
			t.Errorf("caller %s: %v; want refused: %v", sid, res[i].err, want)
		}
	}
	// The first run answered every count at once; the careful rerun read b's.
	if diff := cmp.Diff(map[string][]int64{"a": {1, 1}, "b": {1, 0}, "c": {1, 1}}, seen); diff != "" {
		t.Errorf("counts each run answered (-want +got):\n%s", diff)
	}
	if diff := cmp.Diff(map[string]int{"a": 1, "b": 0, "c": 1}, messageCounts(t, s, sessions...)); diff != "" {
		t.Errorf("messages stored (-want +got):\n%s", diff)
	}
	for _, sid := range []string{"a", "c"} {
		checkSessionRow(t, s, sid)
	}
}
