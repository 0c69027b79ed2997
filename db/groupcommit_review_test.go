package db

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/ncruces/go-sqlite3"
)

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

// F1: a callback whose statement makes SQLite roll back the whole shared
// transaction (OR ROLLBACK here; INTERRUPT, FULL, NOMEM, IOERR do the same).
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
}

// F1b: the realistic trigger: one caller's ctx ends mid-statement.
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
}

// F2: a callback lock error is replayed with no patience check.
func TestGroupCommit_CallbackLockErrorIgnoresPatience(t *testing.T) {
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

// F3: a short-patience request queued behind a long lock wait.
func TestGroupCommit_PatienceQueuedBehindLongWait(t *testing.T) {
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

// F4: the leader is hostage to its batch (patience and ctx).
func TestGroupCommit_LeaderHostage(t *testing.T) {
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

// Stress: appenders, random cancels, and another connection's lock.
func TestGroupCommit_Stress(t *testing.T) {
	s := openTestStore(t, Options{WritePatience: 5 * time.Second, TranscriptPatience: 10 * time.Second})
	newTestSession(t, s, "g")
	stop := make(chan struct{})
	go func() {
		for {
			select {
			case <-stop:
				return
			case <-time.After(300 * time.Millisecond):
			}
			<-holdWriteLock(t, s.Path(), 150*time.Millisecond)
		}
	}()
	var mu sync.Mutex
	ok := map[string]bool{}
	var wg sync.WaitGroup
	for g := range 64 {
		wg.Go(func() {
			for n := range 30 {
				key := fmt.Sprint(g, "-", n)
				ctx, cancel := context.WithCancel(context.Background())
				if n%3 == 0 {
					time.AfterFunc(time.Duration(n%7)*time.Millisecond, cancel)
				}
				_, err := s.AppendMessage(ctx, "g", NewMessage{Role: RoleUser, Content: key, IdempotencyKey: key})
				cancel()
				if err == nil {
					mu.Lock()
					ok[key] = true
					mu.Unlock()
				} else if !errors.Is(err, context.Canceled) && !(n%3 == 0 && errors.Is(err, sqlite3.INTERRUPT)) {
					t.Error(err)
				}
			}
		})
	}
	done := make(chan struct{})
	go func() { wg.Wait(); close(done) }()
	select {
	case <-done:
	case <-time.After(60 * time.Second):
		t.Fatal("stress: writers stuck")
	}
	close(stop)
	msgs, _ := s.Messages(t.Context(), "g", MessageQuery{Limit: 10000})
	sess, _ := s.Session(t.Context(), "g")
	have := map[string]bool{}
	for _, m := range msgs {
		have[m.Content] = true
	}
	for k := range ok {
		if !have[k] {
			t.Errorf("acknowledged %s missing", k)
		}
	}
	t.Logf("acknowledged %d, rows %d, MessageCount %d, stats %+v", len(ok), len(msgs), sess.MessageCount, s.Stats())
	if s.w.halted() != nil {
		t.Errorf("halted: %v", s.w.halted())
	}
}

func TestGroupCommit_StressDirect(t *testing.T) {
	s := openTestStore(t, Options{WritePatience: 5 * time.Second, TranscriptPatience: 10 * time.Second})
	stop := make(chan struct{})
	var holds atomicInt
	go func() {
		for {
			select {
			case <-stop:
				return
			case <-time.After(200 * time.Millisecond):
			}
			holds.add()
			<-holdWriteLock(t, s.Path(), 400*time.Millisecond)
		}
	}()
	var wg sync.WaitGroup
	for g := range 64 {
		wg.Go(func() {
			for n := range 40 {
				key := fmt.Sprint("k", g, "-", n)
				var returned, runs atomicInt
				ctx, cancel := context.WithCancel(context.Background())
				if n%2 == 0 {
					time.AfterFunc(time.Duration((g*7+n)%40)*time.Millisecond, cancel)
				}
				var err error
				func() {
					defer func() {
						if p := recover(); p != nil {
							err = fmt.Errorf("panic %v", p)
						}
					}()
					err = s.w.write(ctx, 3*time.Second, func(ctx context.Context, tx genDBTX) error {
						if returned.load() != 0 {
							t.Errorf("%s: callback runs after its caller returned", key)
						}
						runs.add()
						if err := insertMeta(key)(ctx, tx); err != nil {
							return err
						}
						switch n % 10 {
						case 3:
							return errors.New("fail")
						case 7:
							panic("boom")
						}
						return nil
					})
				}()
				returned.add()
				cancel()
				_, rowErr := s.Meta(context.Background(), key)
				if (err == nil) != (rowErr == nil) && !errors.Is(err, ErrLocked) {
					t.Errorf("%s: returned %v, row %v", key, err, rowErr)
				}
				if err == nil && runs.load() != 1 {
					t.Errorf("%s: committed after %d runs", key, runs.load())
				}
			}
		})
	}
	done := make(chan struct{})
	go func() { wg.Wait(); close(done) }()
	select {
	case <-done:
	case <-time.After(90 * time.Second):
		t.Fatal("stress: writers stuck")
	}
	close(stop)
	t.Logf("holds %d stats %+v halted %v", holds.load(), s.Stats(), s.w.halted())
}

type atomicInt struct{ n atomic.Int64 }

func (a *atomicInt) add()      { a.n.Add(1) }
func (a *atomicInt) load() int { return int(a.n.Load()) }

func TestGroupCommit_CloseDuringWrites(t *testing.T) {
	s := openTestStore(t, Options{WritePatience: 5 * time.Second, TranscriptPatience: 10 * time.Second})
	holdWriteLock(t, s.Path(), 300*time.Millisecond)
	var wg sync.WaitGroup
	var okN, closedN atomicInt
	for g := range 64 {
		wg.Go(func() {
			for n := range 20 {
				err := s.w.write(context.Background(), 3*time.Second, insertMeta(fmt.Sprint(g, "-", n)))
				switch {
				case err == nil:
					okN.add()
				case errors.Is(err, ErrClosed):
					closedN.add()
				default:
					t.Error(err)
				}
			}
		})
	}
	time.Sleep(400 * time.Millisecond)
	if err := s.Close(); err != nil {
		t.Error(err)
	}
	done := make(chan struct{})
	go func() { wg.Wait(); close(done) }()
	select {
	case <-done:
	case <-time.After(20 * time.Second):
		t.Fatal("writers stuck after close")
	}
	t.Logf("ok %d closed %d", okN.load(), closedN.load())
}
