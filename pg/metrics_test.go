package pg

import (
	"context"
	"fmt"
	"sync"
	"testing"
	"time"

	"github.com/sessiondb/sessiondb/store"
)

// TestMetricsCountWritesAndReruns: 16 appenders on one conversation, then
// 16 writers setting its title (SERIALIZABLE writes that collide, so the
// server aborts some). Metrics counts every write once, one commit
// duration per transaction (the appends share batches), every message,
// and every rerun of a colliding write as a pgx tracer sees the server's
// refusals, without the engine's help.
func TestMetricsCountWritesAndReruns(t *testing.T) {
	cfg, err := ParseConfig(testDSN(t), freshSchema(t))
	if err != nil {
		t.Fatal(err)
	}
	var reruns rerunCounter
	cfg.ConnConfig.Tracer = &reruns
	cfg.MaxConns = defaultMaxConns
	s, err := OpenPool(t.Context(), openPoolConfig(t, cfg), Options{})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { s.Close() })
	ctx := context.Background()
	if _, err := s.CreateSession(ctx, store.NewSession{ID: "m"}); err != nil {
		t.Fatal(err)
	}
	const writers, each = 16, 10
	concurrently := func(write func(w, i int) error) {
		t.Helper()
		var wg sync.WaitGroup
		errs := make(chan error, writers)
		for w := range writers {
			wg.Go(func() {
				for i := range each {
					if err := write(w, i); err != nil {
						errs <- err
						return
					}
				}
			})
		}
		wg.Wait()
		close(errs)
		for err := range errs {
			t.Fatal(err)
		}
	}

	before := s.Metrics()
	concurrently(func(w, i int) error {
		_, err := s.AppendMessage(ctx, "m", store.NewMessage{Role: store.RoleUser, Content: fmt.Sprintf("%d/%d", w, i)})
		return err
	})
	m := s.Metrics()
	if m.Engine != "postgres" {
		t.Errorf("Engine = %q", m.Engine)
	}
	if got := m.WritesCommitted - before.WritesCommitted; got != writers*each {
		t.Errorf("WritesCommitted moved by %d, want %d", got, writers*each)
	}
	if got := m.MessagesAppended - before.MessagesAppended; got != writers*each {
		t.Errorf("MessagesAppended moved by %d, want %d", got, writers*each)
	}
	batches := m.Transactions - before.Transactions
	if batches < 1 || batches > writers*each {
		t.Errorf("Transactions moved by %d for %d appends", batches, writers*each)
	}
	if got := m.CommitDuration.Count() - before.CommitDuration.Count(); got != batches {
		t.Errorf("commit durations observed: %d, want one per transaction (%d)", got, batches)
	}
	if m.CommitDuration.Sum <= before.CommitDuration.Sum || m.CommitDuration.Sum > time.Duration(m.CommitDuration.Count())*10*time.Second {
		t.Errorf("commit duration sum %v over %d commits: not plausible", m.CommitDuration.Sum, m.CommitDuration.Count())
	}
	if m.Pool.MaxOpen != defaultMaxConns || m.Pool.InUse != 0 || m.Pool.Idle < 1 {
		t.Errorf("Pool = %+v, want max %d, none in use, some idle", m.Pool, defaultMaxConns)
	}

	before, reruns0 := m, reruns.n.Load()
	concurrently(func(w, i int) error { return s.SetTitle(ctx, "m", fmt.Sprintf("title %d/%d", w, i)) })
	m = s.Metrics()
	if got := m.WritesCommitted - before.WritesCommitted; got != writers*each {
		t.Errorf("WritesCommitted moved by %d for %d titles", got, writers*each)
	}
	if got := m.Transactions - before.Transactions; got != writers*each {
		t.Errorf("Transactions moved by %d for %d titles, each its own", got, writers*each)
	}
	if got, want := m.Reruns-before.Reruns, uint64(reruns.n.Load()-reruns0); got != want {
		t.Errorf("Reruns moved by %d, the server refused %d statements as serialization failures or deadlocks", got, want)
	}
	t.Logf("%d reruns for %d titles", m.Reruns-before.Reruns, writers*each)
	if m.LockTimeouts != 0 {
		t.Errorf("LockTimeouts = %d with the default patience", m.LockTimeouts)
	}
}
