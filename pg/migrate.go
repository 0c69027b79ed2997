package pg

import (
	"context"
	"embed"
	"errors"
	"fmt"
	"hash/fnv"
	"io/fs"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgxpool"
	"github.com/jackc/pgx/v5/stdlib"
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
// store). Openers racing on one schema, on any number of machines,
// serialise on a PostgreSQL advisory lock held by a dedicated connection:
// goose's own Postgres locker polls every 5 s, which makes racing opens
// take seconds, while pg_advisory_lock wakes a waiter the moment the
// holder lets go. The connection is opened beside the pool, so a pool of
// one connection still has it free for goose, and closing it releases the
// lock whatever happened (a canceled wait included). A session lock needs
// a real server session, not a transaction-pooling proxy.
//
// Before goose creates anything it refuses a schema owned by another role
// (ErrUntrustedOwner; see owner.go) and connections whose current_schema()
// is not the configured schema (ErrInvalidConfig).
func Migrate(ctx context.Context, pool *pgxpool.Pool) (int, error) {
	_, applied, err := migrate(ctx, pool, nil)
	return applied, err
}

// migrate is Migrate trusting the owners in trusted besides the
// connecting role (Options.TrustedOwners). It also reports the versions
// before and after.
func migrate(ctx context.Context, pool *pgxpool.Pool, trusted []string) (Migration, int, error) {
	schema, err := SchemaOf(pool.Config())
	if err != nil {
		return Migration{}, 0, err
	}
	conn, err := pgx.ConnectConfig(ctx, pool.Config().ConnConfig.Copy())
	if err != nil {
		return Migration{}, 0, fmt.Errorf("migrate: connect: %w", err)
	}
	defer conn.Close(context.WithoutCancel(ctx)) // ends the session: releases the lock
	// Hand-written, as every statement here: locking and creating the
	// schema come before any schema sqlc knows exists.
	if _, err := conn.Exec(ctx, "SELECT pg_advisory_lock($1)", migrationLockKey(schema)); err != nil {
		return Migration{}, 0, fmt.Errorf("migrate: take the migration lock: %w", err)
	}
	return migrateLocked(ctx, pool, conn, schema, trusted)
}

func migrateLocked(ctx context.Context, pool *pgxpool.Pool, conn *pgx.Conn, schema string, trusted []string) (Migration, int, error) {
	if _, err := conn.Exec(ctx, "CREATE SCHEMA IF NOT EXISTS "+pgx.Identifier{schema}.Sanitize()); err != nil {
		return Migration{}, 0, fmt.Errorf("migrate: create schema %q: %w", schema, err)
	}
	if err := checkOwners(ctx, conn, schema, trusted); err != nil {
		return Migration{}, 0, err
	}
	// Both the lock's connection and the pool's, which goose migrates on.
	if err := checkCurrentSchema(ctx, conn.QueryRow(ctx, "SELECT current_schema()"), schema); err != nil {
		return Migration{}, 0, err
	}
	if err := checkCurrentSchema(ctx, pool.QueryRow(ctx, "SELECT current_schema()"), schema); err != nil {
		return Migration{}, 0, err
	}
	db := stdlib.OpenDBFromPool(pool) // closing it leaves the pool open
	defer db.Close()
	// goose's version table is unqualified, so it lives in the schema too
	// (goose finds it through current_schema()).
	p, err := goose.NewProvider(goose.DialectPostgres, db, migrationFS(), goose.WithDisableGlobalRegistry(true))
	if err != nil {
		return Migration{}, 0, fmt.Errorf("migrate: %w", err)
	}
	current, err := p.GetDBVersion(ctx)
	if err != nil && !errors.Is(err, goose.ErrVersionNotFound) {
		return Migration{}, 0, fmt.Errorf("migrate: read schema version: %w", err)
	}
	sources := p.ListSources()
	latest := sources[len(sources)-1].Version
	if current > latest {
		return Migration{}, 0, fmt.Errorf("%w: schema %q is at version %d, this build knows up to %d", ErrSchemaTooNew, schema, current, latest)
	}
	results, err := p.Up(ctx)
	if err != nil {
		return Migration{}, 0, fmt.Errorf("migrate: %w", err)
	}
	return Migration{Where: schema, From: current, To: latest}, len(results), nil
}

// migrationLockKey is the advisory lock of one schema's migrations: a hash
// of the schema name, so stores in other schemas of the database migrate
// in parallel (a collision only serialises two of them).
func migrationLockKey(schema string) int64 {
	h := fnv.New64a()
	h.Write([]byte("sessiondb migrate\x00" + schema))
	return int64(h.Sum64())
}
