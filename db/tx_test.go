package db

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/ncruces/go-sqlite3"

	"github.com/sessiondb/sessiondb/db/gen"
)

// insertMeta is a write callback with a visible effect.
func insertMeta(key string) txFunc {
	return func(ctx context.Context, tx gen.DBTX) error {
		return queries.MetaUpsert(ctx, tx, gen.MetaUpsertParams{Key: key, Value: "v", UpdatedAt: now()})
	}
}

func TestWrite_PanicInCallbackRunsOnceAndRollsBack(t *testing.T) {
	s := openTestStore(t, Options{})
	calls := 0
	func() {
		defer func() {
			if p := recover(); p != "boom" {
				t.Errorf("recovered %v, want the callback's panic re-raised", p)
			}
		}()
		s.w.write(t.Context(), time.Second, func(ctx context.Context, tx gen.DBTX) error {
			calls++
			if err := insertMeta("k")(ctx, tx); err != nil {
				return err
			}
			panic("boom")
		})
	}()
	if calls != 1 {
		t.Errorf("callback ran %d times, want exactly 1", calls)
	}
	if _, err := s.Meta(t.Context(), "k"); !errors.Is(err, ErrNotFound) {
		t.Errorf("the panicking write was committed: Meta = %v", err)
	}
	// The writer is usable afterwards (the transaction was rolled back).
	if err := s.SetMeta(t.Context(), "after", "v"); err != nil {
		t.Errorf("write after a panic: %v", err)
	}
}

func TestWrite_NonLockErrorsAreNeverReplayed(t *testing.T) {
	errs := map[string]error{
		// An error of no known kind (the text a Python driver's bare
		// SystemError carries) is not a lock error either: never replayed.
		"PlainError":      errors.New("<Connection> returned NULL without setting an exception"),
		"IOError":         sqlite3.IOERR,
		"Constraint":      sqlite3.CONSTRAINT_UNIQUE,
		"Corrupt":         sqlite3.CORRUPT,
		"ContextCanceled": context.Canceled,
	}
	for name, cause := range errs {
		t.Run(name, func(t *testing.T) {
			s := openTestStore(t, Options{})
			calls := 0
			err := s.w.write(t.Context(), time.Second, func(ctx context.Context, tx gen.DBTX) error {
				calls++
				if err := insertMeta("k")(ctx, tx); err != nil {
					return err
				}
				return cause
			})
			if !errors.Is(err, cause) {
				t.Errorf("write = %v, want %v", err, cause)
			}
			if calls != 1 {
				t.Errorf("callback ran %d times, want exactly 1", calls)
			}
			if _, err := s.Meta(t.Context(), "k"); !errors.Is(err, ErrNotFound) {
				t.Errorf("the failed write was committed: Meta = %v", err)
			}
		})
	}
}

func TestWrite_LockErrorIsReplayedAfterRollback(t *testing.T) {
	s := openTestStore(t, Options{})
	calls := 0
	err := s.w.write(t.Context(), 5*time.Second, func(ctx context.Context, tx gen.DBTX) error {
		calls++
		if err := insertMeta(fmt.Sprint("try", calls))(ctx, tx); err != nil {
			return err
		}
		if calls == 1 {
			return sqlite3.BUSY // as a statement meeting another connection's lock would
		}
		return nil
	})
	if err != nil || calls != 2 {
		t.Fatalf("write = %v after %d calls, want success on the 2nd", err, calls)
	}
	if _, err := s.Meta(t.Context(), "try1"); !errors.Is(err, ErrNotFound) {
		t.Errorf("the rolled-back first try left its row: %v", err)
	}
	if _, err := s.Meta(t.Context(), "try2"); err != nil {
		t.Errorf("the replay's row is missing: %v", err)
	}
	if st := s.Stats(); st.LockRetries != 1 {
		t.Errorf("LockRetries = %d, want 1", st.LockRetries)
	}
}

// A failing post-commit maintenance step runs after COMMIT, so it must
// not fail or replay the write: exactly one message, MessageCount 1, and
// no error.
func TestWrite_PostCommitMaintenanceFailureDoesNotReplay(t *testing.T) {
	for name, step := range map[string]func() error{
		"Error": func() error { return errors.New("<Connection> returned NULL without setting an exception") },
		"Panic": func() error { panic("maintenance exploded") },
	} {
		t.Run(name, func(t *testing.T) {
			var maintenanceCalls atomic.Int32
			s := openTestStore(t, Options{afterCommit: func() error {
				if maintenanceCalls.Add(1) == 2 { // the append's (the 1st is the session's)
					return step()
				}
				return nil
			}})
			s.w.ix.paused.Store(true) // its slices run maintenance too
			ctx := t.Context()
			newTestSession(t, s, "s1")
			before := s.Stats()
			id, err := s.AppendMessage(ctx, "s1", NewMessage{Role: RoleUser, Content: "exactly-once"})
			if err != nil {
				t.Fatalf("AppendMessage = %v, want success despite maintenance failure", err)
			}
			msgs, _ := s.Messages(ctx, "s1", MessageQuery{})
			sess, _ := s.Session(ctx, "s1")
			if len(msgs) != 1 || msgs[0].ID != id || sess.MessageCount != 1 {
				t.Errorf("rows %d, MessageCount %d; want exactly one message", len(msgs), sess.MessageCount)
			}
			after := s.Stats()
			if after.WritesCommitted != before.WritesCommitted+1 || after.MaintenanceFailures != 1 {
				t.Errorf("stats %+v, want one more commit and one counted maintenance failure", after)
			}
			if maintenanceCalls.Load() != 2 {
				t.Errorf("maintenance ran %d times, want 2", maintenanceCalls.Load())
			}
		})
	}
}

func TestWrite_MaintenanceRuns(t *testing.T) {
	s := openTestStore(t, Options{FTSMergeEvery: 1, CheckpointEvery: 1})
	s.w.ix.paused.Store(true) // its slices run maintenance too
	newTestSession(t, s, "s1")
	before := s.Stats().MaintenanceRuns
	for i := range 5 {
		if _, err := s.AppendMessage(t.Context(), "s1", NewMessage{Role: RoleUser, Content: fmt.Sprint("m", i)}); err != nil {
			t.Fatal(err)
		}
	}
	st := s.Stats()
	if st.MaintenanceRuns-before != 5 || st.MaintenanceFailures != 0 {
		t.Errorf("maintenance ran %d times with %d failures after 5 serial appends; want 5 and 0 (a real checkpoint each time)",
			st.MaintenanceRuns-before, st.MaintenanceFailures)
	}
}

// FTS merges follow the transactions that add index segments — the
// indexer's — not appends, which write nothing to the indexes.
func TestWrite_MergesFollowIndexing(t *testing.T) {
	s := openTestStore(t, Options{FTSMergeEvery: 1, CheckpointEvery: -1})
	s.w.ix.paused.Store(true)
	newTestSession(t, s, "s1")
	before := s.Stats().MaintenanceRuns
	for i := range 5 {
		if _, err := s.AppendMessage(t.Context(), "s1", NewMessage{Role: RoleUser, Content: fmt.Sprint("m", i)}); err != nil {
			t.Fatal(err)
		}
	}
	if runs := s.Stats().MaintenanceRuns - before; runs != 0 {
		t.Errorf("%d merges after 5 appends with no checkpoints; want none (appends add no segment)", runs)
	}
	if err := s.IndexNow(t.Context()); err != nil {
		t.Fatal(err)
	}
	if st := s.Stats(); st.MaintenanceRuns-before != 1 || st.MaintenanceFailures != 0 {
		t.Errorf("after indexing the queue in one slice: %d maintenance runs, %d failures; want 1 merge, 0 failures",
			st.MaintenanceRuns-before, st.MaintenanceFailures)
	}
}

func TestWrite_RidesOutAnotherConnectionsLock(t *testing.T) {
	s := openTestStore(t, Options{WritePatience: 5 * time.Second})
	releasing := holdWriteLock(t, s.Path(), time.Second)
	start := time.Now()
	if err := s.SetMeta(t.Context(), "k", "v"); err != nil {
		t.Fatalf("SetMeta under a 1 s hold with 5 s patience: %v", err)
	}
	select {
	case <-releasing:
	default:
		t.Error("the write committed while the other connection still held the lock")
	}
	if d := time.Since(start); d < 900*time.Millisecond {
		t.Errorf("write finished after %v, before the hold ended", d)
	}
}

func TestWrite_ExhaustedPatienceNamesTheCause(t *testing.T) {
	const patience = 300 * time.Millisecond
	s := openTestStore(t, Options{WritePatience: patience, TranscriptPatience: time.Second})
	holdWriteLock(t, s.Path(), 3*time.Second)
	start := time.Now()
	err := s.SetMeta(t.Context(), "k", "v")
	waited := time.Since(start)
	if !errors.Is(err, ErrLocked) {
		t.Fatalf("SetMeta = %v, want ErrLocked", err)
	}
	var le *LockedError
	if !errors.As(err, &le) || le.Patience != patience {
		t.Errorf("error %v is not a *LockedError with the patience", err)
	}
	for _, want := range []string{"set meta", "another process", "state.db write lock", "300ms", "healthy"} {
		if !strings.Contains(err.Error(), want) {
			t.Errorf("error %q does not say %q", err, want)
		}
	}
	if waited < patience || waited > patience+2*time.Second {
		t.Errorf("gave up after %v, want about %v", waited, patience)
	}
	if st := s.Stats(); st.PatienceExhausted != 1 {
		t.Errorf("PatienceExhausted = %d, want 1", st.PatienceExhausted)
	}
}

func TestWrite_CancelledContext(t *testing.T) {
	s := openTestStore(t, Options{})
	newTestSession(t, s, "s1")
	holdWriteLock(t, s.Path(), 3*time.Second)
	ctx, cancel := context.WithTimeout(t.Context(), 200*time.Millisecond)
	defer cancel()
	_, err := s.AppendMessage(ctx, "s1", NewMessage{Role: RoleUser, Content: "x"})
	if !errors.Is(err, context.DeadlineExceeded) {
		t.Errorf("AppendMessage with an expiring context = %v, want context.DeadlineExceeded", err)
	}
}

// Readers hammering the store while batch appends run give zero errors
// on either side (run under -race): reads never share the writer's
// connection mid-batch.
func TestReadersDoNotRaceTheWriter(t *testing.T) {
	s := openTestStore(t, Options{})
	ctx := t.Context()
	newTestSession(t, s, "race")
	if err := s.SetMeta(ctx, "k", "v"); err != nil {
		t.Fatal(err)
	}
	duration := 3 * time.Second
	if testing.Short() {
		duration = time.Second
	}
	stop := make(chan struct{})
	var mu sync.Mutex
	var failures []string
	fail := func(who string, err error) {
		mu.Lock()
		failures = append(failures, who+": "+err.Error())
		mu.Unlock()
	}
	var wg sync.WaitGroup
	var batches, reads atomic.Int64
	wg.Go(func() {
		for n := 0; ; n++ {
			select {
			case <-stop:
				return
			default:
			}
			_, err := s.AppendMessages(ctx, "race", []NewMessage{
				{Role: RoleUser, Content: fmt.Sprint("u", n)},
				{Role: RoleAssistant, Content: fmt.Sprint("a", n), ToolCalls: []ToolCall{{ID: fmt.Sprint("c", n), Name: "x"}}},
				{Role: RoleTool, Content: fmt.Sprint("t", n), ToolName: "x", ToolCallID: fmt.Sprint("c", n)},
			})
			if err != nil {
				fail("writer", err)
				return
			}
			batches.Add(1)
		}
	})
	readers := []func() error{
		func() error { _, err := s.Session(ctx, "race"); return err },
		func() error {
			_, err := s.Messages(ctx, "race", MessageQuery{NewestFirst: true, Limit: 50})
			return err
		},
		func() error { _, err := s.Meta(ctx, "k"); return err },
		func() error { _, err := s.ListSessions(ctx, SessionFilter{}); return err },
	}
	for i := range 3 {
		wg.Go(func() {
			for n := i; ; n++ {
				select {
				case <-stop:
					return
				default:
				}
				if err := readers[n%len(readers)](); err != nil {
					fail("reader", err)
					return
				}
				reads.Add(1)
			}
		})
	}
	time.Sleep(duration)
	close(stop)
	wg.Wait()
	if len(failures) > 0 {
		t.Fatalf("errors under concurrent reads and writes: %v", failures)
	}
	sess, _ := s.Session(ctx, "race")
	if sess.MessageCount != 3*batches.Load() || sess.ToolCallCount != batches.Load() {
		t.Errorf("counters %d/%d after %d batches", sess.MessageCount, sess.ToolCallCount, batches.Load())
	}
	if batches.Load() == 0 || reads.Load() == 0 {
		t.Errorf("nothing ran: %d batches, %d reads", batches.Load(), reads.Load())
	}
	t.Logf("%d batches and %d reads in %v", batches.Load(), reads.Load(), duration)
}

// TestStats_LockWaitCountsAWaitInsideBegin: a write that got the lock
// after SQLite's busy handler waited for it (no retry needed) still counts
// that wait in Stats.LockWait.
func TestStats_LockWaitCountsAWaitInsideBegin(t *testing.T) {
	s := openTestStore(t, Options{})
	newTestSession(t, s, "s")
	holdWriteLock(t, s.Path(), 120*time.Millisecond)
	before := s.Stats().LockWait
	if _, err := s.AppendMessage(t.Context(), "s", NewMessage{Role: RoleUser, Content: "x"}); err != nil {
		t.Fatal(err)
	}
	if waited := s.Stats().LockWait - before; waited < 60*time.Millisecond {
		t.Errorf("LockWait grew by %v over a 120 ms hold", waited)
	}
}

// lateCtx is not done when the driver first looks (before the statement
// runs) but is done whenever it looks again: a deadline that passes while
// the statement runs. The driver looks again only from SQLite's progress
// callback, every 1,000 VM steps, counted across runs of a kept statement.
type lateCtx struct {
	context.Context
	looks atomic.Int32
}

func (c *lateCtx) Err() error {
	if c.looks.Add(1) == 1 {
		return nil
	}
	return context.DeadlineExceeded
}
func (c *lateCtx) Done() <-chan struct{}       { return nil }
func (c *lateCtx) Deadline() (time.Time, bool) { return time.Time{}, false }

// TestWrite_BeginInterruptedAfterItTookEffect: a BEGIN IMMEDIATE whose
// deadline passes as it finishes can report INTERRUPT with its
// transaction open (the progress callback fires after its last step);
// retried as a lock wait, that left the transaction open and failed the
// next BEGIN ("cannot start a transaction within a transaction", seen in
// a torture run). begin reports such a BEGIN as the success it is: after
// it, a transaction is open exactly when it returned nil.
func TestWrite_BeginInterruptedAfterItTookEffect(t *testing.T) {
	s := openTestStore(t, Options{})
	w := s.w
	w.mu.Lock()
	defer w.unlock()
	late := 0
	for i := range 2000 {
		ctx := &lateCtx{Context: context.Background()}
		err := w.begin(ctx, nil)
		open := w.inTransaction()
		if (err == nil) != open {
			t.Fatalf("run %d: begin returned %v with a transaction open: %v", i, err, open)
		}
		if err == nil && ctx.looks.Load() > 1 {
			late++ // the deadline passed inside BEGIN, after it took effect
		}
		w.rollback()
	}
	if late == 0 {
		t.Fatal("the deadline never passed inside a BEGIN in 2000 runs: the test no longer reaches the case")
	}
	t.Logf("%d of 2000 BEGINs saw their deadline pass after taking effect", late)
}

// TestWrite_StrayTransactionIsRolledBack: a transaction left open on the
// writer (never expected; a torture run once met one) would fail every
// later write with "cannot start a transaction within a transaction". The
// next write rolls it back — what it held was never acknowledged — logs
// it as a bug, counts it, and goes on.
func TestWrite_StrayTransactionIsRolledBack(t *testing.T) {
	logger, logs := debugLogs()
	s := openTestStore(t, Options{Logger: logger})
	newTestSession(t, s, "s")
	err := s.w.read(t.Context(), func(q genDBTX) error {
		//sessiondb:allow txonly -- leaves a transaction open on purpose
		if _, err := q.ExecContext(t.Context(), "BEGIN"); err != nil {
			return err
		}
		_, err := q.ExecContext(t.Context(), "INSERT INTO meta (key, value, updated_at) VALUES ('stray', 'x', 0)")
		return err
	})
	if err != nil {
		t.Fatal(err)
	}
	id, err := s.AppendMessage(t.Context(), "s", NewMessage{Role: RoleUser, Content: "after"})
	if err != nil {
		t.Fatalf("append after a stray transaction: %v", err)
	}
	if got := s.Stats().StrayTransactions; got != 1 {
		t.Errorf("StrayTransactions = %d, want 1", got)
	}
	if !strings.Contains(logs.String(), "left a transaction open") || !strings.Contains(logs.String(), "INSERT INTO meta") {
		t.Errorf("no error naming the last statement was logged:\n%s", logs)
	}
	if _, err := s.Meta(t.Context(), "stray"); !errors.Is(err, ErrNotFound) {
		t.Errorf("the stray transaction's row: %v; want it rolled back (ErrNotFound)", err)
	}
	if ms, err := s.Messages(t.Context(), "s", MessageQuery{}); err != nil || len(ms) != 1 || ms[0].ID != id {
		t.Errorf("Messages = %v, %v; want the one append", ms, err)
	}
}
