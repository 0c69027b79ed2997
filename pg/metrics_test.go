package pg

import (
	"context"
	"fmt"
	"sync"
	"testing"
	"time"

	"github.com/sessiondb/sessiondb/store"
)

// TestMetricsCountWritesAndReruns: 16 appenders on one conversation make
// the server abort colliding transactions; Metrics counts every write
// once, every rerun (as a pgx tracer sees the server's refusals, without
// the engine's help), one commit duration per write, and the messages.
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
	reruns.n.Store(0) // Open's own statements are not writes
	before := s.Metrics()
	const appenders, each = 16, 10
	var wg sync.WaitGroup
	errs := make(chan error, appenders)
	for a := range appenders {
		wg.Go(func() {
			for i := range each {
				if _, err := s.AppendMessage(ctx, "m", store.NewMessage{Role: store.RoleUser, Content: fmt.Sprintf("%d/%d", a, i)}); err != nil {
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
	m := s.Metrics()
	if m.Engine != "postgres" {
		t.Errorf("Engine = %q", m.Engine)
	}
	if got := m.WritesCommitted - before.WritesCommitted; got != appenders*each {
		t.Errorf("WritesCommitted moved by %d, want %d", got, appenders*each)
	}
	if m.Transactions != m.WritesCommitted {
		t.Errorf("Transactions = %d, WritesCommitted = %d: each write is one transaction", m.Transactions, m.WritesCommitted)
	}
	if got := m.MessagesAppended - before.MessagesAppended; got != appenders*each {
		t.Errorf("MessagesAppended moved by %d, want %d", got, appenders*each)
	}
	if got := m.CommitDuration.Count() - before.CommitDuration.Count(); got != appenders*each {
		t.Errorf("commit durations observed: %d, want one per write (%d)", got, appenders*each)
	}
	if m.CommitDuration.Sum <= before.CommitDuration.Sum || m.CommitDuration.Sum > time.Duration(m.CommitDuration.Count())*10*time.Second {
		t.Errorf("commit duration sum %v over %d commits: not plausible", m.CommitDuration.Sum, m.CommitDuration.Count())
	}
	if got, want := m.Reruns-before.Reruns, uint64(reruns.n.Load()); got != want {
		t.Errorf("Reruns moved by %d, the server refused %d statements as serialization failures or deadlocks", got, want)
	}
	t.Logf("%d reruns for %d appends", m.Reruns-before.Reruns, appenders*each)
	if m.Pool.MaxOpen != defaultMaxConns || m.Pool.InUse != 0 || m.Pool.Idle < 1 {
		t.Errorf("Pool = %+v, want max %d, none in use, some idle", m.Pool, defaultMaxConns)
	}
	if m.LockTimeouts != 0 {
		t.Errorf("LockTimeouts = %d with the default patience", m.LockTimeouts)
	}
}
