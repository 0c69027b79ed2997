package pg

import (
	"bytes"
	"context"
	"errors"
	"log/slog"
	"testing"

	"github.com/jackc/pgx/v5/pgxpool"
	"github.com/sessiondb/sessiondb/store"
)

// schemaAtVersion makes a store in a fresh schema as an older sessiondb
// left it (migrated down with the migrations' own Down steps) and returns
// the schema.
func schemaAtVersion(t *testing.T, v int64) string {
	t.Helper()
	pool := migratedPool(t)
	p := migrationProvider(t, pool)
	if _, err := p.DownTo(context.Background(), v); err != nil {
		t.Fatal(err)
	}
	schema, err := SchemaOf(pool.Config())
	if err != nil {
		t.Fatal(err)
	}
	return schema
}

// schemaExists reports whether the test server has schema.
func schemaExists(t *testing.T, pool *pgxpool.Pool, schema string) bool {
	t.Helper()
	var ok bool
	if err := pool.QueryRow(t.Context(), "SELECT to_regnamespace($1) IS NOT NULL", schema).Scan(&ok); err != nil {
		t.Fatal(err)
	}
	return ok
}

// The deploy step on a server: a schema an older sessiondb left is
// refused by a NoMigrate open with both versions named and nothing
// written, SchemaVersion reports it behind, MigrateStore brings it up,
// and then a NoMigrate open works and writes.
func TestDeploy_MigrateThenOpenWithoutMigrating(t *testing.T) {
	ctx := t.Context()
	dsn := testDSN(t)
	schema := schemaAtVersion(t, 3)
	latest := latestMigration()

	s, err := Open(ctx, dsn, Options{Schema: schema, NoMigrate: true})
	var behind *SchemaBehindError
	if !errors.As(err, &behind) || !errors.Is(err, ErrSchemaBehind) {
		if s != nil {
			s.Close()
		}
		t.Fatalf("NoMigrate Open of a version-3 schema = %v, want a *SchemaBehindError", err)
	}
	if behind.Have != 3 || behind.Want != latest {
		t.Errorf("SchemaBehindError{Have: %d, Want: %d}, want {3, %d}", behind.Have, behind.Want, latest)
	}
	st, err := SchemaVersion(ctx, dsn, Options{Schema: schema})
	if err != nil {
		t.Fatal(err)
	}
	if st.Version != 3 || st.Latest != latest || !st.Behind() {
		t.Errorf("SchemaVersion after a refused open = %+v, want version 3 of %d, behind", st, latest)
	}

	m, err := MigrateStore(ctx, dsn, Options{Schema: schema})
	if err != nil {
		t.Fatal(err)
	}
	if m.From != 3 || m.To != latest || !m.Applied() {
		t.Errorf("MigrateStore = %+v, want from 3 to %d", m, latest)
	}
	if st, err = SchemaVersion(ctx, dsn, Options{Schema: schema}); err != nil || !st.Current() {
		t.Errorf("SchemaVersion after MigrateStore = %+v, %v, want current", st, err)
	}
	s, err = Open(ctx, dsn, Options{Schema: schema, NoMigrate: true})
	if err != nil {
		t.Fatalf("NoMigrate Open of a current schema: %v", err)
	}
	if _, err := s.CreateSession(ctx, store.NewSession{ID: "after-deploy", Source: "test"}); err != nil {
		t.Errorf("write after the deploy step: %v", err)
	}
	s.Close()
	if m, err = MigrateStore(ctx, dsn, Options{Schema: schema}); err != nil || m.Applied() || m.From != latest {
		t.Errorf("a second MigrateStore = %+v, %v, want nothing applied at %d", m, err, latest)
	}
}

// What each bad input gets from the deploy calls; none creates a schema.
func TestDeploy_BadInput(t *testing.T) {
	ctx := t.Context()
	dsn := testDSN(t)
	missing := freshSchema(t)
	pool := openPool(t, dsn, "public")

	if s, err := Open(ctx, dsn, Options{Schema: missing, NoMigrate: true}); !errors.Is(err, ErrSchemaBehind) {
		if s != nil {
			s.Close()
		}
		t.Errorf("NoMigrate Open of a missing schema = %v, want ErrSchemaBehind", err)
	}
	if st, err := SchemaVersion(ctx, dsn, Options{Schema: missing}); err != nil || st.Version != 0 || !st.Behind() {
		t.Errorf("SchemaVersion of a missing schema = %+v, %v, want version 0, behind", st, err)
	}
	if schemaExists(t, pool, missing) {
		t.Errorf("a refused open or a status created schema %s", missing)
	}
	if _, err := SchemaVersion(ctx, dsn, Options{Schema: "pg_catalog"}); !errors.Is(err, ErrInvalidConfig) {
		t.Errorf("SchemaVersion of a system schema = %v, want ErrInvalidConfig", err)
	}
	if _, err := MigrateStore(ctx, dsn, Options{Schema: missing, NoMigrate: true}); !errors.Is(err, ErrInvalidConfig) {
		t.Errorf("MigrateStore with NoMigrate = %v, want ErrInvalidConfig", err)
	}

	ahead := freshSchema(t)
	s, err := Open(ctx, dsn, Options{Schema: ahead})
	if err != nil {
		t.Fatal(err)
	}
	s.Close()
	if _, err := openPool(t, dsn, ahead).Exec(ctx, "INSERT INTO goose_db_version (version_id, is_applied) VALUES (99, true)"); err != nil {
		t.Fatal(err)
	}
	if s, err := Open(ctx, dsn, Options{Schema: ahead, NoMigrate: true}); !errors.Is(err, ErrSchemaTooNew) {
		if s != nil {
			s.Close()
		}
		t.Errorf("NoMigrate Open of a version-99 schema = %v, want ErrSchemaTooNew", err)
	}
	if st, err := SchemaVersion(ctx, dsn, Options{Schema: ahead}); err != nil || st.Version != 99 || !st.Ahead() {
		t.Errorf("SchemaVersion of a version-99 schema = %+v, %v, want version 99, ahead", st, err)
	}
}

// Options.ReadOnly on a primary: reads work, every write is ErrReadOnly
// and never reaches the server, and the open says so.
func TestReadOnly_OnAPrimary(t *testing.T) {
	ctx := t.Context()
	dsn := testDSN(t)
	w := openTestStore(t, Options{})
	if _, err := w.CreateSession(ctx, store.NewSession{ID: "s1", Source: "test"}); err != nil {
		t.Fatal(err)
	}
	var log bytes.Buffer
	r, err := Open(ctx, dsn, Options{Schema: w.Schema(), ReadOnly: true, Logger: slog.New(slog.NewTextHandler(&log, nil))})
	if err != nil {
		t.Fatal(err)
	}
	defer r.Close()
	if !r.ReadOnly() || r.Standby() {
		t.Errorf("ReadOnly() = %v, Standby() = %v, want true, false", r.ReadOnly(), r.Standby())
	}
	if !bytes.Contains(log.Bytes(), []byte("opened read-only")) {
		t.Errorf("no log line says the store is read-only: %q", log.String())
	}
	if _, err := r.Session(ctx, "s1"); err != nil {
		t.Errorf("read on a read-only store: %v", err)
	}
	if _, err := r.AppendMessage(ctx, "s1", store.NewMessage{Role: store.RoleUser, Content: "no"}); !errors.Is(err, ErrReadOnly) {
		t.Errorf("AppendMessage on a read-only store = %v, want ErrReadOnly", err)
	}
	if msgs, err := w.Messages(ctx, "s1", store.MessageQuery{}); err != nil || len(msgs) != 0 {
		t.Errorf("the refused append reached the server: %d messages, %v", len(msgs), err)
	}
	if _, err := MigrateStore(ctx, dsn, Options{Schema: w.Schema(), ReadOnly: true}); !errors.Is(err, ErrInvalidConfig) {
		t.Errorf("MigrateStore with ReadOnly = %v, want ErrInvalidConfig", err)
	}
}
