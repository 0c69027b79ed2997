package pg

import (
	"context"
	"database/sql"
	"embed"
	"errors"
	"fmt"
	"hash/fnv"
	"io/fs"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgxpool"
	"github.com/pressly/goose/v3"
	"github.com/sessiondb/sessiondb/store/driver"
)

//go:embed migrations/*.sql
var migrationFiles embed.FS

// ErrSchemaTooNew reports a store migrated by a newer sessiondb: this build
// does not know its schema and must not write to it. It is the store's
// sentinel (store.ErrSchemaTooNew), so callers branch on it alike on every
// engine.
var ErrSchemaTooNew = driver.ErrSchemaTooNew

func migrationFS() fs.FS {
	sub, err := fs.Sub(migrationFiles, "migrations")
	if err != nil {
		panic(err) // the embed pattern above guarantees the directory
	}
	return sub
}

// Migrate creates the pool's schema when it is missing and applies the
// migrations it lacks, returning how many it applied (0 on an up-to-date
// store). It all happens in one transaction on one connection, which
// first takes the schema's migration lock, a transaction-level advisory
// lock (pg_advisory_xact_lock): openers racing on one schema, on any
// number of machines, wait for each other, a waiter wakes the moment the
// holder commits, and the lock ends with its transaction whatever
// happens — a canceled wait, a process killed, a transaction-pooling
// proxy handing the server connection to another client afterwards
// (a session lock would stay on that server connection). A migration cut
// short leaves nothing behind.
//
// Before goose creates anything it refuses a schema owned by another role
// (ErrUntrustedOwner; see owner.go) and a connection whose
// current_schema() is not the configured schema (*SchemaMismatchError).
func Migrate(ctx context.Context, pool *pgxpool.Pool) (int, error) {
	_, applied, err := migrate(ctx, pool, nil)
	return applied, err
}

// migrate is Migrate trusting the owners in trusted besides the
// connecting role (Options.TrustedOwners). It also reports the versions
// before and after.
func migrate(ctx context.Context, pool *pgxpool.Pool, trusted []string) (m Migration, applied int, err error) {
	schema, err := SchemaOf(pool.Config())
	if err != nil {
		return Migration{}, 0, err
	}
	err = migrationTx(ctx, pool, migrationLockKey(schema), func(tx pgx.Tx) error {
		m, applied, err = migrateLocked(ctx, pool.Config(), tx, schema, trusted)
		return err
	})
	if err != nil {
		return Migration{}, 0, err
	}
	return m, applied, nil
}

func migrateLocked(ctx context.Context, cfg *pgxpool.Config, tx pgx.Tx, schema string, trusted []string) (Migration, int, error) {
	// Hand-written, as every statement here: locking and creating the
	// schema come before any schema sqlc knows exists.
	// Read the catalog first: the read locks pg_namespace, which makes the
	// server take in the schema another opener created while this one
	// waited for the lock. CREATE SCHEMA IF NOT EXISTS alone trusts the
	// session's cache, which may still say "missing" (an earlier statement
	// resolved the search_path before that commit), and fails 23505.
	var exists bool
	if err := tx.QueryRow(ctx, "SELECT EXISTS (SELECT FROM pg_catalog.pg_namespace WHERE nspname = $1)", schema).Scan(&exists); err != nil {
		return Migration{}, 0, fmt.Errorf("migrate: look for schema %q: %w", schema, err)
	}
	if !exists {
		if _, err := tx.Exec(ctx, "CREATE SCHEMA "+pgx.Identifier{schema}.Sanitize()); err != nil {
			return Migration{}, 0, fmt.Errorf("migrate: create schema %q: %w", schema, err)
		}
	}
	if err := checkOwners(ctx, tx, schema, trusted); err != nil {
		return Migration{}, 0, err
	}
	if pin := pinSchema(cfg, schema); pin != "" {
		if _, err := tx.Exec(ctx, pin); err != nil {
			return Migration{}, 0, fmt.Errorf("migrate: set search_path: %w", err)
		}
	}
	var current *string
	err := tx.QueryRow(ctx, "SELECT current_schema()").Scan(&current)
	if err := checkCurrentSchema(current, err, schema, poolModeOf(cfg)); err != nil {
		return Migration{}, 0, err
	}
	// goose runs in the lock's transaction, each migration in a savepoint
	// (migratetx.go).
	//sessiondb:allow rawopen -- no SQLite: database/sql over the migration's PostgreSQL transaction, for goose
	db := sql.OpenDB(txConnector{tx})
	defer db.Close()
	db.SetMaxOpenConns(1)
	// goose's version table is unqualified, so it lives in the schema too
	// (goose finds it through current_schema()).
	p, err := goose.NewProvider(goose.DialectPostgres, db, migrationFS(), goose.WithDisableGlobalRegistry(true))
	if err != nil {
		return Migration{}, 0, fmt.Errorf("migrate: %w", err)
	}
	have, err := p.GetDBVersion(ctx)
	if err != nil && !errors.Is(err, goose.ErrVersionNotFound) {
		return Migration{}, 0, fmt.Errorf("migrate: read schema version: %w", err)
	}
	sources := p.ListSources()
	latest := sources[len(sources)-1].Version
	if have > latest {
		return Migration{}, 0, fmt.Errorf("%w: schema %q is at version %d, this build knows up to %d", ErrSchemaTooNew, schema, have, latest)
	}
	results, err := p.Up(ctx)
	if err != nil {
		return Migration{}, 0, fmt.Errorf("migrate: %w", err)
	}
	return Migration{Where: schema, From: have, To: latest}, len(results), nil
}

// migrationLockKey is the advisory lock of one schema's migrations: a hash
// of the schema name, so stores in other schemas of the database migrate
// in parallel (a collision only serialises two of them).
func migrationLockKey(schema string) int64 {
	h := fnv.New64a()
	h.Write([]byte("sessiondb migrate\x00" + schema))
	return int64(h.Sum64())
}
