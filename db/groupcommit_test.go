package db

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"sync"
	"testing"
	"time"
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
		// The batch first runs without savepoints; the first failure rolls
		// it back and the rest runs again, each caller in its own
		// savepoint. A failing or panicking caller is never run again; a
		// caller that ran before the first failure runs twice.
		want := []int{1, 2}
		if i == 3 || i == 7 {
			want = []int{1}
		}
		if !slices.Contains(want, calls[i]) {
			t.Errorf("caller %d's callback ran %d times, want one of %v", i, calls[i], want)
		}
	}
	st := s.Stats()
	writes, txs := st.WritesCommitted-before.WritesCommitted, st.Transactions-before.Transactions
	if writes != 9 || txs != 2 {
		t.Errorf("%d writes in %d transactions; want 9 writes (the blocker, then 8 together) in 2", writes, txs)
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

// inSavepoint reports whether tx runs inside the writer's per-caller
// SAVEPOINT: rolling back to a savepoint that does not exist is an error.
func inSavepoint(ctx context.Context, tx genDBTX) bool {
	//sessiondb:allow txonly -- probes for the writer's savepoint; inside one it undoes nothing yet
	_, err := tx.ExecContext(ctx, "ROLLBACK TO sessiondb_call")
	return err == nil
}

// A batch runs without savepoints (each one would make FTS5 flush a
// segment per caller); only after a failure does the rest run again with
// one savepoint per caller.
func TestGroupCommit_SavepointsOnlyAfterAFailure(t *testing.T) {
	for _, tc := range []struct {
		name          string
		failing       int // the caller that fails, -1 for none
		wantIsolated  bool
		wantCommitted int
	}{
		{"clean batch", -1, false, 6},
		{"one caller fails", 2, true, 5},
	} {
		t.Run(tc.name, func(t *testing.T) {
			s := openTestStore(t, Options{})
			var mu sync.Mutex
			isolated := map[int]bool{} // each caller's last run
			writes := make([]func() error, 6)
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
			committed := 0
			for i, out := range outs {
				err, done := wait(t, out, 10*time.Second)
				if !done {
					t.Fatalf("caller %d: no outcome", i)
				}
				if (err != nil) != (i == tc.failing) {
					t.Errorf("caller %d: %v", i, err)
				}
				if _, err := s.Meta(t.Context(), fmt.Sprint("k", i)); err == nil {
					committed++
				}
			}
			if committed != tc.wantCommitted {
				t.Errorf("%d rows committed, want %d", committed, tc.wantCommitted)
			}
			for i := range writes {
				if i != tc.failing && isolated[i] != tc.wantIsolated {
					t.Errorf("caller %d ran in a savepoint: %v, want %v", i, isolated[i], tc.wantIsolated)
				}
			}
		})
	}
}
