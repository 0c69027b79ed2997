package pg

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/sessiondb/sessiondb/store"
	"github.com/sessiondb/sessiondb/store/driver"
)

// The append batches' per-caller outcomes in the cases a caller's failure
// reaches the batch other than as its callback's error (appendbatch.go,
// tx.go): a statement's failure the callback hid, and a failure the server
// reports only at COMMIT. Each caller is answered alone; the others'
// messages are committed and counted.

// appendContent is an append callback inserting content into sid and
// counting it, as the store's append does.
func appendContent(sid, content string) func(context.Context, driver.Executor) error {
	return func(ctx context.Context, tx driver.Executor) error {
		if _, err := tx.MessageInsert(ctx, driver.MessageInsertParams{SessionID: sid, Role: "user", Content: content, CreatedAt: time.Now().UnixMilli()}); err != nil {
			return err
		}
		n, err := tx.SessionAddMessageCounts(ctx, driver.SessionAddMessageCountsParams{ID: sid, Messages: 1})
		if err == nil && n == 0 {
			err = store.ErrNotFound
		}
		return err
	}
}

// messageCounts is each session's messages, read from the table.
func messageCounts(t *testing.T, s *Store, sessions ...string) map[string]int {
	t.Helper()
	out := map[string]int{}
	for _, sid := range sessions {
		var n int
		if err := s.eng.pool.QueryRow(t.Context(), "SELECT count(*) FROM messages WHERE session_id = $1", sid).Scan(&n); err != nil {
			t.Fatal(err)
		}
		out[sid] = n
	}
	return out
}

// A callback that swallows a failed statement's error leaves the server's
// transaction aborted: COMMIT would roll everyone back. Its caller gets
// errSwallowed, once, and the batch's other callers commit — before, the
// batch ran again as it was until every caller's patience ran out
// (ErrLocked for all, the swallowing callback run again and again).
func TestAppendSwallowedStatementErrorIsItsCallersAlone(t *testing.T) {
	s := openTestStore(t, Options{})
	ctx := t.Context()
	for _, id := range []string{"a", "b", "c"} {
		if _, err := s.CreateSession(ctx, store.NewSession{ID: id, Source: "test"}); err != nil {
			t.Fatal(err)
		}
	}
	var runs sync.Map // test case -> runs of its swallowing callback
	swallow := func(name, sid string) func(context.Context, driver.Executor) error {
		return func(ctx context.Context, tx driver.Executor) error {
			n, _ := runs.LoadOrStore(name, new(int))
			*n.(*int)++
			// A role the CHECK constraint refuses: the statement fails,
			// and the callback says nothing of it.
			_, _ = tx.MessageInsert(ctx, driver.MessageInsertParams{SessionID: sid, Role: "nobody", Content: "hidden", CreatedAt: time.Now().UnixMilli()})
			return nil
		}
	}
	for _, tc := range []struct {
		name     string
		sessions []string
		swallows int // the index of the swallowing caller
	}{
		{"among others, pipelined", []string{"a", "b", "c"}, 1},
		{"beside its own session's append", []string{"a", "a", "b"}, 1},
		{"alone", []string{"b"}, 0},
	} {
		t.Run(tc.name, func(t *testing.T) {
			before := messageCounts(t, s, "a", "b", "c")
			fns := make([]func(context.Context, driver.Executor) error, len(tc.sessions))
			for i, sid := range tc.sessions {
				fns[i] = appendContent(sid, fmt.Sprint(tc.name, i))
				if i == tc.swallows {
					fns[i] = swallow(tc.name, sid)
				}
			}
			start := time.Now()
			res := runOneBatch(t, s, tc.sessions, fns)
			want := map[string]int{}
			for i, r := range res {
				if i == tc.swallows {
					if !errors.Is(r.err, errSwallowed) {
						t.Errorf("the swallowing caller got %v, want errSwallowed", r.err)
					}
					noServerText(t, r.err)
					continue
				}
				if r.err != nil {
					t.Errorf("caller %d (%s): %v, want its message committed", i, tc.sessions[i], r.err)
				}
				want[tc.sessions[i]]++
			}
			if took := time.Since(start); took > 5*time.Second {
				t.Errorf("the batch took %v: it ran again until patience ran out", took)
			}
			// Among others, its first run is the try for one round trip
			// (oneround.go), which sends nothing of it.
			if n, _ := runs.Load(tc.name); *n.(*int) > 3 {
				t.Errorf("the swallowing callback ran %d times, want at most 3 (tried for one round, the batch, then careful)", *n.(*int))
			}
			after := messageCounts(t, s, "a", "b", "c")
			for _, sid := range []string{"a", "b", "c"} {
				if after[sid] != before[sid]+want[sid] {
					t.Errorf("session %s: %d messages, want %d + %d acknowledged", sid, after[sid], before[sid], want[sid])
				}
				checkSessionRow(t, s, sid)
			}
		})
	}
}

// A failure the server reports only at COMMIT (here a unique constraint a
// DBA added as DEFERRABLE INITIALLY DEFERRED, which the schema guard lets
// be: it runs no code of the DBA's) is the caller's whose message
// violates it: the batch runs again careful, constraints checked at each
// statement, and only that caller gets the error — ErrForeignSchema naming
// the DBA's constraint (mapError). Before, every caller of the batch got
// the COMMIT's error.
func TestAppendCommitTimeFailureIsItsCallersAlone(t *testing.T) {
	s := openTestStore(t, Options{})
	ctx := t.Context()
	for _, id := range []string{"a", "b", "c"} {
		if _, err := s.CreateSession(ctx, store.NewSession{ID: id, Source: "test"}); err != nil {
			t.Fatal(err)
		}
	}
	if _, err := s.eng.pool.Exec(ctx, "ALTER TABLE messages ADD CONSTRAINT dba_unique_content UNIQUE (content) DEFERRABLE INITIALLY DEFERRED"); err != nil {
		t.Fatal(err)
	}
	if _, err := s.AppendMessage(ctx, "c", store.NewMessage{Role: store.RoleUser, Content: "taken"}); err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		name     string
		sessions []string
		contents []string
		want     []bool // committed
	}{
		{"one caller repeats a stored message", []string{"a", "b", "c"}, []string{"new 1", "taken", "new 2"}, []bool{true, false, true}},
		{"two callers of one batch collide", []string{"a", "b", "a"}, []string{"twice", "new 3", "twice"}, []bool{true, true, false}},
		{"alone", []string{"b"}, []string{"taken"}, []bool{false}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			before := messageCounts(t, s, "a", "b", "c")
			fns := make([]func(context.Context, driver.Executor) error, len(tc.sessions))
			for i, sid := range tc.sessions {
				fns[i] = appendContent(sid, tc.contents[i])
			}
			res := runOneBatch(t, s, tc.sessions, fns)
			want := map[string]int{}
			for i, r := range res {
				switch {
				case tc.want[i] && r.err != nil:
					t.Errorf("caller %d (%q): %v, want its message committed", i, tc.contents[i], r.err)
				case !tc.want[i] && (!errors.Is(r.err, store.ErrForeignSchema) || !strings.Contains(r.err.Error(), "dba_unique_content")):
					t.Errorf("caller %d (%q): %v, want ErrForeignSchema naming dba_unique_content", i, tc.contents[i], r.err)
				}
				if tc.want[i] {
					want[tc.sessions[i]]++
				}
			}
			after := messageCounts(t, s, "a", "b", "c")
			for _, sid := range []string{"a", "b", "c"} {
				if after[sid] != before[sid]+want[sid] {
					t.Errorf("session %s: %d messages, want %d + %d acknowledged", sid, after[sid], before[sid], want[sid])
				}
				checkSessionRow(t, s, sid)
			}
		})
	}
}

// holdSessionRow locks a session's row from another connection, as
// another process's long transaction would, until the test releases it
// (the returned func, also run at the test's end).
func holdSessionRow(t *testing.T, s *Store, id string) (release func()) {
	t.Helper()
	cfg, err := ParseConfig(testDSN(t), s.Schema())
	if err != nil {
		t.Fatal(err)
	}
	side, err := pgx.ConnectConfig(t.Context(), cfg.ConnConfig)
	if err != nil {
		t.Fatal(err)
	}
	tx, err := side.Begin(t.Context()) //sessiondb:allow txonly -- plays another process holding the session row
	if err != nil {
		t.Fatal(err)
	}
	if _, err := tx.Exec(t.Context(), "SELECT 1 FROM sessions WHERE id = $1 FOR UPDATE", id); err != nil {
		t.Fatal(err)
	}
	var once sync.Once
	release = func() {
		once.Do(func() {
			_ = tx.Rollback(context.Background())
			_ = side.Close(context.Background())
		})
	}
	t.Cleanup(release)
	return release
}

// waitFor polls cond until it holds or the test fails after a while.
func waitFor(t *testing.T, what string, cond func() bool) {
	t.Helper()
	for deadline := time.Now().Add(10 * time.Second); !cond(); time.Sleep(5 * time.Millisecond) {
		if time.Now().After(deadline) {
			t.Fatalf("timed out waiting for %s", what)
		}
	}
}

// An append run aside (its session's row held elsewhere) keeps its
// session in flight until it is answered: the next append to that session
// waits in the queue instead of being taken by a leader's batch, skipped
// and sent aside in turn — before, every append to a held session went
// through a batch of its own and aside (inFlight released by the leader
// while the aside goroutine still ran it).
func TestAppendAsideKeepsItsSessionInFlight(t *testing.T) {
	s := openTestStore(t, Options{TranscriptPatience: 25 * time.Second})
	ctx := t.Context()
	for _, id := range []string{"held", "free"} {
		if _, err := s.CreateSession(ctx, store.NewSession{ID: id, Source: "test"}); err != nil {
			t.Fatal(err)
		}
	}
	a := s.eng.appends
	release := holdSessionRow(t, s, "held")
	var wg sync.WaitGroup
	appendTo := func(sid, content string) {
		wg.Go(func() {
			if _, err := s.AppendMessage(ctx, sid, store.NewMessage{Role: store.RoleUser, Content: content}); err != nil {
				t.Errorf("append %q to %s: %v", content, sid, err)
			}
		})
	}
	appendTo("held", "first")
	waitFor(t, "the first append to go aside", func() bool { return a.asides.Load() == 1 })
	for i := range 3 {
		appendTo("held", fmt.Sprint("next ", i))
	}
	for i := range 8 { // other sessions' appends go on meanwhile
		appendTo("free", fmt.Sprint("free ", i))
	}
	waitFor(t, "the free session's appends", func() bool { return messageCounts(t, s, "free")["free"] == 8 })
	time.Sleep(100 * time.Millisecond) // time for a leader to take the next ones, were it allowed
	if n := a.asides.Load(); n != 1 {
		t.Errorf("%d appends went aside while the first waited, want 1: the others should wait in the queue", n)
	}
	release()
	wg.Wait()
	if got := messageCounts(t, s, "held")["held"]; got != 4 {
		t.Errorf("held session: %d messages, want 4", got)
	}
	checkSessionRow(t, s, "held")
	checkSessionRow(t, s, "free")
}

// Close ends the appends waiting aside and waits for their goroutine:
// once it returns nothing of the store runs on a pool given to OpenPool
// (its owner may close it or drop the schema), and the waiting caller is
// answered ErrClosed at once, not when its patience runs out.
func TestCloseAwaitsAppendsAside(t *testing.T) {
	pool := migratedPool(t)
	s, err := OpenPool(t.Context(), pool, Options{TranscriptPatience: 40 * time.Second})
	if err != nil {
		t.Fatal(err)
	}
	ctx := t.Context()
	if _, err := s.CreateSession(ctx, store.NewSession{ID: "held", Source: "test"}); err != nil {
		t.Fatal(err)
	}
	holdSessionRow(t, s, "held")
	a := s.eng.appends
	answered := make(chan error, 1)
	go func() {
		_, err := s.AppendMessage(ctx, "held", store.NewMessage{Role: store.RoleUser, Content: "waits"})
		answered <- err
	}()
	waitFor(t, "the append to go aside", func() bool { return a.asides.Load() == 1 })
	time.Sleep(50 * time.Millisecond) // the aside batch waits for the row's lock
	start := time.Now()
	if err := s.Close(); err != nil {
		t.Fatal(err)
	}
	a.qmu.Lock()
	running := a.asideRunning
	a.qmu.Unlock()
	if running {
		t.Error("Close returned while the aside goroutine still ran on the pool")
	}
	select {
	case err := <-answered:
		if !errors.Is(err, store.ErrClosed) {
			t.Errorf("the append waiting aside got %v, want ErrClosed", err)
		}
		noServerText(t, err)
	case <-time.After(5 * time.Second):
		t.Fatal("the append waiting aside was not answered after Close")
	}
	if took := time.Since(start); took > 5*time.Second {
		t.Errorf("Close and the answer took %v, want at once", took)
	}
}
