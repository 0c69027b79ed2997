package pg

import (
	"context"
	"fmt"
	"io/fs"
	"strconv"
	"strings"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgxpool"
	"github.com/sessiondb/sessiondb/store"
	"github.com/sessiondb/sessiondb/store/driver"
)

// Migrations as a deploy step. By default every Open migrates its schema,
// which suits a single service. A fleet that rolls out new builds
// migrates once, as a step of its own (MigrateStore, `sessiondb migrate
// --db postgres://…`), and opens with Options.NoMigrate so that a build
// started against a schema it would have to migrate fails at once with a
// *SchemaBehindError instead of migrating under the old build's replicas.
// SchemaVersion (`sessiondb migrate --status`) says where a schema stands.

// ErrSchemaBehind reports a schema older than this build that the open was
// not allowed to migrate (Options.NoMigrate, Options.ReadOnly, or a hot
// standby). It is the store's sentinel (store.ErrSchemaBehind); the error
// is a *SchemaBehindError naming both versions.
var ErrSchemaBehind = driver.ErrSchemaBehind

// The deploy step's types, the same on every engine: see package store.
type (
	Migration         = store.Migration
	SchemaStatus      = store.SchemaStatus
	SchemaBehindError = store.SchemaBehindError
)

// MigrateStore brings the store's schema (opts.Schema, else the connection
// string's search_path, else public) to this build's version, creating it
// when missing, and reports the versions before and after. It is Open
// followed by Close, with Open's checks and its patience; a schema already
// current is left as it is. A hot standby cannot be migrated: migrate the
// primary, and the standby replays it (ErrReadOnly when the standby's
// schema is current, else a *SchemaBehindError). Options.ReadOnly and
// Options.NoMigrate are refused (ErrInvalidConfig).
func MigrateStore(ctx context.Context, connString string, opts Options) (Migration, error) {
	if opts.ReadOnly || opts.NoMigrate {
		return Migration{}, fmt.Errorf("migrate: %w: MigrateStore cannot run with Options.ReadOnly or Options.NoMigrate", ErrInvalidConfig)
	}
	s, err := Open(ctx, connString, opts)
	if err != nil {
		return Migration{}, err
	}
	defer s.Close()
	if s.eng.readOnly != nil {
		return Migration{}, fmt.Errorf("migrate: %w", s.eng.readOnly)
	}
	return s.eng.migration, nil
}

// SchemaVersion reports the schema version of the store in opts.Schema
// (else the connection string's search_path, else public) against this
// build's, reading only: nothing is created, locked or migrated, so it
// runs on a standby too. A schema that does not exist, or holds no store
// yet, is at version 0.
func SchemaVersion(ctx context.Context, connString string, opts Options) (SchemaStatus, error) {
	pool, err := newPool(ctx, connString, opts.Schema, 1)
	if err != nil {
		return SchemaStatus{}, fmt.Errorf("schema version: %w", err)
	}
	defer pool.Close()
	schema, err := SchemaOf(pool.Config())
	if err != nil {
		return SchemaStatus{}, fmt.Errorf("schema version: %w", err)
	}
	st := SchemaStatus{Where: "schema " + schema, Latest: latestMigration()}
	if st.Version, err = schemaVersion(ctx, pool, schema); err != nil {
		return st, fmt.Errorf("schema version: %w", mapError(err))
	}
	return st, nil
}

// newPool makes the pool of a store in schema (as ParseConfig picks it),
// of maxConns connections unless the connection string sets
// pool_max_conns.
func newPool(ctx context.Context, connString, schema string, maxConns int32) (*pgxpool.Pool, error) {
	cfg, err := ParseConfig(connString, schema)
	if err != nil {
		return nil, err
	}
	if !strings.Contains(connString, "pool_max_conns") {
		cfg.MaxConns = maxConns
	}
	return pgxpool.NewWithConfig(ctx, cfg)
}

// schemaVersion reads the version goose recorded in schema: 0 when the
// schema or its version table does not exist. Hand-written: goose's table
// is not part of the schema sqlc reads.
func schemaVersion(ctx context.Context, q interface {
	QueryRow(context.Context, string, ...any) pgx.Row
}, schema string) (int64, error) {
	table := pgx.Identifier{schema, "goose_db_version"}.Sanitize()
	var exists bool
	if err := q.QueryRow(ctx, "SELECT to_regclass($1) IS NOT NULL", table).Scan(&exists); err != nil {
		return 0, fmt.Errorf("read the schema version: %w", err)
	}
	if !exists {
		return 0, nil
	}
	var have int64
	if err := q.QueryRow(ctx, "SELECT COALESCE(MAX(version_id), 0) FROM "+table+" WHERE is_applied").Scan(&have); err != nil {
		return 0, fmt.Errorf("read the schema version: %w", err)
	}
	return have, nil
}

// latestMigration is the newest schema version this build knows: the
// number that starts the last migration file's name.
func latestMigration() int64 {
	entries, _ := fs.ReadDir(migrationFS(), ".")
	var latest int64
	for _, e := range entries {
		digits, _, _ := strings.Cut(e.Name(), "_")
		if v, err := strconv.ParseInt(digits, 10, 64); err == nil && v > latest {
			latest = v
		}
	}
	return latest
}

// openWithoutMigrating is Open's preparation when it may not migrate
// (why says why not): the locale and owner checks a migration makes, and
// the schema's version, which must be this build's — older is a
// *SchemaBehindError, newer ErrSchemaTooNew. It only reads, so it runs on
// a hot standby.
func openWithoutMigrating(ctx context.Context, pool *pgxpool.Pool, schema string, trusted []string, why string) error {
	if err := CheckLocale(ctx, pool); err != nil {
		return err
	}
	have, err := schemaVersion(ctx, pool, schema)
	if err != nil {
		return err
	}
	if want := latestMigration(); have > want {
		return fmt.Errorf("%w: schema %q is at version %d, this build knows up to %d", ErrSchemaTooNew, schema, have, want)
	} else if have < want {
		return &SchemaBehindError{Where: "schema " + schema, Have: have, Want: want, Reason: why}
	}
	if err := checkOwners(ctx, pool, schema, trusted); err != nil {
		return err
	}
	current, err := currentSchema(ctx, pool, pinSchema(pool.Config(), schema))
	return checkCurrentSchema(current, err, schema, poolModeOf(pool.Config()))
}
