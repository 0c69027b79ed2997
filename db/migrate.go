package db

import (
	"context"
	"database/sql"
	"fmt"
	"io/fs"

	"github.com/pressly/goose/v3"

	"github.com/sessiondb/sessiondb/migrations"
)

// migrate brings the schema up to date. The caller holds the migration
// lock: goose keeps no lock of its own on SQLite and its version table has
// no unique constraint, so two racing processes would both apply version 1.
func migrate(ctx context.Context, pool *sql.DB) error {
	p, err := goose.NewProvider(goose.DialectSQLite3, pool, migrationFS(),
		goose.WithDisableGlobalRegistry(true))
	if err != nil {
		return fmt.Errorf("load migrations: %w", err)
	}
	// goose ignores versions it does not know: check for a newer file first.
	have, err := p.GetDBVersion(ctx)
	if err != nil {
		return fmt.Errorf("read the schema version: %w", err)
	}
	sources := p.ListSources()
	if known := sources[len(sources)-1].Version; have > known {
		return fmt.Errorf("%w: the file is at schema version %d, this sessiondb knows up to %d", ErrSchemaTooNew, have, known)
	}
	if _, err := p.Up(ctx); err != nil {
		return fmt.Errorf("apply migrations: %w", err)
	}
	return nil
}

func migrationFS() fs.FS { return migrations.FS }
