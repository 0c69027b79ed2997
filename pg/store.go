package pg

import (
	"cmp"
	"context"
	"fmt"
	"log/slog"
	"time"

	"github.com/jackc/pgx/v5/pgxpool"
	"github.com/sessiondb/sessiondb/store"
)

// defaultMaxConns is the pool size Open uses when the connection string
// sets none (pool_max_conns). A process's plain appends use at most three
// connections, however many goroutines append: maxBatches batches in
// flight (appendbatch.go) and one for appends that wait aside for a row
// another transaction holds; the fourth serves reads and the other writes
// meanwhile. More connections help concurrent reads and searches, not
// appends. Several processes on one server: each holds up to
// pool_max_conns connections, so processes × pool_max_conns must stay
// below the server's max_connections less its reserved ones (100 − 3 by
// default: 24 processes at 4). docs/PERFORMANCE.md, "PostgreSQL writes
// that scale".
const defaultMaxConns = 4

// defaultOpenPatience is Options.OpenPatience's default.
const defaultOpenPatience = 20 * time.Second

// Options configure a PostgreSQL store. The zero value is the recommended
// configuration.
type Options struct {
	// Schema is the schema the store lives in, created when missing. Empty
	// means the connection string's search_path, else public.
	Schema string
	// WritePatience, TranscriptPatience and ActivityPatience are the
	// domain's patience budgets (see store.Options). Here patience bounds
	// the wait for a pool connection and for other transactions' locks;
	// WritePatience also bounds how long a read waits for a server that is
	// restarting or not answering.
	WritePatience      time.Duration
	TranscriptPatience time.Duration
	ActivityPatience   time.Duration
	// TrustedOwners names the roles, besides the connecting role and the
	// roles it is a member of, that may own the store's schema or the
	// objects in it. A schema's owner can read and drop everything in it
	// whatever is granted, so Open refuses a schema another role owns
	// (ErrUntrustedOwner, naming the owner) unless that role is named here:
	// say a DBA's role that created the schema for the application.
	TrustedOwners []string
	// OpenPatience bounds how long Open waits for what others hold: the
	// migration lock of a store another process is migrating, and the
	// server's locks on the store's tables; and for a server that is
	// restarting or not answering, which it tries again meanwhile.
	// Default 20 s, as on SQLite. Past it Open gives up with ErrLocked
	// (a *LockedError, whose message says which it waited for).
	OpenPatience time.Duration
	// NoMigrate opens the store without migrating it, for fleets that
	// migrate as a deploy step of their own (MigrateStore, `sessiondb
	// migrate`): a schema older than this build is refused with a
	// *SchemaBehindError naming both versions (a missing schema is at
	// version 0), a newer one with ErrSchemaTooNew. Nothing is created,
	// locked or written by a refused open.
	NoMigrate bool
	// ReadOnly opens the store for reading only, as Open does by itself
	// on a hot standby: no migration (as NoMigrate), and every write
	// returns ErrReadOnly. For a replica's DSN, or a reader that must
	// never write.
	ReadOnly bool
	// Replicas are connection strings of hot standbys of the primary
	// (streaming replicas) that the store's reads go to — listings,
	// conversations, search — while writes go to the primary; a read
	// still sees every write this Store acknowledged before it (a replica
	// that has not replayed that far is skipped for the primary), while
	// other processes' writes appear there with the replication lag
	// (readroute.go). Open waits, within OpenPatience, for each to replay
	// the primary's schema. Open only (not OpenPool).
	Replicas []string
	// SpoolDir is where Import spools its input; default the system's
	// temporary directory.
	SpoolDir string
	// Logger receives warnings. Default slog.Default().
	Logger *slog.Logger
	// WatchByPolling makes watchers (Store.WatchMessages) poll every 50 ms
	// instead of LISTENing for the commits' NOTIFY. A connection string
	// with pool_mode=transaction (PgBouncer in transaction mode, which
	// hands a LISTEN's server connection to other clients so its
	// notifications are lost) polls by itself, as does a standby, which
	// refuses LISTEN; set it behind any other proxy that pools
	// transactions.
	WatchByPolling bool
}

func (o Options) domain() store.Options {
	return store.Options{WritePatience: o.WritePatience, TranscriptPatience: o.TranscriptPatience,
		ActivityPatience: o.ActivityPatience, SpoolDir: o.SpoolDir, Logger: o.Logger}
}

// Store is an agent's conversation state in one schema of a PostgreSQL
// database, shared by any number of processes on any number of machines.
// Its domain verbs are package store's, the same on every engine, each a
// method here with its documentation.
type Store struct {
	*store.Store
	eng *engine
}

// Schema names the schema the store lives in.
func (s *Store) Schema() string { return s.eng.schema }

// Open connects to the database connString names (a URL or key=value
// string), creates and migrates the store's schema when needed, and
// returns the store, which owns the connection pool it made. On a hot
// standby it opens read-only instead, without migrating (see
// Options.ReadOnly); Options.NoMigrate forbids migrating anywhere.
func Open(ctx context.Context, connString string, opts Options) (*Store, error) {
	pool, err := newPool(ctx, connString, opts.Schema, defaultMaxConns)
	if err != nil {
		return nil, fmt.Errorf("open: %w", err)
	}
	s, err := open(ctx, pool, true, opts)
	if err != nil {
		pool.Close()
		return nil, err
	}
	if len(opts.Replicas) > 0 {
		patience := opts.OpenPatience
		if patience <= 0 {
			patience = defaultOpenPatience
		}
		rctx, cancel := context.WithTimeout(ctx, patience)
		defer cancel()
		if s.eng.route.replicas, err = openReplicas(rctx, pool, opts.Replicas, s.eng.schema, opts.TrustedOwners); err != nil {
			s.Close()
			return nil, fmt.Errorf("open: %w", err)
		}
	}
	return s, nil
}

// OpenPool opens the store in the schema pool's connections work in (its
// search_path), creating and migrating it when needed. The pool stays the
// caller's: closing the store leaves it open.
func OpenPool(ctx context.Context, pool *pgxpool.Pool, opts Options) (*Store, error) {
	return open(ctx, pool, false, opts)
}

func open(ctx context.Context, pool *pgxpool.Pool, own bool, opts Options) (*Store, error) {
	if !own && len(opts.Replicas) > 0 {
		return nil, fmt.Errorf("open: %w: Options.Replicas works with Open, which makes the replicas' pools", ErrInvalidConfig)
	}
	schema, err := SchemaOf(pool.Config())
	if err != nil {
		return nil, fmt.Errorf("open: %w", err)
	}
	if opts.Schema != "" && opts.Schema != schema {
		return nil, fmt.Errorf("open: %w: Options.Schema is %q but the pool's search_path starts with %q; "+
			"configure the pool with ParseConfig(connString, %q)", ErrInvalidConfig, opts.Schema, schema, opts.Schema)
	}
	eng, err := prepareWithin(ctx, pool, schema, opts)
	if err != nil {
		return nil, fmt.Errorf("open: %w", err)
	}
	eng.pool, eng.ownPool, eng.trusted = pool, own, opts.TrustedOwners
	eng.readPatience = cmp.Or(opts.WritePatience, store.DefaultWritePatience)
	if eng.readOnly != nil {
		cmp.Or(opts.Logger, slog.Default()).Info("sessiondb: opened read-only, without migrating",
			"schema", schema, "standby", eng.standby, "reason", eng.readOnly)
	}
	eng.notify = notifyStatement(schema)
	eng.appends = newAppender(eng)
	// A standby refuses LISTEN; a transaction-pooling proxy loses its
	// notifications (pooler.go).
	eng.newChanges(opts.Logger, opts.WatchByPolling || eng.standby || poolModeOf(pool.Config()) == poolTransaction)
	st, err := store.New(pgDriver{eng}, opts.domain())
	if err != nil {
		return nil, err
	}
	return &Store{Store: st, eng: eng}, nil
}

// prepareWithin readies the pool's store (prepare; on a standby or when
// asked not to migrate, openWithoutMigrating), checks its schema
// (checkOpenSchema) and returns the engine with the guard of its writes
// and whether it is read-only, all within Options.OpenPatience: the
// patience is a budget for the whole open, every wait inside it included.
// Past it the open gives up with a *LockedError; a server setting that
// canceled a statement is named (ServerTimeoutError).
func prepareWithin(ctx context.Context, pool *pgxpool.Pool, schema string, opts Options) (*engine, error) {
	patience := opts.OpenPatience
	if patience <= 0 {
		patience = defaultOpenPatience
	}
	pctx, cancel := context.WithTimeout(ctx, patience)
	defer cancel()
	var eng *engine
	var err error
	// Every step is safe to run again (the migrations' transactions roll
	// back with a lost connection), so a server restarting or shutting
	// down under the open costs a rerun, as it does a write (tx.go).
	for attempt := 0; ; attempt++ {
		eng, err = prepareOnce(pctx, pool, schema, opts)
		if err == nil || !unreachable(err) || sleep(pctx, reconnectBackoff(attempt)) != nil {
			break
		}
	}
	if err != nil && ctx.Err() == nil && pctx.Err() != nil {
		return nil, &LockedError{Schema: schema, Patience: patience, Err: err}
	}
	if err != nil {
		return nil, mapError(explainTimeout(ctx, pool, err))
	}
	return eng, nil
}

// prepareOnce is one run of prepareWithin's steps.
func prepareOnce(pctx context.Context, pool *pgxpool.Pool, schema string, opts Options) (*engine, error) {
	eng := &engine{schema: schema, pin: pinSchema(pool.Config(), schema)}
	var err error
	eng.readOnly, eng.standby, err = readOnlyReason(pctx, pool, opts)
	switch {
	case err != nil:
	case eng.standby:
		err = openWithoutMigrating(pctx, pool, schema, opts.TrustedOwners,
			"the server is a hot standby, which cannot be migrated (migrate the primary; the standby replays it)")
	case opts.ReadOnly:
		err = openWithoutMigrating(pctx, pool, schema, opts.TrustedOwners, "Options.ReadOnly forbids migrating it")
	case opts.NoMigrate:
		err = openWithoutMigrating(pctx, pool, schema, opts.TrustedOwners, "Options.NoMigrate forbids migrating it")
	default:
		eng.migration, _, err = prepare(pctx, pool, opts.TrustedOwners)
	}
	if err == nil {
		eng.guard, err = newSchemaGuard(pctx, pool, schema)
	}
	if err == nil {
		err = checkOpenSchema(pctx, pool, eng.guard)
	}
	return eng, err
}
