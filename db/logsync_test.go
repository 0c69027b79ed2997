package db

import (
	"context"
	"fmt"
	"io"
	"math/rand/v2"
	"path/filepath"
	"sync"
	"testing"
	"time"

	"github.com/sessiondb/sessiondb/tests/powerloss"
)

// In WAL mode every batch commits with synchronous=NORMAL, its fsync made
// by the log sync; outside a batch (before VACUUM) the level is FULL.
func TestLogSync_SyncLevelOfABatch(t *testing.T) {
	s := openTestStore(t, Options{})
	tests := []struct {
		name  string
		batch []*request
		want  int // PRAGMA synchronous: 1 NORMAL, 2 FULL
	}{
		{"IndexerAlone", []*request{{indexing: true}}, 1},
		{"Append", []*request{{}}, 1},
		{"IndexerAndAppend", []*request{{indexing: true}, {}}, 1},
		{"NoBatch", nil, 2},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			s.w.mu.Lock()
			defer s.w.mu.Unlock()
			if err := s.w.syncLevel(tt.batch); err != nil {
				t.Fatal(err)
			}
			var level int
			if err := s.w.conn.QueryRowContext(t.Context(), "PRAGMA synchronous").Scan(&level); err != nil {
				t.Fatal(err)
			}
			if level != tt.want || s.w.relaxedSync != (tt.want == 1) {
				t.Errorf("synchronous=%d (relaxed %v), want %d", level, s.w.relaxedSync, tt.want)
			}
		})
	}
}

// A lone writer's append is acknowledged after an fsync the writer makes
// itself, one per append, as synchronous=FULL would; the indexer's slices
// are acknowledged without one.
func TestLogSync_SerialAppendsSyncOnce(t *testing.T) {
	s := openTestStore(t, Options{})
	newTestSession(t, s, "a")
	before := s.Stats().LogSyncs
	const n = 20
	for i := range n {
		if _, err := s.AppendMessage(t.Context(), "a", NewMessage{Role: RoleUser, Content: fmt.Sprint("turn ", i)}); err != nil {
			t.Fatal(err)
		}
	}
	indexNow(t, s)
	if got := s.Stats().LogSyncs - before; got != n {
		t.Errorf("%d fsyncs for %d serial appends and their indexing, want %d", got, n, n)
	}
	if got := logSyncOf(s).deferred.Load(); got != 0 {
		t.Errorf("%d batches handed to the log sync goroutine with no other write waiting, want 0", got)
	}
}

// Appenders that wait for each other are acknowledged by the goroutine,
// one fsync for every batch committed while the one before ran.
func TestLogSync_ConcurrentAppendsShareFsyncs(t *testing.T) {
	s := openTestStore(t, Options{})
	newTestSession(t, s, "a")
	start := s.Stats()
	const appenders, each = 16, 40
	var wg sync.WaitGroup
	errs := make(chan error, appenders)
	for a := range appenders {
		wg.Go(func() {
			for i := range each {
				if _, err := s.AppendMessage(t.Context(), "a", NewMessage{Role: RoleUser, Content: fmt.Sprint("turn ", a, " ", i)}); err != nil {
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
	st := s.Stats()
	syncs, txns := st.LogSyncs-start.LogSyncs, st.Transactions-start.Transactions
	t.Logf("%d appends, %d transactions, %d fsyncs, %d by the goroutine", st.WritesCommitted-start.WritesCommitted, txns, syncs, logSyncOf(s).deferred.Load())
	if logSyncOf(s).deferred.Load() == 0 {
		t.Error("no batch was acknowledged by the log sync goroutine: the writer waited for every fsync")
	}
	if syncs >= txns {
		t.Errorf("%d fsyncs for %d transactions: no fsync acknowledged more than one", syncs, txns)
	}
	msgs, err := s.Messages(t.Context(), "a", MessageQuery{Limit: 10 * appenders * each})
	if err != nil || len(msgs) != appenders*each {
		t.Errorf("%d messages (%v), want %d", len(msgs), err, appenders*each)
	}
}

// A power cut under concurrent appends keeps every acknowledged one: the
// acknowledgement follows the log's fsync. Acknowledged without it, the
// same run loses some — the test can fail.
func TestLogSync_PowerCutKeepsEveryAcknowledgedAppend(t *testing.T) {
	for _, tt := range []struct {
		name     string
		skipSync bool
	}{{"Fsync", false}, {"NoFsync", true}} {
		t.Run(tt.name, func(t *testing.T) {
			rng := rand.New(rand.NewPCG(7, 0x10c5))
			acked, lost := 0, 0
			for range 12 {
				a, l := cutUnderAppends(t, rng, tt.skipSync)
				acked, lost = acked+a, lost+l
			}
			t.Logf("%d acknowledged, %d lost", acked, lost)
			switch {
			case acked == 0:
				t.Fatal("nothing was acknowledged before the cuts: the test proves nothing")
			case !tt.skipSync && lost > 0:
				t.Errorf("%d acknowledged appends lost to a power cut", lost)
			case tt.skipSync && lost == 0:
				t.Error("acknowledged without an fsync, no append was lost: the test cannot fail")
			}
		})
	}
}

// cutUnderAppends runs 8 appenders on a store on a disk that loses power
// after a random moment, and returns how many appends were acknowledged
// and how many of those the restored file lacks.
func cutUnderAppends(t *testing.T, rng *rand.Rand, skipSync bool) (acked, lost int) {
	t.Helper()
	ctx := context.Background()
	path := filepath.Join(t.TempDir(), "state.db")
	disk := powerloss.New(false)
	defer disk.Close()
	s, err := Open(ctx, path, Options{VFS: disk.Name(), CheckpointEvery: 8, Logger: testLogger(io.Discard)})
	if err != nil {
		t.Fatal(err)
	}
	logSyncOf(s).skip.Store(skipSync)
	if _, err := s.CreateSession(ctx, NewSession{ID: "p", Source: "test"}); err != nil {
		t.Fatal(err)
	}
	var mu sync.Mutex
	keys := map[string]bool{}
	var wg sync.WaitGroup
	for a := range 8 {
		wg.Go(func() {
			for i := 0; ; i++ {
				key := fmt.Sprintf("%d-%d", a, i)
				if _, err := s.AppendMessage(ctx, "p", NewMessage{Role: RoleUser, Content: "turn " + key, IdempotencyKey: key}); err != nil {
					return // the power is gone
				}
				mu.Lock()
				keys[key] = true
				mu.Unlock()
			}
		})
	}
	time.Sleep(time.Duration(5_000+rng.IntN(20_000)) * time.Microsecond)
	disk.Cut()
	wg.Wait()
	s.Close()
	if _, err := disk.Restore(rng, 0.5, true); err != nil {
		t.Fatal(err)
	}
	after, err := Open(ctx, path, Options{Logger: testLogger(io.Discard)})
	if err != nil {
		if skipSync { // a disk that lost acknowledged frames may not open
			return len(keys), len(keys)
		}
		t.Fatalf("reopen after the cut: %v", err)
	}
	defer after.Close()
	msgs, err := after.Messages(ctx, "p", MessageQuery{Limit: 1_000_000})
	if err != nil {
		t.Fatal(err)
	}
	seen := map[string]bool{}
	for _, m := range msgs {
		seen[m.IdempotencyKey] = true
	}
	for key := range keys {
		if !seen[key] {
			lost++
		}
	}
	return len(keys), lost
}

// logSyncOf is s's log sync, read under the writer lock.
func logSyncOf(s *Store) *logSync {
	s.w.mu.Lock()
	defer s.w.mu.Unlock()
	return s.w.sy
}
