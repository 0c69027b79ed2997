package pg

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"net/url"
	"os"
	"strings"
	"testing"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgxpool"
	"github.com/jackc/pgx/v5/stdlib"
	"github.com/pressly/goose/v3"
)

// testDSN is the server the tests run on. Without one they skip locally,
// saying how to get one, and fail in CI, which must run them.
func testDSN(t testing.TB) string {
	t.Helper()
	dsn := os.Getenv("SESSIONDB_PG_DSN")
	if dsn == "" {
		const how = "SESSIONDB_PG_DSN is not set: run `bash scripts/test.sh` from the repository root " +
			"(it starts a throwaway PostgreSQL cluster), or point SESSIONDB_PG_DSN at a server " +
			"(e.g. host=/tmp/pgsock port=5432 user=postgres dbname=postgres)"
		if os.Getenv("CI") == "true" {
			t.Fatal(how)
		}
		t.Skip(how)
	}
	return dsn
}

// withSearchPath is dsn — a postgres:// URL or a key=value string, both
// of which SESSIONDB_PG_DSN may be — with its search_path set to schema.
func withSearchPath(t testing.TB, dsn, schema string) string {
	t.Helper()
	if !strings.HasPrefix(dsn, "postgres://") && !strings.HasPrefix(dsn, "postgresql://") {
		// A keyword value in single quotes, backslash and quote escaped,
		// as libpq reads it: a search_path may hold spaces and quotes.
		return dsn + " search_path='" + strings.NewReplacer(`\`, `\\`, `'`, `\'`).Replace(schema) + "'"
	}
	u, err := url.Parse(dsn)
	if err != nil {
		t.Fatalf("SESSIONDB_PG_DSN: %v", err)
	}
	q := u.Query()
	q.Set("search_path", schema)
	// pgx reads a "+" in a query value as itself: a space must be %20.
	u.RawQuery = strings.ReplaceAll(q.Encode(), "+", "%20")
	return u.String()
}

// freshSchema names a schema no other test uses, dropped (with the store
// in it) when the test ends.
func freshSchema(t testing.TB) string {
	t.Helper()
	dsn := testDSN(t)
	b := make([]byte, 6)
	if _, err := rand.Read(b); err != nil {
		t.Fatal(err)
	}
	schema := "t_" + hex.EncodeToString(b)
	t.Cleanup(func() {
		conn, err := connectTest(context.Background(), dsn)
		if err != nil {
			t.Errorf("drop schema %s: %v", schema, err)
			return
		}
		defer conn.Close(context.Background())
		if _, err := conn.Exec(context.Background(), "DROP SCHEMA IF EXISTS "+pgx.Identifier{schema}.Sanitize()+" CASCADE"); err != nil {
			t.Errorf("drop schema %s: %v", schema, err)
		}
	})
	return schema
}

// openPool opens a pool on the test server whose connections work in
// schema, closed when the test ends.
func openPool(t *testing.T, dsn, schema string) *pgxpool.Pool {
	t.Helper()
	cfg, err := ParseConfig(dsn, schema)
	if err != nil {
		t.Fatal(err)
	}
	return openPoolConfig(t, cfg)
}

// openPoolConfig opens a pool with cfg, closed when the test ends.
func openPoolConfig(t *testing.T, cfg *pgxpool.Config) *pgxpool.Pool {
	t.Helper()
	pool, err := pgxpool.NewWithConfig(context.Background(), cfg)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(pool.Close)
	return pool
}

// migratedPool is a pool on a fresh schema, prepared as an open would.
func migratedPool(t *testing.T) *pgxpool.Pool {
	t.Helper()
	pool := openPool(t, testDSN(t), freshSchema(t))
	if _, err := Prepare(context.Background(), pool); err != nil {
		t.Fatal(err)
	}
	return pool
}

// openTestStore opens a store in a fresh schema of the test server, closed
// when the test ends.
func openTestStore(t *testing.T, opts Options) *Store {
	t.Helper()
	opts.Schema = freshSchema(t)
	s, err := Open(t.Context(), testDSN(t), opts)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { s.Close() })
	return s
}

// connectTest connects to dsn as the store's side connections do: a
// pool_mode parameter (pooler.go) is the store's, not the server's.
func connectTest(ctx context.Context, dsn string) (*pgx.Conn, error) {
	cfg, err := pgx.ParseConfig(dsn)
	if err != nil {
		return nil, err
	}
	stripPoolerParams(cfg)
	return pgx.ConnectConfig(ctx, cfg)
}

// migrationProvider is goose over pool's schema, for a test that moves a
// store's version down and up (Down, DownTo, Up) around rows it plants.
func migrationProvider(t *testing.T, pool *pgxpool.Pool) *goose.Provider {
	t.Helper()
	db := stdlib.OpenDBFromPool(pool)
	t.Cleanup(func() { db.Close() })
	p, err := goose.NewProvider(goose.DialectPostgres, db, migrationFS(), goose.WithDisableGlobalRegistry(true))
	if err != nil {
		t.Fatal(err)
	}
	return p
}
