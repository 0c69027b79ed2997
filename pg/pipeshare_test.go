package pg

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/sessiondb/sessiondb/store"
	"github.com/sessiondb/sessiondb/store/driver"
)

// A pipeline round sends its lanes' inserts as one MessageInsertMany and
// their counter updates as one SessionAddMessageCountsMany (pipeshare.go);
// each lane gets what its own statements would have answered.

// laneResult is what one lane's append got.
type laneResult struct {
	IDs     []int64
	Counted int64
	Err     string
}

// runSharedLanes runs one lane a session on a connection of s's pool:
// each lane inserts its session's rows (one MessageInsert for one row,
// else a MessageInsertBatch) and counts them, as the store's append does.
func runSharedLanes(t *testing.T, s *Store, rows map[string][]string, order []string) map[string]laneResult {
	t.Helper()
	ctx := t.Context()
	conn, err := s.eng.pool.Acquire(ctx)
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Release()
	got := make([]laneResult, len(order))
	lanes := make([]func(*pipeline), len(order))
	for i, sid := range order {
		lanes[i] = func(p *pipeline) {
			ex := pgExecutor{executor: executor{q: queries, db: p}}
			var params []driver.MessageInsertParams
			for _, c := range rows[sid] {
				params = append(params, driver.MessageInsertParams{SessionID: sid, Role: "user", Content: c, CreatedAt: time.Now().UnixMilli()})
			}
			var ids []int64
			var err error
			if len(params) == 1 {
				var id int64
				id, err = ex.MessageInsert(ctx, params[0])
				ids = []int64{id}
			} else {
				ids, err = ex.MessageInsertBatch(ctx, params)
			}
			if err != nil {
				got[i].Err = err.Error()
				return
			}
			got[i].IDs = ids
			got[i].Counted, err = ex.SessionAddMessageCounts(ctx, driver.SessionAddMessageCountsParams{ID: sid, Messages: int64(len(params))})
			if err != nil {
				got[i].Err = err.Error()
			}
		}
	}
	runLanes(ctx, conn.Conn(), lanes, nil, false)
	out := map[string]laneResult{}
	for i, sid := range order {
		out[sid] = got[i]
	}
	return out
}

func TestPipeline_LanesShareStatements(t *testing.T) {
	ctx := t.Context()
	counter := &statementCounter{n: map[string]int{}}
	s := tracedStore(t, counter)
	for _, id := range []string{"a", "b", "c", "closed", "big"} {
		if _, err := s.CreateSession(ctx, store.NewSession{ID: id, Source: "test"}); err != nil {
			t.Fatal(err)
		}
	}
	if _, err := s.eng.pool.Exec(ctx, "UPDATE sessions SET end_reason = 'compression', ended_at = 1 WHERE id = 'closed'"); err != nil {
		t.Fatal(err)
	}
	counter.take()

	rows := map[string][]string{
		"a":      {"a one"},
		"b":      {"b one", "b two", "b three"},
		"c":      {"c one"},
		"closed": {"closed one"},
		"big":    {strings.Repeat("x", insertManyBytes+1)}, // over a shared statement's bound: its own MessageInsert
	}
	order := []string{"a", "b", "big", "c", "closed"}
	got := runSharedLanes(t, s, rows, order)

	// Each lane's ids name its rows, in its order.
	for _, sid := range order {
		r := got[sid]
		if r.Err != "" || len(r.IDs) != len(rows[sid]) {
			t.Fatalf("lane %s: %+v", sid, r)
		}
		for i, id := range r.IDs {
			var session, content string
			if err := s.eng.pool.QueryRow(ctx, "SELECT session_id, content FROM messages WHERE id = $1", id).Scan(&session, &content); err != nil {
				t.Fatal(err)
			}
			if session != sid || content != rows[sid][i] {
				t.Errorf("lane %s, row %d: id %d holds %s's %.20q", sid, i, id, session, content)
			}
		}
		if !slices.IsSorted(r.IDs) {
			t.Errorf("lane %s: ids %v; want ascending", sid, r.IDs)
		}
	}
	counted := map[string]int64{}
	for sid, r := range got {
		counted[sid] = r.Counted
	}
	if diff := cmp.Diff(map[string]int64{"a": 1, "b": 1, "c": 1, "closed": 0, "big": 1}, counted); diff != "" {
		t.Errorf("rows each lane's count updated (-want +got):\n%s", diff)
	}
	if diff := cmp.Diff(map[string]int{"MessageInsertMany": 1, "MessageInsert": 1, "SessionAddMessageCountsMany": 1}, counter.take()); diff != "" {
		t.Errorf("statements sent (-want +got):\n%s", diff)
	}
	// What the table holds is what statement after statement would give.
	for _, sid := range order {
		var n, stored int64
		if err := s.eng.pool.QueryRow(ctx, "SELECT message_count, (SELECT count(*) FROM messages WHERE session_id = $1) FROM sessions WHERE id = $1", sid).Scan(&n, &stored); err != nil {
			t.Fatal(err)
		}
		want := int64(len(rows[sid]))
		if sid == "closed" {
			want = 0 // counted nothing: the store's append refuses its rows
		}
		if n != want || stored != int64(len(rows[sid])) {
			t.Errorf("session %s: message_count %d, %d rows; want %d, %d", sid, n, stored, want, len(rows[sid]))
		}
	}
}

// A round with one lane sends that lane's statements as it wrote them.
func TestPipeline_OneLaneSendsItsOwnStatements(t *testing.T) {
	ctx := t.Context()
	counter := &statementCounter{n: map[string]int{}}
	s := tracedStore(t, counter)
	for _, id := range []string{"a", "b"} {
		if _, err := s.CreateSession(ctx, store.NewSession{ID: id, Source: "test"}); err != nil {
			t.Fatal(err)
		}
	}
	counter.take()
	got := runSharedLanes(t, s, map[string][]string{"a": {"one"}}, []string{"a"})
	if got["a"].Err != "" || got["a"].Counted != 1 {
		t.Fatalf("lane a: %+v", got["a"])
	}
	if diff := cmp.Diff(map[string]int{"MessageInsert": 1, "SessionAddMessageCounts": 1}, counter.take()); diff != "" {
		t.Errorf("one row (-want +got):\n%s", diff)
	}
	got = runSharedLanes(t, s, map[string][]string{"b": {"one", "two"}}, []string{"b"})
	if got["b"].Err != "" || got["b"].Counted != 1 || len(got["b"].IDs) != 2 {
		t.Fatalf("lane b: %+v", got["b"])
	}
	if diff := cmp.Diff(map[string]int{"MessageInsertMany": 1, "SessionAddMessageCounts": 1}, counter.take()); diff != "" {
		t.Errorf("one append of two rows (-want +got):\n%s", diff)
	}
}

// A shared statement that fails fails every lane of it, with the
// server's error mapped as the lane's own statement's would be; the batch
// then runs again careful (appendbatch.go), each caller alone.
func TestPipeline_SharedFailureReachesEveryLane(t *testing.T) {
	ctx := t.Context()
	s := openTestStore(t, Options{})
	for _, id := range []string{"a", "b"} {
		if _, err := s.CreateSession(ctx, store.NewSession{ID: id, Source: "test"}); err != nil {
			t.Fatal(err)
		}
	}
	conn, err := s.eng.pool.Acquire(ctx)
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Release()
	errs := make([]error, 2)
	lanes := make([]func(*pipeline), 2)
	for i, role := range []string{"user", "nobody"} { // the messages_role check refuses "nobody"
		lanes[i] = func(p *pipeline) {
			ex := pgExecutor{executor: executor{q: queries, db: p}}
			_, errs[i] = ex.MessageInsert(ctx, driver.MessageInsertParams{SessionID: string(rune('a' + i)), Role: role, Content: "x", CreatedAt: 1})
		}
	}
	runLanes(ctx, conn.Conn(), lanes, nil, false)
	for i, err := range errs {
		if !errors.Is(err, driver.ErrInvalidInput) {
			t.Errorf("lane %d: %v; want the check's refusal", i, err)
		}
	}
}

// Appends of one session that look up nothing in common run in lanes of
// their own (appendbatch.go) and share their statements: the session's
// counters add up, display_revision moves by one an append, and
// last_message_at reaches the newest message whatever order the lanes'
// rows went in.
func TestPipeline_AppendsOfOneSessionShare(t *testing.T) {
	ctx := t.Context()
	counter := &statementCounter{n: map[string]int{}}
	s := tracedStore(t, counter)
	for _, id := range []string{"hot", "cold"} {
		if _, err := s.CreateSession(ctx, store.NewSession{ID: id, Source: "test"}); err != nil {
			t.Fatal(err)
		}
	}
	revision := func() int64 {
		var r int64
		if err := s.eng.pool.QueryRow(ctx, "SELECT display_revision FROM sessions WHERE id = 'hot'").Scan(&r); err != nil {
			t.Fatal(err)
		}
		return r
	}
	before := revision()
	// A lane that pauses asks for its statement after the others: the
	// round waits for it, and sends what the others asked first.
	insertAt := func(sid string, at int64, lookUp bool, pauseInsert, pauseCount time.Duration) func(context.Context, driver.Executor) error {
		return func(ctx context.Context, tx driver.Executor) error {
			if lookUp { // as an append with an idempotency key does first
				key := fmt.Sprint("k", at)
				if _, err := tx.MessageIDByIdempotencyKey(ctx, driver.MessageIDByIdempotencyKeyParams{SessionID: sid, IdempotencyKey: &key}); !errors.Is(err, driver.ErrNotFound) {
					return fmt.Errorf("lookup: %v", err)
				}
			}
			time.Sleep(pauseInsert)
			if _, err := tx.MessageInsert(ctx, driver.MessageInsertParams{SessionID: sid, Role: "user", Content: fmt.Sprint("at ", at), CreatedAt: at}); err != nil {
				return err
			}
			time.Sleep(pauseCount)
			n, err := tx.SessionAddMessageCounts(ctx, driver.SessionAddMessageCountsParams{ID: sid, Messages: 1})
			if err == nil && n != 1 {
				err = fmt.Errorf("counted %d rows", n)
			}
			return err
		}
	}
	// The newest message (3000) is the first row of the appends that look
	// nothing up, and the append that looks up inserts its row (500) in
	// the round that counts them, before their count: counted by their own
	// number of newest rows (3), they would read 500, 2000 and 1000.
	const pause = 20 * time.Millisecond
	reqs := []struct {
		sid                     string
		at                      int64
		lookUp                  bool
		pauseInsert, pauseCount time.Duration
	}{{"hot", 3000, false, 0, pause}, {"hot", 500, true, 0, 0}, {"hot", 1000, false, pause, pause}, {"hot", 2000, false, pause, pause}, {"cold", 10, false, 0, 0}}
	var rs []*appendRequest
	for _, r := range reqs {
		rs = append(rs, &appendRequest{ctx: ctx, sessionID: r.sid, fn: insertAt(r.sid, r.at, r.lookUp, r.pauseInsert, r.pauseCount), looksUp: keyOf(r.at, r.lookUp),
			patience: 10 * time.Second, deadline: time.Now().Add(10 * time.Second), done: make(chan appendResult, 1)})
	}
	counter.take()
	s.eng.appends.runBatch(slices.Clone(rs), false)
	for i, r := range rs {
		select {
		case res := <-r.done:
			if res.err != nil {
				t.Errorf("append %d: %v", i, res.err)
			}
		default:
			t.Fatalf("append %d was not answered", i)
		}
	}
	checkSessionRow(t, s, "hot") // counts and last_message_at (3000)
	checkSessionRow(t, s, "cold")
	if got := revision() - before; got != 4 {
		t.Errorf("display_revision moved by %d, want 4 (one an append)", got)
	}
	n := counter.take()
	if n["MessageInsertMany"] != 1 || n["SessionAddMessageCountsMany"] < 1 || n["SessionAddMessageCounts"] != 0 {
		t.Errorf("statements %v: want the first round's rows in one MessageInsertMany and every count of hot in SessionAddMessageCountsMany", n)
	}
}

// keyOf is what an append keyed by "k<at>" looks up (driver.Appender).
func keyOf(at int64, keyed bool) []string {
	if !keyed {
		return nil
	}
	return []string{fmt.Sprint("kk", at)}
}

// Two appends of one session in one batch that look up the same key (a
// resend racing its original) run in order, in one lane: the second
// finds the first's row and inserts nothing, without the batch failing
// and running again careful. Appends with other keys run beside them.
func TestPipeline_OneKeyTwiceRunsInOrder(t *testing.T) {
	ctx := t.Context()
	s := openTestStore(t, Options{})
	if _, err := s.CreateSession(ctx, store.NewSession{ID: "hot", Source: "test"}); err != nil {
		t.Fatal(err)
	}
	// What the store's append does for a keyed message: look the key up,
	// insert when it is not there.
	appendKeyed := func(key string, got *int64) func(context.Context, driver.Executor) error {
		return func(ctx context.Context, tx driver.Executor) error {
			id, err := tx.MessageIDByIdempotencyKey(ctx, driver.MessageIDByIdempotencyKeyParams{SessionID: "hot", IdempotencyKey: &key})
			if err == nil {
				*got = id
				return nil
			}
			if !errors.Is(err, driver.ErrNotFound) {
				return err
			}
			if *got, err = tx.MessageInsert(ctx, driver.MessageInsertParams{SessionID: "hot", Role: "user", Content: key, IdempotencyKey: &key, CreatedAt: 1}); err != nil {
				return err
			}
			_, err = tx.SessionAddMessageCounts(ctx, driver.SessionAddMessageCountsParams{ID: "hot", Messages: 1})
			return err
		}
	}
	keys := []string{"a", "b", "a", "c"}
	ids := make([]int64, len(keys))
	var rs []*appendRequest
	for i, k := range keys {
		rs = append(rs, &appendRequest{ctx: ctx, sessionID: "hot", fn: appendKeyed(k, &ids[i]), looksUp: []string{"k" + k},
			patience: 10 * time.Second, deadline: time.Now().Add(10 * time.Second), done: make(chan appendResult, 1)})
	}
	reruns := s.eng.appends.reruns.Load()
	s.eng.appends.runBatch(slices.Clone(rs), false)
	for i, r := range rs {
		if res := <-r.done; res.err != nil {
			t.Fatalf("append %d (key %s): %v", i, keys[i], res.err)
		}
	}
	if ids[0] != ids[2] || ids[0] == ids[1] || ids[1] == ids[3] {
		t.Errorf("ids by key %v: %v; want the second a to find the first", keys, ids)
	}
	if got := s.eng.appends.reruns.Load() - reruns; got != 0 || s.eng.appends.careful.Load() != 0 {
		t.Errorf("the batch ran again %d times (careful batches left %d); want once, no failure", got, s.eng.appends.careful.Load())
	}
	checkSessionRow(t, s, "hot") // three messages, counted
}
