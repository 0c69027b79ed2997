package pg

import (
	"context"
	"sync"
	"testing"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgconn"
	"github.com/sessiondb/sessiondb/store"
	"github.com/sessiondb/sessiondb/storetest"
)

// TestConformance runs the domain's conformance suite on PostgreSQL, each
// test in a fresh schema of the test server (so tests may run in
// parallel); without a server it skips, or fails under CI=true.
func TestConformance(t *testing.T) {
	testDSN(t)
	var mu sync.Mutex
	engines := map[*store.Store]*Store{}
	storetest.Run(t, storetest.Engine{
		Open: func(t *testing.T, o store.Options) *store.Store {
			s := openTestStore(t, Options{WritePatience: o.WritePatience, TranscriptPatience: o.TranscriptPatience,
				ActivityPatience: o.ActivityPatience, Logger: o.Logger})
			mu.Lock()
			engines[s.Store] = s
			mu.Unlock()
			return s.Store
		},
		Reopen: func(t *testing.T, st *store.Store) *store.Store {
			mu.Lock()
			s := engines[st]
			mu.Unlock()
			other, err := Open(t.Context(), testDSN(t), Options{Schema: s.Schema()})
			if err != nil {
				t.Fatalf("a second Open of schema %s: %v", s.Schema(), err)
			}
			t.Cleanup(func() { other.Close() })
			return other.Store
		},
		Exec: func(t testing.TB, st *store.Store, query string, args ...any) {
			t.Helper()
			mu.Lock()
			s := engines[st]
			mu.Unlock()
			exec := func(db interface {
				Exec(context.Context, string, ...any) (pgconn.CommandTag, error)
			}) error {
				_, err := db.Exec(t.Context(), query, args...)
				return err
			}
			var err error
			if s.eng.pin != "" { // SESSIONDB_PG_DSN with pool_mode=transaction
				err = pinnedRead(t.Context(), s.eng.pool, s.eng.pin, func(tx pgx.Tx) error { return exec(tx) })
			} else {
				err = exec(s.eng.pool)
			}
			if err != nil {
				t.Fatalf("exec %q: %v", query, err)
			}
		},
	})
}
