package pg

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"github.com/jackc/pgx/v5"

	"github.com/sessiondb/sessiondb/pg/internal/pggen"
	"github.com/sessiondb/sessiondb/store"
	"github.com/sessiondb/sessiondb/store/driver"
)

// A pipelined batch's appends' rows' INSERT and counter UPDATE ride the
// COMMIT's round: lanes of plain appends take no round of their own. The
// riders, sent in one round as the COMMIT's are, insert the rows (their
// ids handed back in order) and count them.
func TestPipeline_RidersTakeNoRound(t *testing.T) {
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
	counted := make([]int64, len(sessions))
	ids := make([][]int64, len(sessions))
	lanes := make([]func(*pipeline), len(sessions))
	for i, sid := range sessions {
		lanes[i] = func(p *pipeline) {
			ex := pgExecutor{executor: executor{q: queries, db: p}}
			rows := []driver.MessageInsertParams{
				{SessionID: sid, Role: "user", Content: "x", CreatedAt: 1},
				{SessionID: sid, Role: "assistant", Content: "y", CreatedAt: 2},
			}
			ids[i] = make([]int64, len(rows))
			if !ex.MessageInsertDeferred(ctx, rows, func(j int, id int64) { ids[i][j] = id }) {
				t.Error("rows not taken to ride")
				return
			}
			counted[i], _ = ex.SessionAddMessageCounts(ctx, driver.SessionAddMessageCountsParams{ID: sid, Messages: int64(len(rows))})
		}
	}
	p := runLanes(ctx, conn.Conn(), lanes, nil, true)
	p.mu.Lock()
	riders := len(p.riders)
	p.mu.Unlock()
	if p.rounds != 0 || riders != 2*len(sessions) {
		t.Errorf("%d rounds, %d riders; want 0 rounds and %d riders", p.rounds, riders, 2*len(sessions))
	}
	if diff := cmp.Diff([]int64{1, 1, 1}, counted); diff != "" {
		t.Errorf("counts answered (-want +got):\n%s", diff)
	}
	h := p.takeRiders() // sent as one batch: one implicit transaction
	var b pgx.Batch
	for _, o := range h.stmts {
		b.Queue(o.sql, o.args...)
	}
	res := conn.SendBatch(ctx, &b)
	for _, o := range h.stmts {
		o.read(res)
	}
	if err := res.Close(); err != nil || h.firstErr() != nil {
		t.Fatalf("the riders: %v, %v", err, h.firstErr())
	}
	for _, s := range h.all {
		s.handIDs()
	}
	for i, sid := range sessions {
		if len(ids[i]) != 2 || ids[i][0] == 0 || ids[i][1] != ids[i][0]+1 {
			t.Errorf("session %s: ids %v, want two ascending ids", sid, ids[i])
		}
		checkSessionRow(t, s, sid)
	}
}

// A count answered "counted" before it ran, for a session compression
// closed meanwhile, must not commit: the riding counts fail in the
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

// Appends of many callers at once, through the store: their rows ride
// the COMMIT's round, and each caller gets its own rows' ids, in its
// order. A caller whose row a DBA's CHECK refuses (found only in the
// COMMIT's round) gets ErrForeignSchema alone, nothing of it stored.
func TestAppend_RidingRowsIDsReachTheirCallers(t *testing.T) {
	ctx := t.Context()
	s := openTestStore(t, Options{})
	const callers, rounds = 16, 15
	for c := range callers {
		if _, err := s.CreateSession(ctx, store.NewSession{ID: fmt.Sprintf("s%02d", c), Source: "test"}); err != nil {
			t.Fatal(err)
		}
	}
	admin := openPool(t, testDSN(t), s.Schema())
	execAll(t, admin, []string{`ALTER TABLE messages ADD CONSTRAINT no_refuse CHECK (content NOT LIKE 'refuse%') NOT VALID`})
	type sent struct {
		session string
		content []string
		ids     []int64
	}
	var mu sync.Mutex
	var acked []sent
	var wg sync.WaitGroup
	for c := range callers {
		wg.Go(func() {
			sid := fmt.Sprintf("s%02d", c)
			for r := range rounds {
				content := []string{fmt.Sprintf("%s-%d-a", sid, r), fmt.Sprintf("%s-%d-b", sid, r)}
				if c == 3 && r == 7 {
					content[1] = "refuse " + content[1]
				}
				ids, err := s.AppendMessages(ctx, sid, []store.NewMessage{{Role: "user", Content: content[0]}, {Role: "assistant", Content: content[1]}})
				if c == 3 && r == 7 {
					if !errors.Is(err, store.ErrForeignSchema) || !strings.Contains(err.Error(), "no_refuse") {
						t.Errorf("the refused append: %v; want ErrForeignSchema naming no_refuse", err)
					}
					continue
				}
				if err != nil {
					t.Errorf("append %s %d: %v", sid, r, err)
					continue
				}
				mu.Lock()
				acked = append(acked, sent{sid, content, ids})
				mu.Unlock()
			}
		})
	}
	wg.Wait()
	stored := map[int64][2]string{} // id: session, content
	for c := range callers {
		sid := fmt.Sprintf("s%02d", c)
		ms, err := s.Messages(ctx, sid, store.MessageQuery{Limit: 1000})
		if err != nil {
			t.Fatal(err)
		}
		for _, m := range ms {
			stored[m.ID] = [2]string{sid, m.Content}
		}
		checkSessionRow(t, s, sid)
	}
	if want := (callers*rounds - 1) * 2; len(stored) != want || len(acked) != callers*rounds-1 {
		t.Errorf("%d rows stored, %d appends acknowledged; want %d rows, %d appends", len(stored), len(acked), want, callers*rounds-1)
	}
	for _, a := range acked {
		for j, id := range a.ids {
			if got := stored[id]; got != [2]string{a.session, a.content[j]} {
				t.Errorf("append to %s got id %d for %q; that id holds %q", a.session, id, a.content[j], got)
			}
		}
	}
}

// SessionAddMessageCountsAll counts as SessionAddMessageCountsMany does:
// their UPDATEs are one text, kept twice (sqlc shares no fragment).
func TestCountsAllUpdatesAsCountsMany(t *testing.T) {
	update := func(q func(db pggen.DBTX) error) string {
		sql, _ := recorded(q)
		start, end := strings.Index(sql, "WITH counted AS ("), strings.Index(sql, "RETURNING sessions.id")
		if start < 0 || end < start {
			t.Fatalf("no counted UPDATE in %q", sql)
		}
		return sql[start:end]
	}
	many := update(func(db pggen.DBTX) error {
		_, err := queries.SessionAddMessageCountsMany(t.Context(), db, "[]")
		return err
	})
	all := update(func(db pggen.DBTX) error { return queries.SessionAddMessageCountsAll(t.Context(), db, "[]") })
	if diff := cmp.Diff(many, all); diff != "" {
		t.Errorf("the two counts' UPDATEs differ (-Many +All):\n%s", diff)
	}
}
