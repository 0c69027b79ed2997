package pg

import (
	"context"
	"errors"
	"io/fs"
	"slices"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgxpool"
)

// storeTables lists the tables of schema, sorted.
func storeTables(t *testing.T, pool *pgxpool.Pool, schema string) []string {
	t.Helper()
	rows, err := pool.Query(context.Background(),
		"SELECT table_name FROM information_schema.tables WHERE table_schema = $1 ORDER BY table_name", schema)
	if err != nil {
		t.Fatal(err)
	}
	names, err := pgx.CollectRows(rows, pgx.RowTo[string])
	if err != nil {
		t.Fatal(err)
	}
	return names
}

func gooseVersions(t *testing.T, pool *pgxpool.Pool) []int64 {
	t.Helper()
	rows, err := pool.Query(context.Background(), "SELECT version_id FROM goose_db_version ORDER BY id")
	if err != nil {
		t.Fatal(err)
	}
	versions, err := pgx.CollectRows(rows, pgx.RowTo[int64])
	if err != nil {
		t.Fatal(err)
	}
	return versions
}

var wantTables = []string{
	"command_receipts", "compression_locks", "goose_db_version", "imported_sessions", "messages", "meta",
	"model_switches", "session_activity", "session_model_usage", "sessions", "turn_leases", "turn_observations",
}

func TestMigrateCreatesSchemaAndAppliesOnce(t *testing.T) {
	dsn := testDSN(t)
	schema := freshSchema(t)
	pool := openPool(t, dsn, schema)
	ctx := context.Background()

	applied, err := Migrate(ctx, pool)
	if err != nil {
		t.Fatal(err)
	}
	if applied != migrationCount(t) {
		t.Errorf("fresh schema: applied %d migrations, want %d", applied, migrationCount(t))
	}
	if got := storeTables(t, pool, schema); !slices.Equal(got, wantTables) {
		t.Errorf("tables in %s = %v, want %v", schema, got, wantTables)
	}
	// The store is in its own schema, not in public.
	if got := storeTables(t, pool, "public"); slices.Contains(got, "sessions") {
		t.Errorf("public holds a sessions table: the migration ignored the schema")
	}

	again, err := Migrate(ctx, pool)
	if err != nil {
		t.Fatal(err)
	}
	if again != 0 {
		t.Errorf("reopen applied %d migrations, want 0", again)
	}
	if got := gooseVersions(t, pool); !slices.Equal(got, allVersions(t)) {
		t.Errorf("goose versions after reopen = %v, want %v", got, allVersions(t))
	}
}

// Twenty openers (each its own pool, as separate processes would be) race
// on one fresh schema: all succeed, the migration runs once, and the race
// is settled by the advisory lock's wake-up, not by polling.
func TestMigrateRacingOpens(t *testing.T) {
	dsn := testDSN(t)
	schema := freshSchema(t)
	const openers = 20
	pools := make([]*pgxpool.Pool, openers)
	for i := range pools {
		pools[i] = openPool(t, dsn, schema)
		if err := pools[i].Ping(context.Background()); err != nil {
			t.Fatal(err)
		}
	}
	var (
		wg      sync.WaitGroup
		start   = make(chan struct{})
		applied = make([]int, openers)
		errs    = make([]error, openers)
	)
	for i := range openers {
		wg.Go(func() {
			<-start
			applied[i], errs[i] = Migrate(context.Background(), pools[i])
		})
	}
	began := time.Now()
	close(start)
	wg.Wait()
	took := time.Since(began)

	total := 0
	for i := range openers {
		if errs[i] != nil {
			t.Errorf("opener %d: %v", i, errs[i])
		}
		total += applied[i]
	}
	if total != migrationCount(t) {
		t.Errorf("%d openers applied %d migrations in all, want %d", openers, total, migrationCount(t))
	}
	if got := gooseVersions(t, pools[0]); !slices.Equal(got, allVersions(t)) {
		t.Errorf("goose versions = %v, want %v", got, allVersions(t))
	}
	t.Logf("%d racing opens on a fresh schema took %v", openers, took)
	// A loose bound: goose's own locker polls every 5 s, so losing the
	// advisory lock to it would show as many seconds.
	if took > 30*time.Second {
		t.Errorf("racing opens took %v", took)
	}
}

// Stores in two schemas of one database are independent.
func TestMigrateSchemasAreSeparateStores(t *testing.T) {
	dsn := testDSN(t)
	a, b := openPool(t, dsn, freshSchema(t)), openPool(t, dsn, freshSchema(t))
	ctx := context.Background()
	for _, pool := range []*pgxpool.Pool{a, b} {
		if _, err := Migrate(ctx, pool); err != nil {
			t.Fatal(err)
		}
	}
	if _, err := a.Exec(ctx, "INSERT INTO sessions (id, started_at) VALUES ('s1', 1)"); err != nil {
		t.Fatal(err)
	}
	var n int
	if err := b.QueryRow(ctx, "SELECT count(*) FROM sessions").Scan(&n); err != nil {
		t.Fatal(err)
	}
	if n != 0 {
		t.Errorf("schema b sees %d sessions written in schema a", n)
	}
}

func TestMigrateRefusesNewerSchema(t *testing.T) {
	pool := migratedPool(t)
	ctx := context.Background()
	if _, err := pool.Exec(ctx, "INSERT INTO goose_db_version (version_id, is_applied) VALUES (99, true)"); err != nil {
		t.Fatal(err)
	}
	_, err := Migrate(ctx, pool)
	if !errors.Is(err, ErrSchemaTooNew) {
		t.Fatalf("Migrate on a version-99 schema: %v, want ErrSchemaTooNew", err)
	}
	if !strings.Contains(err.Error(), "99") {
		t.Errorf("error does not name the version: %v", err)
	}
}

// A pool of one connection migrates: the lock is held beside it.
func TestMigrateWithAOneConnectionPool(t *testing.T) {
	dsn := testDSN(t)
	cfg, err := ParseConfig(dsn, freshSchema(t))
	if err != nil {
		t.Fatal(err)
	}
	cfg.MaxConns = 1
	pool, err := pgxpool.NewWithConfig(context.Background(), cfg)
	if err != nil {
		t.Fatal(err)
	}
	defer pool.Close()
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	if n, err := Migrate(ctx, pool); err != nil || n != migrationCount(t) {
		t.Fatalf("Migrate with MaxConns 1: applied %d, %v; want %d, nil", n, err, migrationCount(t))
	}
}

// A canceled opener waiting for the lock gives up and leaves no lock
// behind: the next opener is not blocked.
func TestMigrateCanceledWhileWaiting(t *testing.T) {
	dsn := testDSN(t)
	schema := freshSchema(t)
	holder, waiter := openPool(t, dsn, schema), openPool(t, dsn, schema)
	ctx := context.Background()
	conn, err := holder.Acquire(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := conn.Exec(ctx, "SELECT pg_advisory_lock($1)", migrationLockKey(schema)); err != nil {
		t.Fatal(err)
	}
	short, cancel := context.WithTimeout(ctx, 300*time.Millisecond)
	defer cancel()
	if _, err := Migrate(short, waiter); err == nil {
		t.Fatal("Migrate went through a held migration lock")
	}
	if _, err := conn.Exec(ctx, "SELECT pg_advisory_unlock($1)", migrationLockKey(schema)); err != nil {
		t.Fatal(err)
	}
	conn.Release()
	bounded, cancel2 := context.WithTimeout(ctx, 20*time.Second)
	defer cancel2()
	if n, err := Migrate(bounded, waiter); err != nil || n != migrationCount(t) {
		t.Fatalf("Migrate after the holder let go: applied %d, %v; want %d, nil", n, err, migrationCount(t))
	}
}

// migrationCount is how many migrations this build has.
func migrationCount(t *testing.T) int {
	t.Helper()
	files, err := fs.Glob(migrationFS(), "*.sql")
	if err != nil || len(files) == 0 {
		t.Fatalf("migrations: %v, %d files", err, len(files))
	}
	return len(files)
}

// allVersions is goose's version list after every migration: 0 (its own
// row), then each migration's, read from its file name (numbers are
// assigned ahead of merges, so they may skip).
func allVersions(t *testing.T) []int64 {
	t.Helper()
	files, err := fs.Glob(migrationFS(), "*.sql")
	if err != nil || len(files) == 0 {
		t.Fatalf("migrations: %v, %d files", err, len(files))
	}
	versions := []int64{0}
	for _, f := range files { // Glob sorts them, and the numbers are zero-padded
		v, err := strconv.ParseInt(strings.SplitN(f, "_", 2)[0], 10, 64)
		if err != nil {
			t.Fatalf("migration %s: %v", f, err)
		}
		versions = append(versions, v)
	}
	return versions
}
