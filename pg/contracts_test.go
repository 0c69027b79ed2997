package pg

import (
	"context"
	"errors"
	"fmt"
	"math/rand/v2"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/sessiondb/sessiondb/store"
	"github.com/sessiondb/sessiondb/store/driver"
	"github.com/sessiondb/sessiondb/storetest"
)

// sideConn is a second connection to the store's schema, as another
// process's would be, closed when the test ends.
func sideConn(t *testing.T, s *Store) *pgx.Conn {
	t.Helper()
	cfg, err := ParseConfig(testDSN(t), s.Schema())
	if err != nil {
		t.Fatal(err)
	}
	conn, err := pgx.ConnectConfig(t.Context(), cfg.ConnConfig)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { conn.Close(context.Background()) })
	return conn
}

func sideExec(t *testing.T, conn *pgx.Conn, sql string, args ...any) {
	t.Helper()
	if _, err := conn.Exec(t.Context(), sql, args...); err != nil {
		t.Fatalf("%s: %v", sql, err)
	}
}

// TestWrite_PatienceBoundsTheLockWait: while another connection holds the
// session's row lock, a write waits its patience, then gives up with an
// ErrLocked that says the database is healthy — not sooner, and it works
// again once the lock is gone.
func TestWrite_PatienceBoundsTheLockWait(t *testing.T) {
	const patience = 400 * time.Millisecond
	s := openTestStore(t, Options{WritePatience: patience, TranscriptPatience: 2 * patience})
	ctx := t.Context()
	if _, err := s.CreateSession(ctx, store.NewSession{ID: "s", Source: "test"}); err != nil {
		t.Fatal(err)
	}
	holder := sideConn(t, s)
	sideExec(t, holder, "BEGIN")
	sideExec(t, holder, "SELECT id FROM sessions WHERE id = 's' FOR UPDATE")

	start := time.Now()
	err := s.SetSystemPrompt(ctx, "s", "be brief")
	waited := time.Since(start)
	if !errors.Is(err, store.ErrLocked) {
		t.Fatalf("SetSystemPrompt under a held row lock = %v, want ErrLocked", err)
	}
	var locked *LockedError
	if !errors.As(err, &locked) || !strings.Contains(err.Error(), "the database itself is healthy") {
		t.Errorf("error %q: want a *LockedError saying the database is healthy", err)
	}
	if waited < patience*9/10 || waited > patience+10*time.Second {
		t.Errorf("gave up after %v, want about the patience %v", waited, patience)
	}

	sideExec(t, holder, "ROLLBACK")
	if err := s.SetSystemPrompt(ctx, "s", "be brief"); err != nil {
		t.Fatalf("SetSystemPrompt after the lock went: %v", err)
	}
}

// TestWrite_CanceledWhileWaitingIsTheCallers: a write canceled by its
// caller while it waits for a lock reports the cancellation, not
// ErrLocked: the patience did not run out.
func TestWrite_CanceledWhileWaitingIsTheCallers(t *testing.T) {
	s := openTestStore(t, Options{WritePatience: 20 * time.Second})
	if _, err := s.CreateSession(t.Context(), store.NewSession{ID: "s", Source: "test"}); err != nil {
		t.Fatal(err)
	}
	holder := sideConn(t, s)
	sideExec(t, holder, "BEGIN")
	sideExec(t, holder, "SELECT id FROM sessions WHERE id = 's' FOR UPDATE")
	ctx, cancel := context.WithTimeout(t.Context(), 200*time.Millisecond)
	defer cancel()
	err := s.SetSystemPrompt(ctx, "s", "be brief")
	if !errors.Is(err, context.DeadlineExceeded) || errors.Is(err, store.ErrLocked) {
		t.Errorf("SetSystemPrompt canceled while waiting = %v, want the context's error and not ErrLocked", err)
	}
}

// TestWrite_RerunsASerializationFailure: a transaction whose row another
// committed transaction changed after it read it fails with 40001 at the
// server, which rolls it back; Write reruns fn, and only the rerun's
// effect is committed.
func TestWrite_RerunsASerializationFailure(t *testing.T) {
	s := openTestStore(t, Options{})
	ctx := t.Context()
	if _, err := s.CreateSession(ctx, store.NewSession{ID: "s", Source: "test"}); err != nil {
		t.Fatal(err)
	}
	other := sideConn(t, s)
	var runs atomic.Int32
	err := pgDriver{s.eng}.Write(ctx, 10*time.Second, func(ctx context.Context, tx driver.Executor) error {
		run := runs.Add(1)
		if _, err := tx.SessionGet(ctx, "s"); err != nil { // takes the snapshot
			return err
		}
		if run == 1 { // another writer changes the row and commits meanwhile
			sideExec(t, other, "UPDATE sessions SET system_prompt = 'theirs' WHERE id = 's'")
		}
		_, err := tx.SessionSetSystemPrompt(ctx, driver.SessionSetSystemPromptParams{SystemPrompt: new(fmt.Sprintf("ours, run %d", run)), ID: "s"})
		return err
	})
	if err != nil {
		t.Fatalf("Write: %v", err)
	}
	if got := runs.Load(); got != 2 {
		t.Errorf("fn ran %d times, want 2 (one serialization failure, one rerun)", got)
	}
	sess, err := s.Session(ctx, "s")
	if err != nil {
		t.Fatal(err)
	}
	if sess.SystemPrompt != "ours, run 2" {
		t.Errorf("system prompt %q, want the rerun's", sess.SystemPrompt)
	}
}

// TestWrite_RerunsWhenTheConnectionDiesBeforeCommit: the server session
// of a write ends mid-transaction (its backend terminated, as a server
// restart or a proxy would end it); the server aborted the transaction, so
// Write runs fn again on another connection and the write succeeds once.
func TestWrite_RerunsWhenTheConnectionDiesBeforeCommit(t *testing.T) {
	s := openTestStore(t, Options{})
	ctx := t.Context()
	if _, err := s.CreateSession(ctx, store.NewSession{ID: "s", Source: "test"}); err != nil {
		t.Fatal(err)
	}
	killer := sideConn(t, s)
	var runs atomic.Int32
	err := pgDriver{s.eng}.Write(ctx, 10*time.Second, func(ctx context.Context, tx driver.Executor) error {
		run := runs.Add(1)
		if _, err := tx.SessionGet(ctx, "s"); err != nil {
			return err
		}
		if run == 1 {
			var n int
			if err := killer.QueryRow(ctx, `SELECT count(pg_terminate_backend(pid, 5000)) FROM pg_stat_activity
				WHERE state = 'idle in transaction' AND datname = current_database() AND pid <> pg_backend_pid()`).Scan(&n); err != nil || n != 1 {
				t.Fatalf("terminate the writing backend: %d terminated, %v", n, err)
			}
		}
		_, err := tx.SessionSetSystemPrompt(ctx, driver.SessionSetSystemPromptParams{SystemPrompt: new(fmt.Sprintf("run %d", run)), ID: "s"})
		return err
	})
	if err != nil {
		t.Fatalf("Write: %v", err)
	}
	if got := runs.Load(); got != 2 {
		t.Errorf("fn ran %d times, want 2", got)
	}
	if sess, err := s.Session(ctx, "s"); err != nil || sess.SystemPrompt != "run 2" {
		t.Errorf("system prompt %q, %v; want the rerun's", sess.SystemPrompt, err)
	}
}

// TestWrite_ConnectionLostDuringCommitIsCommitUnknown: the server session
// ends while COMMIT runs (a deferred trigger holds the commit open, and
// another connection terminates the backend): the write reports
// ErrCommitUnknown and is not rerun. The write plants the trigger itself,
// after its guard (a trigger planted before would be refused as foreign,
// guard.go), and its rollback takes the trigger away.
func TestWrite_ConnectionLostDuringCommitIsCommitUnknown(t *testing.T) {
	s := openTestStore(t, Options{})
	ctx := t.Context()
	killer := sideConn(t, s)
	sideExec(t, killer, `CREATE FUNCTION slow_commit() RETURNS trigger LANGUAGE plpgsql AS
		$$ BEGIN PERFORM pg_sleep(30); RETURN NULL; END $$`)

	killed := make(chan error, 1)
	go func() {
		// The backend sleeping in the trigger is the one committing.
		deadline := time.Now().Add(20 * time.Second)
		for time.Now().Before(deadline) {
			var n int
			err := killer.QueryRow(ctx, `SELECT count(pg_terminate_backend(pid)) FROM pg_stat_activity
				WHERE wait_event = 'PgSleep' AND pid <> pg_backend_pid() AND query ILIKE 'commit%'`).Scan(&n)
			if err != nil || n > 0 {
				killed <- err
				return
			}
			time.Sleep(20 * time.Millisecond)
		}
		killed <- errors.New("no backend was seen committing")
	}()
	var runs atomic.Int32
	err := pgDriver{s.eng}.Write(ctx, 25*time.Second, func(ctx context.Context, tx driver.Executor) error {
		runs.Add(1)
		if _, err := tx.(pgExecutor).db.Exec(ctx, `CREATE CONSTRAINT TRIGGER slow_commit AFTER INSERT ON sessions
			DEFERRABLE INITIALLY DEFERRED FOR EACH ROW EXECUTE FUNCTION slow_commit()`); err != nil {
			return err
		}
		_, err := tx.SessionInsert(ctx, driver.SessionInsertParams{ID: "s", Source: "test", StartedAt: time.Now().UnixMilli()})
		return err
	})
	if kerr := <-killed; kerr != nil {
		t.Fatalf("terminate the committing backend: %v", kerr)
	}
	if !errors.Is(err, store.ErrCommitUnknown) {
		t.Fatalf("Write whose COMMIT lost its connection = %v, want ErrCommitUnknown", err)
	}
	if got := runs.Load(); got != 1 {
		t.Errorf("fn ran %d times, want 1: an unknown commit is never rerun", got)
	}
}

// TestAppend_IdempotentUnderConcurrentWriters: writers on their own
// connections send the same keyed messages to one session at once, each
// in its own order. Every message is stored exactly once, every writer is
// told the same id for a key, and the session's counter equals its rows.
func TestAppend_IdempotentUnderConcurrentWriters(t *testing.T) {
	const writers, keys = 8, 25
	s := openTestStore(t, Options{})
	ctx := t.Context()
	if _, err := s.CreateSession(ctx, store.NewSession{ID: "s", Source: "test"}); err != nil {
		t.Fatal(err)
	}
	ids := make([][keys]int64, writers)
	var wg sync.WaitGroup
	errs := make(chan error, writers*keys)
	for w := range writers {
		wg.Go(func() {
			for _, k := range rand.Perm(keys) {
				id, err := s.AppendMessage(ctx, "s", store.NewMessage{Role: store.RoleUser,
					Content: fmt.Sprintf("message %d", k), IdempotencyKey: fmt.Sprintf("k%d", k)})
				if err != nil {
					errs <- fmt.Errorf("writer %d key %d: %w", w, k, err)
					continue
				}
				ids[w][k] = id
			}
		})
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		t.Error(err)
	}
	for w := 1; w < writers; w++ {
		if ids[w] != ids[0] {
			t.Errorf("writer %d got ids %v, writer 0 %v", w, ids[w], ids[0])
		}
	}
	msgs := storetest.WholeSession(t, s.Store, "s") // checks MessageCount against the rows
	seen := map[string]int{}
	for _, m := range msgs {
		seen[m.Content]++
	}
	for k := range keys {
		if n := seen[fmt.Sprintf("message %d", k)]; n != 1 {
			t.Errorf("message %d stored %d times, want once", k, n)
		}
	}
	if len(msgs) != keys {
		t.Errorf("%d rows, want %d", len(msgs), keys)
	}
}
