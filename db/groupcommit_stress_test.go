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
	"github.com/sessiondb/sessiondb/storetest"
)

// Appenders with random cancels against another connection that keeps
// taking the write lock: only cancellations fail, no writer is left stuck,
// every acknowledged message is there and the store does not halt.
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
	msgs := storetest.WholeSession(t, s.Store, "g") // checks MessageCount against the rows
	have := map[string]bool{}
	for _, m := range msgs {
		have[m.Content] = true
	}
	for k := range ok {
		if !have[k] {
			t.Errorf("acknowledged %s missing", k)
		}
	}
	t.Logf("acknowledged %d, rows %d, stats %+v", len(ok), len(msgs), s.Stats())
	if s.w.halted() != nil {
		t.Errorf("halted: %v", s.w.halted())
	}
}

// The same storm on the writer directly (no domain verbs): no writer is
// left stuck and the store does not halt.
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
				// A callback runs again only after its batch was rolled back
				// under it (another caller's statement interrupted, or
				// another caller failed in a batch without savepoints).
				if err == nil && runs.load() != 1 && s.Stats().BatchReplays == 0 {
					t.Errorf("%s: committed after %d runs, and no batch was rolled back", key, runs.load())
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

func (a *atomicInt) add() { a.n.Add(1) }

func (a *atomicInt) load() int { return int(a.n.Load()) }

// Close while 64 writers run against a held lock: every write is either
// committed or told the store is closed.
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
