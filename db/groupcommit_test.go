package db

import (
	"context"
	"errors"
	"fmt"
	"io"
	"sync"
	"testing"
	"time"

	"github.com/ncruces/go-sqlite3"
)

// blockWriter runs a write whose callback holds the writer for hold, so
// that writes started meanwhile queue up and share the next transaction.
// It returns once the blocking write is inside its transaction.
func blockWriter(t *testing.T, s *Store, hold time.Duration) (done <-chan error) {
	t.Helper()
	inside := make(chan struct{})
	out := make(chan error, 1)
	go func() {
		out <- s.w.write(context.Background(), time.Minute, func(ctx context.Context, tx genDBTX) error {
			close(inside)
			time.Sleep(hold)
			return insertMeta("blocker")(ctx, tx)
		})
	}()
	<-inside
	return out
}

// waitQueued waits until n writes wait for the next batch.
func waitQueued(t *testing.T, s *Store, n int) {
	t.Helper()
	for deadline := time.Now().Add(10 * time.Second); time.Now().Before(deadline); time.Sleep(time.Millisecond) {
		s.w.qmu.Lock()
		queued := len(s.w.queue)
		s.w.qmu.Unlock()
		if queued >= n {
			return
		}
	}
	t.Fatalf("fewer than %d writes queued after 10 s", n)
}

// A failing (or panicking) caller's changes are undone and the others
// commit, each once.
func TestGroupCommit_FailingCallerRollsBackAlone(t *testing.T) {
	s := openTestStore(t, Options{})
	before := s.Stats()
	blocked := blockWriter(t, s, time.Second)

	type outcome struct {
		err      error
		panicked any
	}
	outcomes := make([]outcome, 10)
	calls := make([]int, 10)
	var wg sync.WaitGroup
	for i := range 10 {
		wg.Go(func() {
			defer func() { outcomes[i].panicked = recover() }()
			outcomes[i].err = s.w.write(context.Background(), time.Minute, func(ctx context.Context, tx genDBTX) error {
				calls[i]++
				if err := insertMeta(fmt.Sprint("k", i))(ctx, tx); err != nil {
					return err
				}
				switch i {
				case 3:
					return errors.New("this caller fails")
				case 7:
					panic("this caller panics")
				}
				return nil
			})
		})
	}
	waitQueued(t, s, 10) // all ten wait behind the blocker
	if err := <-blocked; err != nil {
		t.Fatal(err)
	}
	wg.Wait()

	twice := 0
	for i := range 10 {
		_, err := s.Meta(t.Context(), fmt.Sprint("k", i))
		switch i {
		case 3:
			if outcomes[i].err == nil || !errors.Is(err, ErrNotFound) {
				t.Errorf("failing caller: returned %v, its row: %v", outcomes[i].err, err)
			}
		case 7:
			if outcomes[i].panicked != "this caller panics" || !errors.Is(err, ErrNotFound) {
				t.Errorf("panicking caller: recovered %v, its row: %v", outcomes[i].panicked, err)
			}
		default:
			if outcomes[i].err != nil || err != nil {
				t.Errorf("caller %d: returned %v, its row: %v", i, outcomes[i].err, err)
			}
		}
		// The batch ran first without savepoints: the first failure in it
		// undid it, and all ten ran again, each in its own savepoint. The
		// callers queued up to that failure ran twice, the others once.
		if calls[i] != 1 && calls[i] != 2 {
			t.Errorf("caller %d's callback ran %d times, want 1 or 2", i, calls[i])
		}
		twice += btoi(calls[i] == 2)
	}
	if twice == 0 {
		t.Error("no callback ran twice: the batch was never undone")
	}
	st := s.Stats()
	writes, txs := st.WritesCommitted-before.WritesCommitted, st.Transactions-before.Transactions
	if writes != 9 || txs != 2 {
		t.Errorf("%d writes in %d transactions; want 9 writes (the blocker, then 8 together) in 2", writes, txs)
	}
	if n := st.BatchReplays - before.BatchReplays; n != 1 {
		t.Errorf("Stats.BatchReplays = %d, want the one batch undone", n)
	}
	t.Logf("%d writes committed in %d transactions", writes, txs)
}

func TestGroupCommit_CancelledWhileQueuedNeverRuns(t *testing.T) {
	s := openTestStore(t, Options{})
	blocked := blockWriter(t, s, time.Second)
	ctx, cancel := context.WithCancel(t.Context())
	ran := false
	errc := make(chan error, 1)
	go func() {
		errc <- s.w.write(ctx, time.Minute, func(ctx context.Context, tx genDBTX) error {
			ran = true
			return insertMeta("cancelled")(ctx, tx)
		})
	}()
	waitQueued(t, s, 1)
	cancel()
	if err := <-errc; !errors.Is(err, context.Canceled) {
		t.Errorf("cancelled queued write = %v, want context.Canceled", err)
	}
	if err := <-blocked; err != nil {
		t.Fatal(err)
	}
	if ran {
		t.Error("a write cancelled while queued ran its callback")
	}
	if _, err := s.Meta(t.Context(), "cancelled"); !errors.Is(err, ErrNotFound) {
		t.Errorf("the cancelled write's row: %v", err)
	}
}

func TestGroupCommit_ConcurrentAppendsShareTransactions(t *testing.T) {
	s := openTestStore(t, Options{})
	newTestSession(t, s, "g")
	before := s.Stats()
	var wg sync.WaitGroup
	for w := range 16 {
		wg.Go(func() {
			for n := range 20 {
				if _, err := s.AppendMessage(t.Context(), "g", NewMessage{Role: RoleUser, Content: fmt.Sprint(w, "-", n), IdempotencyKey: fmt.Sprint(w, "-", n)}); err != nil {
					t.Error(err)
					return
				}
			}
		})
	}
	wg.Wait()
	st := s.Stats()
	writes, txs := st.WritesCommitted-before.WritesCommitted, st.Transactions-before.Transactions
	sess, _ := s.Session(t.Context(), "g")
	msgs, _ := s.Messages(t.Context(), "g", MessageQuery{Limit: 1000})
	if writes != 320 || sess.MessageCount != 320 || len(msgs) != 320 {
		t.Errorf("writes %d, MessageCount %d, rows %d; want 320", writes, sess.MessageCount, len(msgs))
	}
	if txs >= writes {
		t.Errorf("%d transactions for %d writes: nothing was grouped", txs, writes)
	}
	t.Logf("16 appenders: %d writes in %d transactions (%.1f per fsync)", writes, txs, float64(writes)/float64(txs))
}

// appendConcurrently has appenders goroutines append n messages each to
// session "g" and returns the writes and transactions they took.
func appendConcurrently(t *testing.T, s *Store, appenders, n int) (writes, txs uint64) {
	t.Helper()
	before := s.Stats()
	var wg sync.WaitGroup
	for w := range appenders {
		wg.Go(func() {
			for i := range n {
				if _, err := s.AppendMessage(t.Context(), "g", NewMessage{Role: RoleUser, Content: fmt.Sprint(w, "-", i)}); err != nil {
					t.Error(err)
					return
				}
			}
		})
	}
	wg.Wait()
	st := s.Stats()
	return st.WritesCommitted - before.WritesCommitted, st.Transactions - before.Transactions
}

// TestGroupCommit_LeaderGathersTheLastBatchsWriters: under steady
// concurrency a leader waits (briefly) for the last batch's writers to
// queue again, so batches stay full instead of alternating between the
// first writer back and all the others (which averages about half of
// them). The wait is lengthened here so a loaded machine cannot miss it.
func TestGroupCommit_LeaderGathersTheLastBatchsWriters(t *testing.T) {
	const appenders = 8
	s := openTestStore(t, Options{gatherWait: 20 * time.Millisecond})
	newTestSession(t, s, "g")
	writes, txs := appendConcurrently(t, s, appenders, 40)
	perTx := float64(writes) / float64(txs)
	t.Logf("%d appenders: %d writes in %d transactions (%.1f each)", appenders, writes, txs, perTx)
	if perTx < 0.75*appenders {
		t.Errorf("%.1f writes a transaction with %d steady appenders; want at least %.0f (batches stay full)", perTx, appenders, 0.75*appenders)
	}
}

// TestGroupCommit_MaintenanceCountsBatches: post-commit maintenance runs
// every N transactions, not every N writes — a batch writes the WAL and
// one full-text segment once for all its writes.
func TestGroupCommit_MaintenanceCountsBatches(t *testing.T) {
	s := openTestStore(t, Options{CheckpointEvery: 2, FTSMergeEvery: -1, gatherWait: 20 * time.Millisecond})
	s.w.ix.paused.Store(true) // its transactions count as batches too
	newTestSession(t, s, "g")
	before := s.Stats().MaintenanceRuns
	writes, txs := appendConcurrently(t, s, 8, 40)
	runs := s.Stats().MaintenanceRuns - before
	t.Logf("%d writes, %d transactions, %d maintenance runs", writes, txs, runs)
	if txs > writes/2 {
		t.Fatalf("%d transactions for %d writes: too little grouping to tell batches from writes", txs, writes)
	}
	if runs > txs/2+1 {
		t.Errorf("%d maintenance runs for %d transactions (%d writes); want one every 2 transactions", runs, txs, writes)
	}
}

// inSavepoint reports whether tx runs inside the writer's per-caller
// SAVEPOINT: rolling back to a savepoint that does not exist is an error.
func inSavepoint(ctx context.Context, tx genDBTX) bool {
	//sessiondb:allow txonly -- probes for the writer's savepoint; inside one it undoes nothing yet
	_, err := tx.ExecContext(ctx, "ROLLBACK TO sessiondb_call")
	return err == nil
}

// A batch runs without savepoints until one of its callers fails; then it
// runs again with every caller in its own savepoint (a failure undoes only
// its own changes), and so do the batches after it for a while. A lone
// caller needs none.
func TestGroupCommit_EachCallerInItsOwnSavepoint(t *testing.T) {
	for _, tc := range []struct {
		name         string
		callers      int
		failing      int  // the caller that fails, -1 for none
		afterFailure bool // a batch with a failure ran first
		wantIsolated bool // in the run that gave the outcomes
	}{
		{"lone caller", 1, -1, false, false},
		{"batch", 6, -1, false, false},
		{"batch with a failure", 6, 2, false, true},
		{"batch after a failure", 6, -1, true, true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			s := openTestStore(t, Options{})
			if tc.afterFailure {
				fail := func() error {
					return s.w.write(context.Background(), time.Minute, func(ctx context.Context, tx genDBTX) error {
						return errors.New("this caller fails")
					})
				}
				for _, out := range queueBehindMu(t, s, fail, fail) {
					if err, done := wait(t, out, 10*time.Second); !done || err == nil {
						t.Fatalf("failing batch: %v (done %v)", err, done)
					}
				}
			}
			var mu sync.Mutex
			isolated := map[int]bool{}
			writes := make([]func() error, tc.callers)
			for i := range writes {
				writes[i] = func() error {
					return s.w.write(context.Background(), time.Minute, func(ctx context.Context, tx genDBTX) error {
						sp := inSavepoint(ctx, tx)
						mu.Lock()
						isolated[i] = sp
						mu.Unlock()
						if i == tc.failing {
							return errors.New("this caller fails")
						}
						return insertMeta(fmt.Sprint("k", i))(ctx, tx)
					})
				}
			}
			outs := queueBehindMu(t, s, writes...)
			for i, out := range outs {
				err, done := wait(t, out, 10*time.Second)
				if !done {
					t.Fatalf("caller %d: no outcome", i)
				}
				_, rowErr := s.Meta(t.Context(), fmt.Sprint("k", i))
				if (err != nil) != (i == tc.failing) || (rowErr == nil) != (i != tc.failing) {
					t.Errorf("caller %d: returned %v, its row: %v", i, err, rowErr)
				}
				if isolated[i] != tc.wantIsolated {
					t.Errorf("caller %d ran in a savepoint: %v, want %v", i, isolated[i], tc.wantIsolated)
				}
			}
		})
	}
}

// A failing caller's outcome agrees with what commits. B fails because it
// sees A's row while A's caller gives up mid-batch: A's batch has started,
// so A's write stands and is acknowledged, and B's "exists" is true.
func TestGroupCommit_FailureJudgedAgainstWhatCommits(t *testing.T) {
	s := openTestStore(t, Options{})
	actx, cancel := context.WithCancel(context.Background())
	defer cancel()
	outs := queueBehindMu(t, s,
		func() error {
			return s.w.write(actx, time.Minute, func(ctx context.Context, tx genDBTX) error {
				err := insertMeta("x")(ctx, tx)
				cancel() // a request timeout while the batch runs
				return err
			})
		},
		func() error {
			return s.w.write(context.Background(), time.Minute, func(ctx context.Context, tx genDBTX) error {
				if _, err := queries.MetaGet(ctx, tx, "x"); err == nil {
					return fmt.Errorf("x: %w", ErrExists)
				}
				return insertMeta("x")(ctx, tx)
			})
		},
	)
	aErr, _ := wait(t, outs[0], 10*time.Second)
	bErr, _ := wait(t, outs[1], 10*time.Second)
	_, getErr := s.Meta(t.Context(), "x")
	committed := getErr == nil
	t.Logf("A: %v; B: %v; x committed: %v", aErr, bErr, committed)
	if errors.Is(bErr, ErrExists) && !committed {
		t.Errorf("B was told ErrExists, but x never committed")
	}
	if (aErr == nil || bErr == nil) != committed {
		t.Errorf("a caller's outcome disagrees with the data: A %v, B %v, x committed %v", aErr, bErr, committed)
	}
}

// A callback that ignores an error which made SQLite roll the whole
// transaction back must not be told its write stands, and the callers
// after it must not commit outside any transaction.
func TestGroupCommit_SwallowedRollback(t *testing.T) {
	for _, batched := range []bool{false, true} {
		t.Run(fmt.Sprint("batched=", batched), func(t *testing.T) {
			s := openTestStore(t, Options{})
			if err := s.SetMeta(t.Context(), "dup", "v"); err != nil {
				t.Fatal(err)
			}
			swallow := func(ctx context.Context, tx genDBTX) error {
				if err := insertMeta("mine")(ctx, tx); err != nil {
					return err
				}
				// OR ROLLBACK: the constraint error rolls back the whole
				// transaction; the callback ignores it.
				_, _ = tx.ExecContext(ctx, "INSERT OR ROLLBACK INTO meta(key, value, updated_at) VALUES ('dup', 'x', 0)")
				return nil
			}
			w := func(f txFunc) func() error {
				return func() error { return s.w.write(context.Background(), 5*time.Second, f) }
			}
			writes := []func() error{w(swallow)}
			if batched {
				writes = []func() error{w(insertMeta("before")), w(swallow), w(insertMeta("after"))}
			}
			outs := queueBehindMu(t, s, writes...)
			keys := []string{"mine"}
			if batched {
				keys = []string{"before", "mine", "after"}
			}
			for i, out := range outs {
				err, done := wait(t, out, 10*time.Second)
				if !done {
					t.Fatalf("%s: no outcome", keys[i])
				}
				_, rowErr := s.Meta(t.Context(), keys[i])
				if keys[i] == "mine" {
					if !errors.Is(err, errRolledBack) || rowErr == nil {
						t.Errorf("swallowing caller: returned %v, its row: %v; want errRolledBack and no row", err, rowErr)
					}
					continue
				}
				if err != nil || rowErr != nil {
					t.Errorf("%s: returned %v, row %v; want both fine", keys[i], err, rowErr)
				}
			}
			if err := s.w.halted(); err != nil {
				t.Errorf("halted: %v", err)
			}
		})
	}
}

// queueBehindMu queues writes (in this order) while the test holds the
// writer lock, then releases it: they form one batch led by the first.
func queueBehindMu(t *testing.T, s *Store, writes ...func() error) []chan error {
	t.Helper()
	s.w.mu.Lock()
	outs := make([]chan error, len(writes))
	for i, w := range writes {
		outs[i] = make(chan error, 1)
		go func() { outs[i] <- w() }()
		time.Sleep(30 * time.Millisecond)
	}
	s.w.unlock()
	return outs
}

func wait(t *testing.T, c chan error, d time.Duration) (error, bool) {
	t.Helper()
	select {
	case err := <-c:
		return err, true
	case <-time.After(d):
		return nil, false
	}
}

// A callback whose statement makes SQLite roll back the whole shared
// transaction (OR ROLLBACK here; INTERRUPT, FULL, NOMEM, IOERR do the same)
// fails its own caller only: every other caller's answer matches what the
// file holds, and one caller's error does not halt the store.
func TestGroupCommit_AutoRollbackMidBatch(t *testing.T) {
	s := openTestStore(t, Options{})
	if err := s.SetMeta(t.Context(), "dup", "v"); err != nil {
		t.Fatal(err)
	}
	w := func(f txFunc) func() error {
		return func() error { return s.w.write(context.Background(), 5*time.Second, f) }
	}
	outs := queueBehindMu(t, s,
		w(insertMeta("a")),
		w(func(ctx context.Context, tx genDBTX) error {
			_, err := tx.ExecContext(ctx, "INSERT OR ROLLBACK INTO meta(key, value, updated_at) VALUES ('dup', 'x', 0)")
			return err
		}),
		w(insertMeta("c")),
	)
	for i, name := range []string{"a", "b(rollback)", "c"} {
		err, ok := wait(t, outs[i], 5*time.Second)
		_, rowErr := s.Meta(t.Context(), map[int]string{0: "a", 1: "dup", 2: "c"}[i])
		t.Logf("%s: returned %v (done=%v); row err: %v", name, err, ok, rowErr)
		if i != 1 && (err != nil) != (rowErr != nil) {
			t.Errorf("%s: caller told %v but row lookup says %v", name, err, rowErr)
		}
	}
	if err := s.w.halted(); err != nil {
		t.Errorf("store halted by one caller's constraint error: %v", err)
	}
	if n := s.Stats().BatchReplays; n != 1 {
		t.Errorf("Stats.BatchReplays = %d, want the one batch rolled back", n)
	}
}

// The common way a whole batch is rolled back: one caller's context ends
// mid-statement and SQLite interrupts it. Again only that caller fails.
func TestGroupCommit_InterruptMidBatch(t *testing.T) {
	s := openTestStore(t, Options{})
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	outs := queueBehindMu(t, s,
		func() error { return s.w.write(context.Background(), 5*time.Second, insertMeta("a")) },
		func() error {
			return s.w.write(ctx, 5*time.Second, func(ctx context.Context, tx genDBTX) error {
				time.AfterFunc(20*time.Millisecond, cancel)
				_, err := tx.ExecContext(ctx, `WITH RECURSIVE c(x) AS (SELECT 1 UNION ALL SELECT x+1 FROM c LIMIT 50000000)
					INSERT INTO meta(key, value, updated_at) SELECT 'r'||x, 'v', 0 FROM c`)
				return err
			})
		},
		func() error { return s.w.write(context.Background(), 5*time.Second, insertMeta("c")) },
	)
	for i, k := range []string{"a", "b", "c"} {
		err, _ := wait(t, outs[i], 10*time.Second)
		_, rowErr := s.Meta(t.Context(), k)
		t.Logf("%s: returned %v; row err %v", k, err, rowErr)
		if i != 1 && (err != nil) != (rowErr != nil) {
			t.Errorf("%s: caller told %v but row lookup says %v", k, err, rowErr)
		}
	}
	if err := s.w.halted(); err != nil {
		t.Errorf("store halted by one caller's cancellation: %v", err)
	}
	if n := s.Stats().BatchReplays; n != 1 {
		t.Errorf("Stats.BatchReplays = %d, want the one batch rolled back", n)
	}
}

// The savepoints a failure brings last carefulAfterFailure batches, then
// batches run without them again.
func TestGroupCommit_SavepointsWearOff(t *testing.T) {
	s := openTestStore(t, Options{})
	s.w.mu.Lock()
	s.w.carefulBatches = 1 // the last of them
	s.w.mu.Unlock()
	for round, want := range []bool{true, false} {
		var mu sync.Mutex
		isolated := 0
		writes := make([]func() error, 3)
		for i := range writes {
			writes[i] = func() error {
				return s.w.write(context.Background(), time.Minute, func(ctx context.Context, tx genDBTX) error {
					mu.Lock()
					isolated += btoi(inSavepoint(ctx, tx))
					mu.Unlock()
					return insertMeta(fmt.Sprint("k", round, i))(ctx, tx)
				})
			}
		}
		for i, out := range queueBehindMu(t, s, writes...) {
			if err, done := wait(t, out, 10*time.Second); !done || err != nil {
				t.Fatalf("batch %d, caller %d: %v (done %v)", round, i, err, done)
			}
		}
		if (isolated == len(writes)) != want || (isolated != 0 && isolated != len(writes)) {
			t.Errorf("batch %d: %d of %d callers in a savepoint, want all: %v", round, isolated, len(writes), want)
		}
	}
}

// A damaged file that one caller of a batch run without savepoints meets
// halts the store before anything of the batch commits, even when that
// caller gives up before the batch runs again.
func TestGroupCommit_DamageInABatchWithoutSavepointsHalts(t *testing.T) {
	s := openTestStore(t, Options{Logger: testLogger(io.Discard)})
	bctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	outs := queueBehindMu(t, s,
		func() error { return s.w.write(context.Background(), time.Minute, insertMeta("a")) },
		func() error {
			return s.w.write(bctx, time.Minute, func(ctx context.Context, tx genDBTX) error {
				cancel()
				return fmt.Errorf("read a page: %w", sqlite3.CORRUPT)
			})
		},
		func() error { return s.w.write(context.Background(), time.Minute, insertMeta("c")) },
	)
	for i, out := range outs {
		err, done := wait(t, out, 10*time.Second)
		if !done || !(errors.Is(err, ErrCorrupt) || (i == 1 && errors.Is(err, context.Canceled))) {
			t.Errorf("caller %d: %v (done %v), want ErrCorrupt", i, err, done)
		}
	}
	if !errors.Is(s.w.halted(), ErrCorrupt) {
		t.Errorf("the store is not halted: %v", s.w.halted())
	}
	for _, key := range []string{"a", "c"} {
		if _, err := s.Meta(t.Context(), key); !errors.Is(err, ErrNotFound) {
			t.Errorf("%s committed after the damage: %v", key, err)
		}
	}
}

func btoi(b bool) int {
	if b {
		return 1
	}
	return 0
}
