package db

import (
	"context"
	"database/sql"
	"fmt"
	"io/fs"
	"strconv"
	"strings"

	"github.com/pressly/goose/v3"

	"github.com/sessiondb/sessiondb/migrations"
)

// migrate brings the schema up to date. The caller holds the migration
// lock: goose keeps no lock of its own on SQLite and its version table has
// no unique constraint, so two racing processes would both apply version 1.
//
// Migrations, once begun, run to their end, whatever ctx's deadline
// (Open's patience, which bounds waiting for another process, not this
// work): each runs in one transaction, so an interrupted one is rolled
// back, and every later Open would begin it again and be cut off at the
// same point — a file that could never be opened. One that rebuilds the
// full-text indexes (version 10) takes seconds per 100,000 messages.
//
// It returns the version the file was at and the one it is at now.
func migrate(ctx context.Context, pool *sql.DB) (from, to int64, err error) {
	ctx = context.WithoutCancel(ctx)
	p, err := newMigrations(pool)
	if err != nil {
		return 0, 0, fmt.Errorf("load migrations: %w", err)
	}
	// goose ignores versions it does not know: check for a newer file first.
	have, err := p.GetDBVersion(ctx)
	if err != nil {
		return 0, 0, fmt.Errorf("read the schema version: %w", err)
	}
	if err := refuseNewerVersion(have); err != nil {
		return 0, 0, err
	}
	if _, err := p.Up(ctx); err != nil {
		return 0, 0, fmt.Errorf("apply migrations: %w", err)
	}
	return have, latestMigration(), nil
}

// refuseBehind is what Open does instead of migrate under
// Options.NoMigrate: a file at this build's version passes, a newer one is
// ErrSchemaTooNew and an older one a *SchemaBehindError; nothing is
// written.
func refuseBehind(ctx context.Context, q querier, path string) error {
	have, err := fileVersion(ctx, q)
	if err != nil {
		return err
	}
	if err := refuseNewerVersion(have); err != nil {
		return err
	}
	if want := latestMigration(); have < want {
		return &SchemaBehindError{Where: path, Have: have, Want: want, Reason: "Options.NoMigrate forbids migrating it"}
	}
	return nil
}

// querier is what fileVersion reads with: a pool or one connection.
type querier interface {
	QueryRowContext(ctx context.Context, query string, args ...any) *sql.Row
}

// fileVersion reads a file's schema version: 0 when goose never ran on it
// (no version table yet). Hand-written: sqlite_master and goose's table
// are not part of the schema sqlc reads.
func fileVersion(ctx context.Context, q querier) (int64, error) {
	var tables int
	if err := q.QueryRowContext(ctx, "SELECT count(*) FROM sqlite_master WHERE type = 'table' AND name = 'goose_db_version'").Scan(&tables); err != nil {
		return 0, fmt.Errorf("read the schema version: %w", err)
	}
	if tables == 0 {
		return 0, nil
	}
	var have int64
	if err := q.QueryRowContext(ctx, schemaVersionSQL).Scan(&have); err != nil {
		return 0, fmt.Errorf("read the schema version: %w", err)
	}
	return have, nil
}

func migrationFS() fs.FS { return migrations.FS }

// newMigrations is a goose provider of every migration, the SQL files and
// the ones written in Go, over pool.
func newMigrations(pool *sql.DB) (*goose.Provider, error) {
	return goose.NewProvider(goose.DialectSQLite3, pool, migrationFS(),
		goose.WithDisableGlobalRegistry(true), goose.WithGoMigrations(migrations.Go()...))
}

// latestMigration is the newest schema version this build knows: the
// number that starts the last migration file's name, or the newest
// migration written in Go.
func latestMigration() int64 {
	entries, _ := fs.ReadDir(migrationFS(), ".")
	var latest int64
	for _, e := range entries {
		digits, _, _ := strings.Cut(e.Name(), "_")
		if v, err := strconv.ParseInt(digits, 10, 64); err == nil && v > latest {
			latest = v
		}
	}
	for _, m := range migrations.Go() {
		latest = max(latest, m.Version)
	}
	return latest
}

// refuseNewerFile returns ErrSchemaTooNew when the file at path records a
// schema version past latestMigration. It is best effort — a file too
// damaged to read its version passes — for Repair, which must not rebuild
// a newer file into this build's schema.
func refuseNewerFile(ctx context.Context, path string) error {
	probe, err := openDB(path, kindProbe, 1, "")
	if err != nil {
		return nil
	}
	defer probe.Close()
	var have int64
	if err := probe.QueryRowContext(ctx, schemaVersionSQL).Scan(&have); err != nil {
		return nil
	}
	return refuseNewerVersion(have)
}

// schemaVersionSQL reads a file's schema version (Info shows it too).
// Hand-written: goose's table is not part of the schema sqlc reads.
const schemaVersionSQL = "SELECT COALESCE(MAX(version_id), 0) FROM goose_db_version WHERE is_applied"

// refuseNewerVersion is ErrSchemaTooNew for a version past latestMigration.
func refuseNewerVersion(have int64) error {
	if known := latestMigration(); have > known {
		return fmt.Errorf("%w: the file is at schema version %d, this sessiondb knows up to %d", ErrSchemaTooNew, have, known)
	}
	return nil
}
