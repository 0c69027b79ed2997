package pg

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"log/slog"
	"strings"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/sessiondb/sessiondb/store"
	"github.com/sessiondb/sessiondb/store/driver"
)

// A bulk load's cleaner (bulk.go) merges the search indexes' pending
// lists while the load runs, on a connection of its own, and the load
// ends with none left; a store that does not own its indexes loads as
// always; Close stops the cleaner.

// bulkMessages appends messages from..to-1, each with words of its own,
// to session sid in batches of 50.
func bulkMessages(t *testing.T, ctx context.Context, s *Store, sid string, from, to int) {
	t.Helper()
	for i := from; i < to; i += 50 {
		ms := make([]store.NewMessage, 0, 50)
		for j := i; j < min(i+50, to); j++ {
			ms = append(ms, store.NewMessage{Role: store.RoleUser,
				Content: fmt.Sprintf("bulk message %d about walrus%d and the tide table of harbour %d", j, j, j%17)})
		}
		if _, err := s.AppendMessages(ctx, sid, ms); err != nil {
			t.Fatal(err)
		}
	}
}

// pendingPagesOf returns a reader of how many pages the pending lists of
// the GIN indexes in schema hold, read (not merged) with pgstattuple's
// pgstatginindex on one admin connection (a test polls it).
func pendingPagesOf(t *testing.T, schema string) func() int64 {
	t.Helper()
	admin := adminConn(t)
	ctx := t.Context()
	var err error
	for range 3 { // test packages run at once may create the extension together
		if _, err = admin.Exec(ctx, "CREATE EXTENSION IF NOT EXISTS pgstattuple"); err == nil {
			break
		}
		time.Sleep(100 * time.Millisecond)
	}
	if err != nil {
		t.Fatalf("CREATE EXTENSION pgstattuple (postgresql-contrib): %v", err)
	}
	return func() int64 {
		t.Helper()
		var pages int64
		err := admin.QueryRow(ctx, `SELECT COALESCE(SUM((pgstatginindex(c.oid)).pending_pages), 0)::bigint
			FROM pg_class c JOIN pg_am a ON a.oid = c.relam JOIN pg_namespace n ON n.oid = c.relnamespace
			WHERE a.amname = 'gin' AND n.nspname = $1`, schema).Scan(&pages)
		if err != nil {
			t.Error(err) // Error, not Fatal: it may run on the import's goroutine
		}
		return pages
	}
}

// exportOf is an export of sessions sessions of 100 messages each (ids
// from bulkMessages: walrus0 ... walrus<100*sessions-1>), made in a store
// of its own.
func exportOf(t *testing.T, sessions int) []byte {
	t.Helper()
	ctx := t.Context()
	src := openTestStore(t, Options{})
	for i := range sessions {
		sid := fmt.Sprint("imp-", i)
		if _, err := src.CreateSession(ctx, store.NewSession{ID: sid, Source: "test"}); err != nil {
			t.Fatal(err)
		}
		bulkMessages(t, ctx, src, sid, 100*i, 100*(i+1))
	}
	var buf bytes.Buffer
	if _, err := src.Export(ctx, &buf, store.ExportOptions{}); err != nil {
		t.Fatal(err)
	}
	return buf.Bytes()
}

func TestBulkLoad_CleanerMergesPendingListsAndEndsWithNone(t *testing.T) {
	ctx := t.Context()
	file := exportOf(t, 8)
	s := openTestStore(t, Options{})
	pendingPages := pendingPagesOf(t, s.eng.schema)
	var during error
	seen := 0
	res, err := s.Import(ctx, bytes.NewReader(file), store.ImportOptions{OnProgress: func(done, total int64) {
		if seen++; seen != 5 || during != nil {
			return
		}
		// Four sessions in, the import waits here: the cleaner merges
		// the lists its COPYs filled, on its own connection, within a
		// few of its passes. (Outside a load, 400 rows leave theirs
		// pending: the writes merge only past 4 MB.)
		deadline := time.Now().Add(15 * time.Second)
		for pendingPages() > 0 || !s.eng.bulk.cleaning.Load() {
			if time.Now().After(deadline) {
				during = fmt.Errorf("the pending lists still hold %d pages 15 s into the import (cleaning %v)",
					pendingPages(), s.eng.bulk.cleaning.Load())
				return
			}
			time.Sleep(bulkCleanMin)
		}
		// Writes leave the merging to the cleaner: they let a list grow
		// to bulkPendingLimit before merging it themselves.
		var limit string
		err := pgDriver{s.eng}.Write(ctx, time.Minute, func(ctx context.Context, ex driver.Executor) error {
			return ex.(pgExecutor).db.QueryRow(ctx, "SHOW gin_pending_list_limit").Scan(&limit)
		})
		if want := fmt.Sprintf("%dMB", bulkPendingLimit/1024); err != nil || limit != want {
			during = fmt.Errorf("a write during the import runs with gin_pending_list_limit %q (%v), want %s", limit, err, want)
		}
	}})
	if err != nil {
		t.Fatal(err)
	}
	if during != nil {
		t.Fatal(during)
	}
	if res.Messages != 800 {
		t.Errorf("imported %d messages, want 800", res.Messages)
	}
	if p := pendingPages(); p != 0 {
		t.Errorf("after Import returned, the pending lists hold %d pages, want 0 (the indexes caught up)", p)
	}
	if s.eng.bulk.cleaning.Load() || s.eng.bulk.done != nil {
		t.Error("the cleaner still runs after the import ended")
	}
	for _, q := range []string{"walrus7", "walrus399", "walrus799", "alrus45"} {
		hits, err := s.Search(ctx, q, store.SearchOptions{Limit: 5})
		if err != nil {
			t.Fatal(err)
		}
		if len(hits) == 0 {
			t.Errorf("Search(%q) after the import found nothing", q)
		}
	}
}

// A load of statements (AppendMessages) merges as always while it runs
// (the cleaner waits for a COPY), and ends with the lists merged.
func TestBulkLoad_AppendsMergeAsAlwaysThenCaughtUp(t *testing.T) {
	ctx := t.Context()
	s := openTestStore(t, Options{})
	pendingPages := pendingPagesOf(t, s.eng.schema)
	if _, err := s.CreateSession(ctx, store.NewSession{ID: "bulk", Source: "test"}); err != nil {
		t.Fatal(err)
	}
	err := s.BulkLoad(ctx, func(ctx context.Context) error {
		bulkMessages(t, ctx, s, "bulk", 0, 300)
		time.Sleep(3 * bulkCleanFirst)
		if p := pendingPages(); p == 0 || s.eng.bulk.cleaning.Load() {
			return fmt.Errorf("appends in a load: %d pending pages, cleaning %v; want some pending, not cleaning", p, s.eng.bulk.cleaning.Load())
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	if p := pendingPages(); p != 0 {
		t.Errorf("after BulkLoad returned, the pending lists hold %d pages, want 0", p)
	}
}

// Overlapping loads share one cleaner, which ends with the last of them.
func TestBulkLoad_OverlappingLoadsShareOneCleaner(t *testing.T) {
	ctx := t.Context()
	s := openTestStore(t, Options{})
	running := func() bool {
		s.eng.bulk.mu.Lock()
		defer s.eng.bulk.mu.Unlock()
		return s.eng.bulk.done != nil
	}
	inner := make(chan struct{})
	outerDone := make(chan error, 1)
	go func() {
		outerDone <- s.BulkLoad(ctx, func(ctx context.Context) error {
			<-inner
			return nil
		})
	}()
	err := s.BulkLoad(ctx, func(ctx context.Context) error {
		if !running() {
			return fmt.Errorf("no cleaner in a load")
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	if !running() {
		t.Error("the cleaner stopped when the first of two loads ended")
	}
	close(inner)
	if err := <-outerDone; err != nil {
		t.Fatal(err)
	}
	if running() || s.eng.bulk.loads != 0 {
		t.Errorf("after both loads: cleaner running %v, loads %d; want none", running(), s.eng.bulk.loads)
	}
}

// A store whose indexes another role owns (migrations as a deploy step)
// cannot merge them: its loads get no error and write as always; it says
// why once, at Info, and tries no more.
func TestBulkLoad_NotTheIndexesOwnerLoadsAsAlways(t *testing.T) {
	ctx := t.Context()
	schema := freshSchema(t)
	if _, err := MigrateStore(ctx, testDSN(t), Options{Schema: schema}); err != nil {
		t.Fatal(err)
	}
	sch := pgx.Identifier{schema}.Sanitize()
	app := newRole(t, "bulkapp",
		"GRANT USAGE ON SCHEMA "+sch+" TO %s",
		"GRANT SELECT, INSERT, UPDATE, DELETE ON ALL TABLES IN SCHEMA "+sch+" TO %s",
		"GRANT USAGE, SELECT ON ALL SEQUENCES IN SCHEMA "+sch+" TO %s")
	var admin string
	if err := adminConn(t).QueryRow(ctx, "SELECT current_user").Scan(&admin); err != nil {
		t.Fatal(err)
	}
	var log bytes.Buffer
	s, err := Open(ctx, dsnAs(t, app), Options{Schema: schema, NoMigrate: true, TrustedOwners: []string{admin},
		Logger: slog.New(slog.NewTextHandler(&log, &slog.HandlerOptions{Level: slog.LevelInfo}))})
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	// A load of appends: its last merge is refused, quietly.
	if _, err := s.CreateSession(ctx, store.NewSession{ID: "app", Source: "test"}); err != nil {
		t.Fatal(err)
	}
	if err := s.BulkLoad(ctx, func(ctx context.Context) error { bulkMessages(t, ctx, s, "app", 0, 100); return nil }); err != nil {
		t.Fatalf("BulkLoad as a role that does not own the indexes: %v", err)
	}
	if !s.eng.bulk.refused.Load() {
		t.Fatal("the last merge was not refused")
	}
	// An import after it writes as always, without a cleaner.
	res, err := s.Import(ctx, bytes.NewReader(exportOf(t, 4)), store.ImportOptions{OnProgress: func(done, total int64) {
		if s.eng.bulk.done != nil {
			t.Error("an import started a cleaner the server refuses")
		}
	}})
	if err != nil || res.Messages != 400 {
		t.Fatalf("Import as a role that does not own the indexes = %d messages, %v; want 400", res.Messages, err)
	}
	if s.eng.bulk.cleaning.Load() {
		t.Error("writes were told to leave the merging to a cleaner that was refused")
	}
	if n := strings.Count(log.String(), "not the owner of the search indexes"); n != 1 || strings.Contains(log.String(), "level=WARN") {
		t.Errorf("the log says %d times why the lists are not merged (want once, and no warning):\n%s", n, log.String())
	}
	if p := pendingPagesOf(t, schema)(); p == 0 {
		t.Error("the pending lists are empty: something merged them without owning the indexes")
	}
	// Later loads do not try again.
	end := pgDriver{s.eng}.BeginBulk()
	if s.eng.bulk.done != nil {
		t.Error("a later load started a cleaner the server refuses")
	}
	end(ctx)
}

// Close during a load stops the cleaner: nothing of the store runs on a
// pool given to OpenPool once Close returns, and the load's end after
// Close does nothing.
func TestBulkLoad_CloseStopsTheCleaner(t *testing.T) {
	ctx := t.Context()
	pool := migratedPool(t)
	s, err := OpenPool(ctx, pool, Options{})
	if err != nil {
		t.Fatal(err)
	}
	closed := false
	_, err = s.Import(ctx, bytes.NewReader(exportOf(t, 4)), store.ImportOptions{OnProgress: func(done, total int64) {
		deadline := time.Now().Add(10 * time.Second)
		for !closed && !s.eng.bulk.cleaning.Load() && time.Now().Before(deadline) {
			time.Sleep(10 * time.Millisecond)
		}
		if !closed {
			closed = s.eng.bulk.cleaning.Load()
			s.Close()
		}
	}})
	if !closed {
		t.Fatal("no cleaner 10 s into the import")
	}
	if !errors.Is(err, store.ErrClosed) {
		t.Errorf("Import of a store closed under it = %v, want ErrClosed", err)
	}
	if s.eng.bulk.done != nil || s.eng.bulk.cleaning.Load() {
		t.Error("the cleaner runs after Close")
	}
	if n := pool.Stat().AcquiredConns(); n != 0 {
		t.Errorf("%d of the pool's connections in use after Close", n)
	}
	if _, err := pool.Exec(ctx, "SELECT 1"); err != nil {
		t.Errorf("the pool given to OpenPool is unusable after Close: %v", err)
	}
}

func TestNextPause(t *testing.T) {
	for _, c := range []struct {
		pause time.Duration
		pages int64
		want  time.Duration
	}{
		{time.Second, 0, 2 * time.Second},                            // little merged: wait longer
		{time.Second, bulkMergePages/2 - 1, 2 * time.Second},         // under half
		{time.Second, bulkMergePages / 2, time.Second},               // about right
		{time.Second, bulkMergePages * 2, time.Second},               // about right
		{time.Second, bulkMergePages*2 + 1, time.Second / 2},         // over twice: sooner
		{bulkCleanMax, 0, bulkCleanMax},                              // never longer than the longest
		{bulkCleanMin, 100 * bulkMergePages, bulkCleanMin},           // never shorter than the shortest
		{3 * time.Second, 0, bulkCleanMax},                           // doubling stops at the longest
		{150 * time.Millisecond, 100 * bulkMergePages, bulkCleanMin}, // halving stops at the shortest
	} {
		if got := nextPause(c.pause, c.pages); got != c.want {
			t.Errorf("nextPause(%v, %d) = %v, want %v", c.pause, c.pages, got, c.want)
		}
	}
}
