package db

import (
	"context"
	"errors"
	"testing"
	"time"

	"github.com/ncruces/go-sqlite3"
)

// A lock error from inside a callback waits and expires like one at
// BEGIN: a write with 300 ms of patience is answered, not replayed forever.
func TestGroupCommit_CallbackLockErrorRespectsPatience(t *testing.T) {
	s := openTestStore(t, Options{})
	calls := 0
	out := make(chan error, 1)
	go func() {
		out <- s.w.write(context.Background(), 300*time.Millisecond, func(ctx context.Context, tx genDBTX) error {
			calls++
			return sqlite3.LOCKED
		})
	}()
	err, ok := wait(t, out, 3*time.Second)
	if !ok {
		s.w.stop(errors.New("test over")) // let the spinning leader out
		<-out
		t.Fatalf("write with 300ms patience still spinning after 3s, %d callback runs", calls)
	}
	t.Logf("err %v after %d calls", err, calls)
}

// A write queued behind another's long wait for the lock keeps its own,
// shorter patience: arrivals share the wait, not its deadline.
func TestGroupCommit_QueuedWriteKeepsItsOwnPatience(t *testing.T) {
	s := openTestStore(t, Options{})
	holdWriteLock(t, s.Path(), 4*time.Second)
	go s.w.write(context.Background(), 3*time.Second, insertMeta("long"))
	time.Sleep(100 * time.Millisecond)
	start := time.Now()
	err := s.w.write(context.Background(), 300*time.Millisecond, insertMeta("short"))
	if d := time.Since(start); d > time.Second {
		t.Errorf("300ms-patience write returned %v after %v", err, d)
	}
}

// The batch leader's caller is answered at its own deadline (its context
// here), not held until the rest of its batch, which has more patience,
// commits: the leader steps down and another caller leads.
func TestGroupCommit_LeaderAnsweredAtItsOwnDeadline(t *testing.T) {
	s := openTestStore(t, Options{})
	s.w.mu.Lock()
	holdWriteLock(t, s.Path(), 4*time.Second)
	s.w.mu.Unlock()
	ctx, cancel := context.WithTimeout(context.Background(), 300*time.Millisecond)
	defer cancel()
	start := time.Now()
	outs := queueBehindMu(t, s,
		func() error { return s.w.write(ctx, time.Minute, insertMeta("short")) },
		func() error { return s.w.write(context.Background(), 3*time.Second, insertMeta("long")) },
	)
	err := <-outs[0]
	if d := time.Since(start); d > time.Second {
		t.Errorf("caller with a 300ms ctx returned %v after %v", err, d)
	}
}
