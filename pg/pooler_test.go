package pg

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"testing"
	"time"

	"github.com/sessiondb/sessiondb/store"
)

// TestPgBouncer runs the store through Debian's PgBouncer in both pooling
// modes (issue 31, item 1), one bouncer per mode shared by its subtests.
// On 63b5fb9, in transaction mode: search_path refused at connect, or
// (ignored) the tables made in public; pgx's prepared statements failing
// ("stmtcache_… already exists"); 4 of 8 racing first opens hanging on
// a session migration lock left on a pooled server connection.
func TestPgBouncer(t *testing.T) {
	testDSN(t)
	for _, mode := range []string{poolSession, poolTransaction} {
		t.Run(mode, func(t *testing.T) {
			b := startBouncer(t, mode)
			t.Run("AppendSearchLeases", func(t *testing.T) { bouncerSmoke(t, b, mode) })
			t.Run("RacingFirstOpens", func(t *testing.T) { bouncerRacingOpens(t, b, mode) })
			t.Run("SearchPathDropped", func(t *testing.T) { bouncerSchemaMismatch(t, b) })
		})
	}
}

// bouncerOneRound: plain appends of one process on sessions of their own,
// whose batches go in one round trip (oneround.go) — behind a
// transaction-pooling proxy, as one query string of the simple protocol —
// each stored and counted.
func bouncerOneRound(t *testing.T, a, other *Store) {
	ctx := t.Context()
	const writers, each = 8, 10
	for w := range writers {
		if _, err := a.CreateSession(ctx, store.NewSession{ID: fmt.Sprint("own-", w), Source: "test"}); err != nil {
			t.Fatal(err)
		}
	}
	before := a.eng.appends.oneRounds.Load()
	var wg sync.WaitGroup
	for w := range writers {
		wg.Go(func() {
			for i := range each {
				if _, err := a.AppendMessage(ctx, fmt.Sprint("own-", w), store.NewMessage{Role: store.RoleUser, Content: fmt.Sprint(w, "-", i)}); err != nil {
					t.Errorf("plain append through pgbouncer: %v", err)
				}
			}
		})
	}
	wg.Wait()
	if a.eng.appends.oneRounds.Load() == before {
		t.Error("no batch went in one round trip through pgbouncer")
	}
	for w := range writers {
		if msgs, err := other.Messages(ctx, fmt.Sprint("own-", w), store.MessageQuery{}); err != nil || len(msgs) != each {
			t.Errorf("session own-%d: %d messages, %v; want %d", w, len(msgs), err, each)
		}
		if got, err := other.Session(ctx, fmt.Sprint("own-", w)); err != nil || got.MessageCount != each {
			t.Errorf("session own-%d counted %d, %v; want %d", w, got.MessageCount, err, each)
		}
	}
}

// bouncerSmoke: concurrent appends, a search, a listing and leases whose
// holders' liveness is proved through the proxy, all in the schema the
// connection string names.
func bouncerSmoke(t *testing.T, b *bouncer, mode string) {
	ctx := bouncerCtx(t, b)
	schema := freshSchema(t)
	dsn := b.dsn(t, "search_path="+schema, "pool_mode="+mode)
	a, err := Open(ctx, dsn, Options{})
	if err != nil {
		t.Fatalf("Open through pgbouncer (%s): %v\n%s", mode, err, b.logTail())
	}
	defer a.Close()
	other, err := Open(ctx, dsn, Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer other.Close()
	if _, err := a.CreateSession(ctx, store.NewSession{ID: "s", Source: "test"}); err != nil {
		t.Fatal(err)
	}
	const writers, each = 8, 5
	var wg sync.WaitGroup
	errs := make(chan error, writers*each)
	for w := range writers {
		wg.Add(1)
		go func() {
			defer wg.Done()
			s := a
			if w%2 == 1 {
				s = other
			}
			for i := range each {
				content := fmt.Sprintf("writer %d message %d", w, i)
				if w == 0 && i == 0 {
					content = "the bouncerword is here"
				}
				if _, err := s.AppendMessage(ctx, "s", store.NewMessage{Role: store.RoleUser, Content: content,
					IdempotencyKey: fmt.Sprintf("%d-%d", w, i)}); err != nil {
					errs <- err
				}
			}
		}()
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		t.Errorf("append through pgbouncer: %v", err)
	}
	msgs, err := other.Messages(ctx, "s", store.MessageQuery{})
	if err != nil || len(msgs) != writers*each {
		t.Fatalf("Messages = %d, %v; want %d", len(msgs), err, writers*each)
	}
	bouncerOneRound(t, a, other)
	hits, err := other.Search(ctx, "bouncerword", store.SearchOptions{})
	if err != nil || len(hits) != 1 {
		t.Fatalf("Search = %v, %v; want one hit", hits, err)
	}
	// An append's rows in one statement, whose JSON parameter the
	// transaction mode's simple protocol puts in the query text.
	batch := []store.NewMessage{{Role: store.RoleUser, Content: `it's "quoted" \ $1 ; -- 日本語`},
		{Role: store.RoleAssistant, Content: "line\nbreak\ttab ' '' \\u0000 as text", Model: "m"}}
	ids, err := a.AppendMessages(ctx, "s", batch)
	if err != nil {
		t.Fatalf("AppendMessages through pgbouncer (%s): %v", mode, err)
	}
	back, err := other.Messages(ctx, "s", store.MessageQuery{AfterID: ids[0] - 1})
	if err != nil || len(back) != 2 || back[0].Content != batch[0].Content || back[1].Content != batch[1].Content {
		t.Fatalf("the batch read back through pgbouncer: %v, %+v", err, back)
	}
	admin := adminConn(t)
	var here, public int
	if err := admin.QueryRow(ctx, `SELECT count(*) FILTER (WHERE schemaname = $1), count(*) FILTER (WHERE schemaname = 'public')
		FROM pg_tables WHERE tablename IN ('messages', 'goose_db_version')`, schema).Scan(&here, &public); err != nil {
		t.Fatal(err)
	}
	if here != 2 || public != 0 {
		t.Errorf("store tables: %d in %s, %d in public; want 2 and 0", here, schema, public)
	}

	// Leases: a live holder keeps its lease through the proxy; once its
	// store closes, another store reclaims it before the TTL.
	ha, err := a.NewHolder(ctx, "a")
	if err != nil {
		t.Fatalf("NewHolder through pgbouncer (%s): %v", mode, err)
	}
	hb, err := other.NewHolder(ctx, "b")
	if err != nil {
		t.Fatal(err)
	}
	if _, ok, err := a.AcquireTurnLease(ctx, "s", ha, time.Hour); err != nil || !ok {
		t.Fatalf("AcquireTurnLease(a) = %v, %v", ok, err)
	}
	// Many probes, so that every server connection of the pool gets one:
	// a session lock left on a pooled server connection would let a probe
	// there take it again.
	for range 20 {
		if _, ok, err := other.AcquireTurnLease(ctx, "s", hb, time.Hour); err != nil || ok {
			t.Fatalf("a live holder's lease was taken through pgbouncer (%s): %v, %v", mode, ok, err)
		}
	}
	a.Close()
	reclaimed := false
	for deadline := time.Now().Add(5 * time.Second); time.Now().Before(deadline) && !reclaimed; time.Sleep(20 * time.Millisecond) {
		_, reclaimed, err = other.AcquireTurnLease(ctx, "s", hb, time.Hour)
		if err != nil {
			t.Fatal(err)
		}
	}
	if !reclaimed {
		t.Errorf("a closed store's holder kept its lease through pgbouncer (%s) for 5 s", mode)
	}
}

// bouncerRacingOpens: eight processes' first opens of one schema at once,
// through the proxy, all finish (the migration lock is a transaction's).
func bouncerRacingOpens(t *testing.T, b *bouncer, mode string) {
	ctx := bouncerCtx(t, b)
	schema := freshSchema(t)
	dsn := b.dsn(t, "search_path="+schema, "pool_mode="+mode)
	const openers = 8
	var wg sync.WaitGroup
	errs := make([]error, openers)
	start := time.Now()
	for i := range openers {
		wg.Add(1)
		go func() {
			defer wg.Done()
			s, err := Open(ctx, dsn, Options{OpenPatience: 30 * time.Second})
			if err == nil {
				_, err = s.CreateSession(ctx, store.NewSession{ID: fmt.Sprint("s", i), Source: "test"})
				s.Close()
			}
			errs[i] = err
		}()
	}
	wg.Wait()
	for i, err := range errs {
		if err != nil {
			t.Errorf("opener %d: %v", i, err)
		}
	}
	t.Logf("%d racing first opens through pgbouncer (%s): %v", openers, mode, time.Since(start).Round(time.Millisecond))
	st, err := SchemaVersion(ctx, testDSN(t), Options{Schema: schema})
	if err != nil || !st.Current() {
		t.Errorf("SchemaVersion after the race = %+v, %v; want current", st, err)
	}
}

// bouncerSchemaMismatch: a connection string without pool_mode sends
// search_path, which this proxy ignores: the server's connections work in
// public. Open says so with a typed error and makes nothing anywhere.
func bouncerSchemaMismatch(t *testing.T, b *bouncer) {
	ctx := bouncerCtx(t, b)
	schema := freshSchema(t)
	// Simple protocol: the failure to see is the schema's, not the
	// prepared statements' of transaction mode.
	_, err := Open(ctx, b.dsn(t, "search_path="+schema, "default_query_exec_mode=simple_protocol"), Options{})
	var mismatch *SchemaMismatchError
	if !errors.As(err, &mismatch) || !errors.Is(err, ErrInvalidConfig) {
		t.Fatalf("Open through a proxy that drops search_path = %v, want a *SchemaMismatchError", err)
	}
	if mismatch.Configured != schema || mismatch.Current != "public" {
		t.Errorf("SchemaMismatchError = %+v, want configured %s, current public", mismatch, schema)
	}
	var made int
	if err := adminConn(t).QueryRow(context.Background(), `SELECT (SELECT count(*) FROM pg_namespace WHERE nspname = $1)
		+ (SELECT count(*) FROM pg_tables WHERE schemaname = 'public' AND tablename IN ('messages', 'goose_db_version'))`,
		schema).Scan(&made); err != nil {
		t.Fatal(err)
	}
	if made != 0 {
		t.Errorf("a refused open made %d objects (the schema, or store tables in public)", made)
	}
}
