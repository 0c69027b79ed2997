package db

import (
	"context"
	"sync"
	"testing"
	"time"

	"github.com/sessiondb/sessiondb/store"
	"github.com/sessiondb/sessiondb/storetest"
)

// TestConformance runs the domain's conformance suite on the SQLite
// engine, each test on a fresh file that Verify must find healthy when
// the test is done (every index holding exactly its messages).
func TestConformance(t *testing.T) {
	var mu sync.Mutex
	engines := map[*store.Store]*Store{}
	storetest.Run(t, storetest.Engine{
		Open: func(t *testing.T, o store.Options) *store.Store {
			s := openTestStore(t, Options{WritePatience: o.WritePatience, TranscriptPatience: o.TranscriptPatience,
				ActivityPatience: o.ActivityPatience, Logger: o.Logger})
			mu.Lock()
			engines[s.Store] = s
			mu.Unlock()
			t.Cleanup(func() {
				if t.Failed() {
					return
				}
				if r, err := Verify(context.Background(), s.Path()); err != nil || r.Health != HealthVerified {
					t.Errorf("Verify after the test: %s %v %v", r.Health, r.Details, err)
				}
			})
			return s.Store
		},
		Exec: func(t testing.TB, st *store.Store, query string, args ...any) {
			t.Helper()
			mu.Lock()
			s := engines[st]
			mu.Unlock()
			// Through the write path, as any write: the suite's setups are
			// writes like the others.
			err := s.write(t.Context(), "test setup", "", time.Second, func(ctx context.Context, tx genDBTX) error {
				_, err := tx.ExecContext(ctx, query, args...)
				return err
			})
			if err != nil {
				t.Fatalf("exec %q: %v", query, err)
			}
		},
		Reopen: func(t *testing.T, st *store.Store) *store.Store {
			mu.Lock()
			s := engines[st]
			mu.Unlock()
			other, err := Open(t.Context(), s.Path(), Options{})
			if err != nil {
				t.Fatalf("a second Open of %s: %v", s.Path(), err)
			}
			t.Cleanup(func() { other.Close() })
			return other.Store
		},
		HoldIndexing: func(t testing.TB, st *store.Store) func() int {
			mu.Lock()
			s := engines[st]
			mu.Unlock()
			s.w.ix.paused.Store(true)
			return func() int {
				n := s.Stats().IndexQueued
				if err := s.IndexNow(t.Context()); err != nil {
					t.Fatalf("IndexNow: %v", err)
				}
				s.w.ix.paused.Store(false)
				return int(n)
			}
		},
	})
}
